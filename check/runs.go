package check

import (
	"cmp"
	"fmt"
	"slices"
	"sort"

	"github.com/graphdiff/graphdiff/compare"
	"github.com/graphdiff/graphdiff/judge"
	"github.com/graphdiff/graphdiff/loaders"
	"github.com/graphdiff/graphdiff/tolerances"
)

// compared is a comparison of two loaded runs: the judged result, and
// what reading diagnosis' samples needs of it, by the position of each
// of the result's pairs in Tensors: the entries of its two sides, and the
// leading values the comparison kept.
type compared struct {
	result  *judge.Result
	entries []pairEntries
	kept    []kept
}

// pairEntries are the two runs' entries of one pair (nil where a run
// does not hold it, or could not read it).
type pairEntries struct{ a, b *loaders.Entry }

// kept are the leading values of a pair's two sides the comparison kept
// for diagnosis (nil: none).
type kept struct{ a, b []float32 }

// coarserPrecision is returned by runSteps when a part read after the
// precision was decided holds a gradient or a parameter coarser than it.
type coarserPrecision struct {
	decided tolerances.Precision
	found   loaders.DType
	step    int
}

func (e *coarserPrecision) Error() string {
	return fmt.Sprintf("step %s stores gradients or parameters in %s, coarser than the %s decided from the steps read first",
		loaders.StepString(e.step), e.found, e.decided.Model)
}

// runSteps compares run b against the reference run a (and a against
// baseline, when not nil), step by step, and judges each pair and the
// whole run. Unless opts.readFirst, the entries of a and b are read a
// part of a step at a time while the part before is compared
// (stepReader); the precision is then decided from the parts read first,
// and a later part that holds a coarser gradient or parameter ends the
// comparison with a *coarserPrecision.
func runSteps(a, b, baseline *loaders.Run, opts Options) (*compared, error) {
	pr := pairRuns(a, b, opts.Shard)
	rd := newStepReader(pr.held, pr.units, opts.partPairs)
	defer rd.wait() // no reading ahead outlives the comparison
	rd.readFirstParts(opts.readFirst)
	prec := decidePrecision(a, b, opts.Resolver.Overrides.ComputeDType)
	if opts.Planned != nil {
		opts.Planned(len(pr.held))
	}
	st := newStepper(pr, rd, opts, prec, baseline, a, b)
	defer st.releaseMaps()
	progress, done := st.progress()
	defer done()
	st.planHeads()
	ctx := judge.NewContext(prec, opts.Resolver.Run())
	var steps []judge.StepFacts
	for u := range pr.units {
		facts, compared, err := st.compareStep(u, ctx, progress)
		if err != nil {
			return nil, err
		}
		if !compared {
			continue
		}
		steps = append(steps, facts)
		ctx = ctx.Next(facts)
		if opts.FailFast && st.failed(u) {
			if err := st.stopAfter(u); err != nil {
				return nil, err
			}
			break
		}
	}
	return st.finish(a, b, baseline, steps), nil
}

// pairing is a comparison's pairs: those of its shard, in pairing order,
// cut in units of one step, with the runs' unreadable tensors by key and
// the discovery errors that belong to a pair.
type pairing struct {
	a, b             *loaders.Run
	held             []loaders.Pair
	units            [][]int // indexes into held, step by step
	unreadA, unreadB map[pairKey]*loaders.Unreadable
	attached         map[error]bool
}

// pairKey names a pair by step and name.
type pairKey struct {
	Step int
	Name string
}

