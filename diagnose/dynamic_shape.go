package diagnose

import (
	"cmp"
	"math"
	"slices"
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
	if n == 0 || len(ks) == 1 && ks[0] == loaders.NoStep && !f.stepped() {
		// two tensors alone, outside any step (two files compared): a
		// difference of shape is the verdict, but no batch of another
		// size at some steps while the others agree, which is the cause
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

// stepped reports whether some pair of the comparison belongs to a step.
func (f *facts) stepped() bool {
	return slices.ContainsFunc(f.r.Tensors, func(t *judge.TensorResult) bool { return t.Step != loaders.NoStep })
}

// oneStepRatio is the most the difference after a break may be, as a
// fraction of the break's, for the break to be one step's: it halves. A
// function changed from the break on (a branch, a scalar) keeps a
// difference of the break's order at the next step (0.77–1.13 of it in
// the losses of the labelled branches, 0.91 and more in their gradients);
// one step's other function leaves only what the weights' different
// update carries, which starts far below the break (0.008–0.42 of it at
// the next step, in the loss or the gradients, of the labelled partial
// batches of ResNet, TCN and the tabular model) and, though the runs then
// drift apart, stays below half of it the step after (0.04–0.42). TestOneStepMargins checks those margins on
// every labelled branch and partial batch.
const oneStepRatio = 0.5

// afterBreak is how the difference of one kind goes on after a break: its
// ratio to the break's difference at the next dumped step (r1) and at the
// one after (r2, NaN when not dumped).
type afterBreak struct {
	kind   loaders.Kind
	r1, r2 float64
}

// oneStepBreak reports whether the runs break at one step only: at least
// two steps agree before it (bit for bit or within tolerance: the step is
// not the first replay, where values frozen at capture act); the step
// after it is dumped (the margins below are one step's: a break first
// seen after a gap in the dumps began somewhere in the gap, and the
// difference the next dump shows has run for more steps than one); at
// the next step the difference of the loss and of the gradients (or, with
// neither, of the outputs), those dumped, is below the break's, and under
// oneStepRatio of it in one of them; and at the step after, where dumped,
// under oneStepRatio of it in every one. It returns the next step and
// each measured kind's ratios (none when the break cannot be measured).
func (f *facts) oneStepBreak() (next int, after []afterBreak, ok bool) {
	if f.div == loaders.NoStep || f.r.FirstDivergence == nil {
		return 0, nil, false
	}
	before := 0
	for _, k := range f.s.steps {
		if k < f.div {
			before++
		}
	}
	next, ok = f.s.next(f.div)
	if before < 2 || !ok || next != f.div+1 {
		return 0, nil, false // (a break seen across a gap in the dumps may have begun at any step of it)
	}
	next2, twoAfter := f.s.next(next)
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
	halves := false
	ok = true
	for _, k := range kinds {
		at := diff(k, f.div)
		ab := afterBreak{kind: k, r1: diff(k, next) / at, r2: math.NaN()}
		if f.aliased[k] || !(at > 0) || !finite(ab.r1) {
			continue
		}
		if twoAfter {
			ab.r2 = diff(k, next2) / at
		}
		after = append(after, ab)
		halves = halves || ab.r1 < oneStepRatio
		if ab.r1 >= 1 || finite(ab.r2) && ab.r2 >= oneStepRatio {
			ok = false // kept, or back near the break's difference
		}
	}
	return next, after, ok && halves
}

// oneStepShape names dynamic_shape where no inputs or outputs were dumped
// (whose shapes would show it) and the runs break at one step only.
func (f *facts) oneStepShape() *Cause {
	if f.s.kinds[loaders.KindInput] || f.s.kinds[loaders.KindOutput] || f.inference() {
		return nil
	}
	next, after, ok := f.oneStepBreak()
	if !ok {
		return nil
	}
	least := slices.MinFunc(after, func(x, y afterBreak) int { return cmp.Compare(x.r1, y.r1) })
	var ev evidence
	ev.add("the runs agree before step %d and break there: %s", f.div, strings.Join(f.r.FirstDivergence.Reasons, "; "))
	ev.add("at step %d the %s differ by %s of that: the graph computed another function at step %d alone, as a batch of another size there (an epoch's last, copied into part of the static input) makes it; a branch decided at capture would keep the difference", next, kindWord(least.kind), g(least.r1), f.div)
	ev.add("not dumped, and would show it as a shape difference: inputs or outputs")
	f.oneStep = true
	return &Cause{ID: DynamicShape, Confidence: 0.6, Evidence: ev}
}
