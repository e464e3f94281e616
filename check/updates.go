package check

import (
	"cmp"
	"slices"
	"sort"

	"github.com/graphdiff/graphdiff/compare"
	"github.com/graphdiff/graphdiff/judge"
	"github.com/graphdiff/graphdiff/loaders"
)

// updateIndex finds what measuring a parameter's update needs: both runs'
// entries at the parameter's previous dumped step, and the reference run's
// gradient of it at the step.
type updateIndex struct {
	a, b  map[pairKey]*loaders.Entry
	steps map[string][]int           // the reference run's steps of each parameter, ascending
	grads map[pairKey]*loaders.Entry // the reference run's gradients by step and subject
}

func newUpdateIndex(a, b *loaders.Run) *updateIndex {
	x := &updateIndex{a: map[pairKey]*loaders.Entry{}, b: map[pairKey]*loaders.Entry{},
		steps: map[string][]int{}, grads: map[pairKey]*loaders.Entry{}}
	for _, e := range a.Entries {
		if e.Step != loaders.NoStep && e.Kind == loaders.KindParam {
			x.a[pairKey{e.Step, e.Name}] = e
			x.steps[e.Name] = append(x.steps[e.Name], e.Step)
		}
	}
	if len(x.a) == 0 { // no parameter, no update to measure
		return x
	}
	for _, e := range a.Entries {
		if e.Step != loaders.NoStep && e.Kind == loaders.KindGrad {
			x.grads[pairKey{e.Step, loaders.Subject(e.Name)}] = e
		}
	}
	for _, s := range x.steps {
		sort.Ints(s)
	}
	for _, e := range b.Entries {
		if e.Step != loaders.NoStep && e.Kind == loaders.KindParam {
			x.b[pairKey{e.Step, e.Name}] = e
		}
	}
	return x
}

// job returns the update job of parameter pair pe at step, and false when
// the pair has no previous step in both runs with its shape and dtypes.
func (x *updateIndex) job(step int, name string, pe pairEntries) (compare.UpdateJob, bool) {
	steps := x.steps[name]
	i := sort.SearchInts(steps, step)
	if i == 0 {
		return compare.UpdateJob{}, false
	}
	prev := pairKey{steps[i-1], name}
	pa, pb := x.a[prev], x.b[prev]
	same := func(p, c *loaders.Entry) bool {
		return p != nil && p.DType == c.DType && slices.Equal(p.Shape, c.Shape) && p.FortranOrder == c.FortranOrder
	}
	if !same(pa, pe.a) || !same(pb, pe.b) || !same(pe.b, pe.a) {
		return compare.UpdateJob{}, false
	}
	j := compare.UpdateJob{PrevA: pa.Tensor, CurA: pe.a.Tensor, PrevB: pb.Tensor, CurB: pe.b.Tensor}
	if g := x.grads[pairKey{step, loaders.Subject(name)}]; g != nil && slices.Equal(g.Shape, pe.a.Shape) &&
		g.FortranOrder == pe.a.FortranOrder && g.DType.IsFloat() {
		j.Grad = g.Tensor
	}
	return j, true
}

// measureUpdates measures the updates of group's compared parameter pairs
// and sets their Update (left nil where one cannot be measured: the pair is
// then judged alone).
func measureUpdates(x *updateIndex, group []*judge.TensorResult, pairs map[*judge.TensorResult]pairEntries, workers int) {
	var jobs []compare.UpdateJob
	var owners []*judge.TensorResult
	for _, t := range group {
		if t.Kind != loaders.KindParam || t.Step == loaders.NoStep || t.Metrics == nil || t.Status != "" ||
			!t.A.DType.IsFloat() || !t.B.DType.IsFloat() {
			continue
		}
		if j, ok := x.job(t.Step, t.Name, pairs[t]); ok {
			jobs = append(jobs, j)
			owners = append(owners, t)
		}
	}
	for i, o := range compare.Updates(jobs, workers) {
		owners[i].Update = o.Update
	}
}

// judgeStep decides the statuses of one step's compared pairs (judge.Step,
// and judge.Tensor for the pairs it leaves) in context c and returns the
// step's facts.
// Pairs whose status is already set (not compared) are left as they are.
func judgeStep(group []*judge.TensorResult, c judge.Context) judge.StepFacts {
	facts, decisions := judge.Step(group, c)
	for _, t := range group {
		if t.Status != "" || t.Metrics == nil {
			continue
		}
		d, ok := decisions[t]
		if !ok {
			d = judge.Tensor(t)
		}
		t.Status, t.MaxRelL2, t.MaxMismatchFraction, t.Reasons = d.Status, d.MaxRelL2, d.MaxMismatchFraction, d.Reasons
	}
	return facts
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
