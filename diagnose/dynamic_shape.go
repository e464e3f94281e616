package diagnose

import (
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
// be, as a fraction of the break's, for the break to be one step's: an
// order of magnitude. A function changed from the break on (a branch, a
// scalar) keeps a difference of the break's order (0.9–1.0 of it in the
// losses of the labelled branches); one step's other function leaves
// what the weights' one different update carries (0.05 of it in the loss
// of an epoch's last batch of 6 rows copied into a static batch of 32).
const oneStepRatio = 0.1

// oneStepBreak reports whether the runs break at one step only: at least
// two steps agree before it (bit for bit or within tolerance: the
// step is not the first replay, where values frozen at capture act), and
// at the next dumped step the difference of the loss (or, without losses,
// of the gradients, or the outputs) is under oneStepRatio of the break's.
// It returns the next step, the kind measured and the ratio.
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
	for _, kind := range append([]loaders.Kind{loaders.KindLoss, loaders.KindGrad}, f.outputKinds()...) {
		a, b := f.s.get(f.s.a, f.div, kind), f.s.get(f.s.b, f.div, kind)
		an, bn := f.s.get(f.s.a, next, kind), f.s.get(f.s.b, next, kind)
		if a == nil || b == nil || an == nil || bn == nil || !allFinite(a, b, an, bn) || f.aliased[kind] {
			continue
		}
		at, after := relL2(a, b), relL2(an, bn)
		if !(at > 0) || !finite(after) {
			return 0, "", 0, false
		}
		return next, kind, after / at, after < oneStepRatio*at
	}
	return 0, "", 0, false
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
