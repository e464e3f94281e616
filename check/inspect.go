package check

import (
	"sort"

	"github.com/graphdiff/graphdiff/compare"
	"github.com/graphdiff/graphdiff/loaders"
)

// TensorSummary is one row of an inspection: a run entry and its values'
// statistics.
type TensorSummary struct {
	Name string
	Step int
	Kind loaders.Kind
	loaders.Meta
	compare.Summary
}

// Inspection is what `graphdiff inspect` reports about one run.
type Inspection struct {
	// Root is the run directory or file inspected.
	Root string
	// Manifest is the run's manifest, nil when it has none.
	Manifest *loaders.Manifest
	// Tensors are the readable tensors, in entry order (step, kind, name).
	Tensors []TensorSummary
	// Errors are the files and tensors that could not be read, each an
	// *loaders.Error naming the file; the rest are still listed.
	Errors []error
}

// Inspect loads the run at path (a run directory or a tensor file) and
// summarizes every tensor with up to jobs goroutines. It fails only when
// path does not exist or a directory cannot be listed; unreadable files
// and tensors are listed in the Inspection.
//
// A run's .npy files are read a step at a time, each opened once (see
// loaders.LoadDeferred): the summaries are those of a run Load read.
func Inspect(path string, lo loaders.Options, jobs int) (Inspection, error) {
	load := loaders.Load
	if deferReading {
		load = loaders.LoadDeferred
	}
	run, err := load(path, lo)
	if err != nil {
		return Inspection{}, err
	}
	return inspect(run, jobs), nil
}

// inspect summarizes every tensor of a loaded run, a step at a time.
func inspect(run *loaders.Run, jobs int) Inspection {
	ins := Inspection{Root: run.Root, Manifest: run.Manifest, Errors: append([]error(nil), run.Errors...)}
	for _, step := range entriesByStep(run.Entries) {
		for _, err := range loaders.Resolve(step) {
			if err != nil {
				ins.Errors = append(ins.Errors, err) // as Load reports the file
			}
		}
		var read []*loaders.Entry
		var tensors []*loaders.Tensor
		for _, e := range step {
			if !e.Deferred() {
				read, tensors = append(read, e), append(tensors, e.Tensor)
			}
		}
		sums, errs := compare.Summarize(tensors, jobs)
		for i, e := range read {
			if errs[i] != nil {
				ins.Errors = append(ins.Errors, errs[i])
			} else {
				ins.Tensors = append(ins.Tensors, TensorSummary{Name: e.Name, Step: e.Step, Kind: e.Kind, Meta: *e.Meta(), Summary: sums[i]})
			}
			e.Release()
		}
	}
	sort.SliceStable(ins.Errors, func(i, j int) bool { return ins.Errors[i].Error() < ins.Errors[j].Error() })
	return ins
}

// entriesByStep splits entries, sorted by step, into runs of one step.
func entriesByStep(es []*loaders.Entry) [][]*loaders.Entry {
	var out [][]*loaders.Entry
	for i := 0; i < len(es); {
		j := i + 1
		for j < len(es) && es[j].Step == es[i].Step {
			j++
		}
		out = append(out, es[i:j])
		i = j
	}
	return out
}
