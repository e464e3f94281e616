package diagnose

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/graphdiff/graphdiff/loaders"
)

// CapturedBranch is the ID of the cause "a Python if decided at capture".
const CapturedBranch = "captured_branch"

// capturedBranchCause is what `graphdiff explain captured_branch` prints.
var capturedBranchCause = Explanation{
	ID:    CapturedBranch,
	Title: "a Python if decided at capture",
	What: `Python control flow runs once, at capture. A condition on the step counter,
a schedule, a data-dependent value or Python's random module (LayerDrop or
stochastic depth drawing random.random() to skip a layer) picks one branch,
and every replay repeats it.`,
	Signature: `The runs agree exactly for several steps and break at one step — when the
eager run takes the other branch — by a term that is not proportional to the
eager values (a loss term switched on or off, a layer skipped or kept). A
random decision breaks at the first step whose draw differs from the
capture's, often the first replay (then it looks like frozen_rng).`,
	Confirm: `Find Python conditions in the captured code that depend on the step, on
tensor values (.item(), bool(tensor)) or on random.random(); log the branch
taken at each step in eager.`,
	Fix: `Capture one graph per branch and choose the graph in Python, or express the
branch on the device (torch.where, multiplying by a 0/1 tensor; for LayerDrop,
a Bernoulli mask drawn with torch's generator inside the graph).`,
}

// capturedBranch: several steps agree exactly, then the runs break apart at
// one step by a difference that is not a scale factor.
//
// Prediction: the graph computes the branch taken at capture; where eager
// takes the other one, the graph computes another function: the runs
// agree until that step and then break by a difference that is no scale
// of eager's (a scale is captured_scalar), in the loss's level and the
// gradients alike (only the loss, for a term whose gradient is small).
// Inference dumps (outputs alone) cannot test it: a decoding step that
// reads a cache rebuilt after capture, or a number frozen at capture,
// breaks the same way, so there it is not named. Nor is it where the
// dumps skip steps before the break (gapBefore): the step the runs part
// at is not in them, and a one-step difference (a batch of another size)
// carried by the parameters lasts as a branch's does.
func capturedBranch(f *facts) *Cause {
	if f.div == loaders.NoStep || len(f.s.steps) == 0 || f.explained(CapturedScalar, OutputAliasing, DynamicShape, GradsZeroNotNone) >= 0.6 {
		return nil
	}
	var before []int
	for _, k := range f.s.steps {
		if k < f.div {
			before = append(before, k)
		}
	}
	if len(before) < 2 {
		return nil // a break right after capture is more likely something the capture froze
	}
	if f.inference() {
		// outputs alone cannot tell another function from the same one
		// reading another cache (a cache rebuilt after capture) or a
		// number frozen at capture: the unexplained answer lists them
		return nil
	}
	if f.gapBefore() > 1 {
		// the dumps skip the steps between the last agreeing one and the
		// break: the runs may have parted at any of them, and a
		// difference the parameters carry from a skipped step lasts as
		// another function's would (the unexplained answer says which
		// dumps would tell)
		return nil
	}
	bitwise := true
	for _, k := range before {
		for kind := range f.s.kinds {
			if a, b := f.s.get(f.s.a, k, kind), f.s.get(f.s.b, k, kind); a != nil && relL2(a, b) != 0 {
				bitwise = false
			}
		}
	}
	// A branch flips at one step: the difference must jump, not grow into
	// the threshold (the kind that failed first, 10× its previous step).
	if !bitwise {
		kind := f.r.FirstDivergence.Kind
		p, _ := f.s.prev(f.div)
		a, ap, b, bp := f.four(kind, f.div, p)
		if a == nil || relL2(ap, bp) > 0.1*relL2(a, b) {
			return nil
		}
	}
	var ev evidence
	agree := "agree within tolerance"
	if bitwise {
		agree = "agree bit for bit"
	}
	ev.add("steps %s %s; step %d breaks: %s", steps(before), agree, f.div, strings.Join(f.r.FirstDivergence.Reasons, "; "))
	if next, after, one := f.oneStepBreak(); len(after) > 0 && !one {
		most := slices.MaxFunc(after, func(x, y afterBreak) int { return cmp.Compare(x.r1, y.r1) })
		ev.add("at step %d the %s still differ by %s of the break's difference: the graph keeps computing another function", next, kindWord(most.kind), g(most.r1))
	}
	conf := 0.6
	if bitwise {
		conf = 0.75
	}
	a, b := f.s.get(f.s.a, f.div, loaders.KindGrad), f.s.get(f.s.b, f.div, loaders.KindGrad)
	switch {
	case a != nil && f.lossTermOnly():
		// the loss changed and the gradients did not: a term of the loss
		// whose gradient is small, switched by a branch or weighted by a
		// number frozen at capture — the losses alone cannot tell which
		conf = min(conf, 0.5)
		ev.add("the gradients at step %d agree within their limit (cosine %.4f, norm ratio %s) while the loss differs: a term of the loss changed, switched by a branch or weighted by a Python number frozen at capture (captured_scalar); not dumped, and would tell them apart: the loss's terms apart, or the weight the graphed step read", f.div, cosine(a, b), g(norm(b)/norm(a)))
	case a != nil:
		ev.add("the gradients at step %d are not a scale of the eager ones (cosine %.4f, norm ratio %s), so not a changed scalar", f.div, cosine(a, b), g(norm(b)/norm(a)))
	default:
		conf -= 0.15
		ev.add("%s (to tell a branch from a scalar that changed at step %d)", f.missing(loaders.KindGrad, loaders.KindParam), f.div)
	}
	if line := f.lossFluctuates(); line != "" {
		// a function changed at the break changes each batch's loss
		// alike; draws fresh in eager and fixed in the graph do not
		conf -= 0.15
		f.fluctuates = line
		ev.add("%s", line)
	}
	if !f.s.kinds[loaders.KindInput] && !f.s.kinds[loaders.KindOutput] {
		// a batch of another size at step div (dynamic_shape) breaks the
		// same way; only its inputs' or outputs' shapes show it
		conf = min(conf, 0.6)
		ev.add("not dumped, and would tell a branch from a batch of another size at step %d (dynamic_shape): inputs or outputs", f.div)
	}
	return &Cause{ID: CapturedBranch, Confidence: conf, Evidence: ev}
}

