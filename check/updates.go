package check

import (
	"slices"
	"sort"

	"github.com/graphdiff/graphdiff/compare"
	"github.com/graphdiff/graphdiff/loaders"
	"github.com/graphdiff/graphdiff/tolerances"
)

// updateIndex finds what measuring a parameter's update needs: both runs'
// entries at the parameter's previous dumped step, and the reference run's
// gradient of it at the step, or, where the run dumped no gradient at
// that step at all, the moment of the reference run's optimizer that carries it
// (loaders.Entry.MomentParam: Adam's exp_avg, SGD's momentum_buffer,
// saved in the same file as the parameter), whose elements are the gradient's
// size over the last steps.
type updateIndex struct {
	a, b    map[pairKey]*loaders.Entry
	steps   map[string][]int           // the reference run's steps of each parameter, ascending
	grads   map[pairKey]*loaders.Entry // the reference run's gradients by step and subject
	moments map[pairKey]*loaders.Entry // the reference run's moments by step and parameter entry name
}

func newUpdateIndex(a, b *loaders.Run) *updateIndex {
	x := &updateIndex{a: map[pairKey]*loaders.Entry{}, b: map[pairKey]*loaders.Entry{},
		steps: map[string][]int{}, grads: map[pairKey]*loaders.Entry{}, moments: map[pairKey]*loaders.Entry{}}
	for _, e := range a.Entries {
		if e.Step != loaders.NoStep && stateful(e.Kind) {
			x.a[pairKey{e.Step, e.Name}] = e
			x.steps[e.Name] = append(x.steps[e.Name], e.Step)
		}
	}
	if len(x.a) == 0 { // no parameter, no update to measure
		return x
	}
	gradSteps := map[int]bool{}
	for _, e := range a.Entries {
		if e.Step != loaders.NoStep && e.Kind == loaders.KindGrad {
			x.grads[pairKey{e.Step, loaders.Subject(e.Name)}] = e
			gradSteps[e.Step] = true
		}
	}
	for _, e := range a.Entries {
		if e.Step == loaders.NoStep || gradSteps[e.Step] {
			continue
		}
		if p := e.MomentParam(); p != "" {
			x.moments[pairKey{e.Step, p}] = e
		}
	}
	for _, s := range x.steps {
		sort.Ints(s)
	}
	for _, e := range b.Entries {
		if e.Step != loaders.NoStep && stateful(e.Kind) {
			x.b[pairKey{e.Step, e.Name}] = e
		}
	}
	return x
}

// job returns the update job of parameter pair pe at step, and false when
// the pair has no previous step in both runs with its shape and dtypes.
// Its epsilon is the coarser of the parameter's own dtype's and eps (the
// precision's ParamEpsilon: bfloat16's for a bfloat16 model saved as
// float32).
func (x *updateIndex) job(step int, name string, pe pairEntries, eps float64) (compare.UpdateJob, bool) {
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
	j := compare.UpdateJob{PrevA: pa.Tensor, CurA: pe.a.Tensor, PrevB: pb.Tensor, CurB: pe.b.Tensor, Epsilon: max(eps, tolerances.Epsilon(pe.a.Meta().Effective()))}
	g := x.grads[pairKey{step, loaders.Subject(name)}]
	if g == nil {
		g = x.moments[pairKey{step, name}]
	}
	if g != nil && slices.Equal(g.Shape, pe.a.Shape) && g.FortranOrder == pe.a.FortranOrder && g.DType.IsFloat() {
		j.Grad = g.Tensor
	}
	return j, true
}

// stateful reports whether tensors of kind k carry state from one step to
// the next, whose update between dumped steps is measured: parameters,
// and tensors of no kind word (buffers, EMA weights, optimizer state).
func stateful(k loaders.Kind) bool {
	return k == loaders.KindParam || k == loaders.KindTensor
}
