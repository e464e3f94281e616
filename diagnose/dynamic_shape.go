package diagnose

import (
	"math"
	"sort"
	"strings"

	"github.com/graphdiff/graphdiff/judge"
	"github.com/graphdiff/graphdiff/loaders"
)

// DynamicShape is the ID of the cause "shape differs from the captured one".
const DynamicShape = "dynamic_shape"

// dynamicShapeCause is what `graphdiff explain dynamic_shape` prints.
var dynamicShapeCause = Explanation{
	ID:    DynamicShape,
	Title: "shape differs from the captured one",
	What: `A graph is captured for fixed shapes. Batches of another size are padded,
truncated or copied into part of the static input, and the rest of the
static tensor keeps stale values.`,
	Signature: `Tensors whose shapes differ between the runs at some steps, or a tail of a
tensor that never changes in the graphed run.`,
	Confirm: `Log the batch size at every step; compare with the captured shape.`,
	Fix: `Bucket shapes and capture one graph per bucket, pad inputs to the captured
shape with masking, or drop the last incomplete batch (drop_last=True).`,
}

// dynamicShape: pairs whose shapes differ between the runs.
//
// Prediction: a batch of another size reaches the graph as the captured
// shape (padded, cut, or a tail that never changes), so what is dumped of
// it differs in shape, or, without inputs and outputs, the runs break at
// that step as a branch would (captured_branch lists it). The batch of
// another size is usually one step's (an epoch's last): from the next
// step on the graph computes the same function as eager again, so the
// difference there is only what one step's different update carries,
// far below the break's (oneStepBreak), where a branch decided at capture
// keeps computing another function and the difference stays.
func dynamicShape(f *facts) *Cause {
	if c := f.oneStepShape(); c != nil {
		return c
	}
	var ev evidence
	var ks []int
	n := 0
	for _, t := range f.r.Tensors {
		if t.Status != judge.StatusShapeMismatch || (t.Step == loaders.NoStep && curveLength(t) && f.explained(MissingSteps) >= 0.6) {
			continue // a loss curve as long as each run's steps
		}
		n++
		ks = appendUnique(ks, t.Step)
		if n <= 3 {
			ev.add("%s at %s: shape %s in the reference, %s in the graphed run", t.Name, stepName(t.Step),
				loaders.FormatShape(t.A.Shape), loaders.FormatShape(t.B.Shape))
		}
	}
	if n == 0 {
		return nil
	}
	sort.Ints(ks)
	names := make([]string, len(ks))
	for i, k := range ks {
		names[i] = stepName(k)
	}
	ev.add("%d tensor pairs differ in shape, at %s; the other steps agree in shape", n, strings.Join(names, ", "))
	return &Cause{ID: DynamicShape, Confidence: 0.95, Evidence: ev}
}

// oneStepRatio is the most the difference at the step after a break may
// be, as a fraction of the break's, in the loss or the gradients, for the
// break to be one step's: it halves. A function changed from the break on
// (a branch, a scalar) keeps a difference of the break's order at the
// next step (0.77–1.13 of it in the losses of the labelled branches, 0.91
// and more in their gradients); one step's other function leaves only
// what the weights' one different update carries, which shrinks (0.05 and
// 0.42 of it in the losses of the labelled partial batches, ResNet and
// TCN). TestOneStepMargins checks those margins on the labelled runs.
const oneStepRatio = 0.5

// oneStepBreak reports whether the runs break at one step only: at least
// two steps agree before it (bit for bit or within tolerance: the step is
// not the first replay, where values frozen at capture act); at the next
// dumped step the difference of the loss and of the gradients (or, with
// neither, of the outputs), those dumped, is below the break's and in one
// of them under oneStepRatio of it; and at the step after that, where
// dumped, neither has grown back. It returns the next step, the kind that
// halved and its ratio (of the first kind measured when none did, or 0
// and "" when none could be measured).
func (f *facts) oneStepBreak() (next int, kind loaders.Kind, ratio float64, ok bool) {
	if f.div == loaders.NoStep || f.r.FirstDivergence == nil {
		return 0, "", 0, false
	}
	before := 0
	for _, k := range f.s.steps {
		if k < f.div {
			before++
		}
	}
	next, ok = f.s.next(f.div)
	if before < 2 || !ok {
		return 0, "", 0, false
	}
	after, twoAfter := f.s.next(next)
	diff := func(kind loaders.Kind, k int) float64 {
		a, b := f.s.get(f.s.a, k, kind), f.s.get(f.s.b, k, kind)
		if a == nil || b == nil || !allFinite(a, b) {
			return math.NaN()
		}
		return relL2(a, b)
	}
	kinds := []loaders.Kind{loaders.KindLoss, loaders.KindGrad}
	if !f.s.kinds[loaders.KindLoss] && !f.s.kinds[loaders.KindGrad] {
		kinds = f.outputKinds()
	}
	ok, measured := true, false
	for _, k := range kinds {
		at, r1 := diff(k, f.div), diff(k, next)/diff(k, f.div)
		if f.aliased[k] || !(at > 0) || !finite(r1) {
			continue
		}
		if !measured || r1 < ratio {
			kind, ratio = k, r1
		}
		measured = true
		if r2 := diff(k, after) / at; r1 >= 1 || twoAfter && finite(r2) && r2 > r1 {
			ok = false // kept, or grew back: no one-step break
		}
	}
	return next, kind, ratio, ok && measured && ratio < oneStepRatio
}

// oneStepShape names dynamic_shape where no inputs or outputs were dumped
// (whose shapes would show it) and the runs break at one step only.
func (f *facts) oneStepShape() *Cause {
	if f.s.kinds[loaders.KindInput] || f.s.kinds[loaders.KindOutput] || f.inference() {
		return nil
	}
	next, kind, r, ok := f.oneStepBreak()
	if !ok {
		return nil
	}
	var ev evidence
	ev.add("the runs agree before step %d and break there: %s", f.div, strings.Join(f.r.FirstDivergence.Reasons, "; "))
	ev.add("at step %d the %s differ by %s of that: the graph computed another function at step %d alone, as a batch of another size there (an epoch's last, copied into part of the static input) makes it; a branch decided at capture would keep the difference", next, kindWord(kind), g(r), f.div)
	ev.add("not dumped, and would show it as a shape difference: inputs or outputs")
	f.oneStep = true
	return &Cause{ID: DynamicShape, Confidence: 0.6, Evidence: ev}
}