// lossTermOnly reports whether, at the first divergent step, the loss
// failed while the gradients (dumped) did not: a term of the loss whose
// gradient is small changed.
func (f *facts) lossTermOnly() bool {
	return f.s.get(f.s.a, f.div, loaders.KindGrad) != nil && !slices.Contains(f.diverged[loaders.KindGrad], f.div) &&
		slices.Contains(f.diverged[loaders.KindLoss], f.div)
}

// fluctuationSpread is the most the loss's relative difference from eager
// may vary, max over min, over the steps from a break on for the break to
// read as one function changed for another: each batch's loss then moves
// alike, with one sign (the labelled branches and weights frozen at
// capture vary 1.06–1.5×, except a temperature, 3.1×); random values
// drawn fresh in eager and fixed in the graph move it by what the draws
// do (4–1600× in the labelled frozen draws, or with signs that change).
const fluctuationSpread = 2

// lossFluctuates returns the evidence that the loss's difference from
// eager fluctuates from the first divergent step on, at three steps or
// more, as random draws make it: its sign changes, or its relative size
// varies more than fluctuationSpread times; "" when it does not, or
// fewer than three losses were dumped.
func (f *facts) lossFluctuates() string {
	var rel []float64
	signs := map[bool]int{}
	for _, k := range f.s.steps {
		a, b := f.s.get(f.s.a, k, loaders.KindLoss), f.s.get(f.s.b, k, loaders.KindLoss)
		if k < f.div || len(a) != 1 || len(b) != 1 || !allFinite(a, b) || a[0] == 0 {
			continue
		}
		rel = append(rel, math.Abs(b[0]-a[0])/math.Abs(a[0]))
		signs[b[0] > a[0]]++
	}
	if len(rel) < 3 || slices.Min(rel) == 0 {
		return ""
	}
	spread := slices.Max(rel) / slices.Min(rel)
	switch {
	case signs[true] > 0 && signs[false] > 0:
		return fmt.Sprintf("the graphed loss is above the eager one at %d and below it at %d of the %d steps from step %d on: a difference that changes sign, as random values drawn fresh in eager and fixed in the graph give, not one function changed for another", signs[true], signs[false], len(rel), f.div)
	case spread > fluctuationSpread:
		return fmt.Sprintf("the loss's relative difference from eager varies %s× over the %d steps from step %d on: more than one function changed for another moves each batch's loss, as random values drawn fresh in eager and fixed in the graph do", g(spread), len(rel), f.div)
	}
	return ""
}

// gapBefore returns how many training steps lie between the first
// divergent step and the dumped step before it (1 for dumps of every
// step), by the steps' numbers; 0 where the first divergent step is the
// first dumped one.
func (f *facts) gapBefore() int {
	if p, ok := f.s.prev(f.div); ok && f.div != loaders.NoStep {
		return f.div - p
	}
	return 0
}