// pairRuns pairs the tensors of a and b and keeps those of shard. A
// tensor that one run holds and the other could not read is an
// unreadable pair, not a missing or extra one; its error goes with the
// pair (and the pair's shard), not with discovery's.
//
// A decoding step is judged with every earlier step of its sequences (a
// sequence that parted is left out from then on; measureDecodes), so the
// pairs that may be a decoding step's tokens or logits (decodingGroups)
// are held by the shard of their directory, at every step, not each by
// its own step and name.
func pairRuns(a, b *loaders.Run, shard loaders.Shard) pairing {
	pr := pairing{a: a, b: b, unreadA: unreadableByKey(a), unreadB: unreadableByKey(b), attached: map[error]bool{}}
	pairs := loaders.PairRuns(a, b)
	var group map[pairKey]string
	if shard.Count > 1 {
		group = decodingGroups(pairs)
	}
	pr.held = pairs[:0] // kept in place
	for _, p := range pairs {
		key := pairKey{Step: p.Step, Name: p.Name}
		if u := pr.unreadB[key]; p.B == nil && u != nil {
			pr.attached[u.Err] = true
		}
		if u := pr.unreadA[key]; p.A == nil && u != nil {
			pr.attached[u.Err] = true
		}
		if dir, ok := group[key]; ok && shard.Holds(loaders.NoStep, dir) || !ok && shard.Holds(p.Step, p.Name) {
			pr.held = append(pr.held, p)
		}
	}
	order := make([]int, len(pr.held))
	for i := range order {
		order[i] = i
	}
	pr.units = bySteps(order, func(i int) int { return pr.held[i].Step })
	return pr
}

// sides returns what classifying pair i knows of it, given the errors
// that kept its sides from being read a step at a time (errA, errB).
func (pr *pairing) sides(i int, errA, errB error) sides {
	p := pr.held[i]
	key := pairKey{Step: p.Step, Name: p.Name}
	s := sides{Name: p.Name, Step: p.Step, Kind: p.Kind, A: live(p.A), B: live(p.B),
		ErrA: errA, ErrB: errB, RootA: pr.a.Root, RootB: pr.b.Root}
	if u := pr.unreadA[key]; p.A == nil && u != nil {
		s.ErrA = u.Err
	}
	if u := pr.unreadB[key]; p.B == nil && u != nil {
		s.ErrB = u.Err
	}
	return s
}

// unreadableByKey indexes a run's unreadable tensors by step and name.
func unreadableByKey(r *loaders.Run) map[pairKey]*loaders.Unreadable {
	m := make(map[pairKey]*loaders.Unreadable, len(r.Unreadable))
	for _, u := range r.Unreadable {
		m[pairKey{Step: u.Step, Name: u.Name}] = u
	}
	return m
}

// indexRun indexes a run's entries by step and name; nil for no run.
func indexRun(r *loaders.Run) map[pairKey]*loaders.Entry {
	if r == nil {
		return nil
	}
	m := make(map[pairKey]*loaders.Entry, len(r.Entries))
	for _, e := range r.Entries {
		m[pairKey{Step: e.Step, Name: e.Name}] = e
	}
	return m
}

// bySteps groups items by their step, in comparison order: steps
// ascending, step-less items last; each group keeps the items' order.
func bySteps[T any](items []T, step func(T) int) [][]T {
	index := map[int]int{}
	var groups [][]T
	for _, it := range items {
		g, ok := index[step(it)]
		if !ok {
			g = len(groups)
			index[step(it)] = g
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], it)
	}
	slices.SortStableFunc(groups, func(x, y []T) int {
		return cmp.Compare(judge.StepOrder(step(x[0])), judge.StepOrder(step(y[0])))
	})
	return groups
}

// sortedErrors returns errs in the order of their messages, stably.
func sortedErrors(errs []error) []error {
	sort.SliceStable(errs, func(i, j int) bool { return errs[i].Error() < errs[j].Error() })
	return errs
}

// compareJob is the job comparing pair sides e (both read) with settings
// s, keeping up to heads leading values: as many as the pair has, where
// the plan wants all it may of a name not read when it was made.
func compareJob(e pairEntries, s tolerances.Settings, heads int) compare.Job {
	return compare.Job{A: e.a.Tensor, B: e.b.Tensor, Tolerance: s.Tolerance, DType: s.DType,
		Heads: min(heads, int(e.a.Len())*e.a.DType.Components())}
}
