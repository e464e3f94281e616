package check

import (
	"sort"

	"github.com/graphdiff/graphdiff/compare"
	"github.com/graphdiff/graphdiff/loaders"
	"github.com/graphdiff/graphdiff/outcome"
)

// Inspect loads the run at path (a run directory or a tensor file) and
// summarizes every tensor with up to jobs goroutines. It fails only when
// path does not exist or a directory cannot be listed; unreadable files
// and tensors are listed in the Inspection.
//
// A run's .npy files are read a step at a time, each opened once (see
// loaders.LoadDeferred): the summaries are those of a run Load read.
func Inspect(path string, lo loaders.Options, jobs int) (outcome.Inspection, error) {
	return inspectPath(path, lo, jobs, false)
}

// inspectPath is Inspect, with every file read first when readFirst.
func inspectPath(path string, lo loaders.Options, jobs int, readFirst bool) (outcome.Inspection, error) {
	load := loaders.LoadDeferred
	if readFirst {
		load = loaders.Load
	}
	run, err := load(path, lo)
	if err != nil {
		return outcome.Inspection{}, err
	}
	return inspect(run, jobs), nil
}

// inspect summarizes every tensor of a loaded run, a step at a time.
func inspect(run *loaders.Run, jobs int) outcome.Inspection {
	ins := outcome.Inspection{Root: run.Root, Manifest: run.Manifest, Errors: append([]error(nil), run.Errors...)}
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
				ins.Tensors = append(ins.Tensors, outcome.TensorSummary{Name: e.Name, Step: e.Step, Kind: e.Kind, Meta: *e.Meta(), Summary: sums[i]})
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
