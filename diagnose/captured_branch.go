package diagnose

import (
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
a schedule or a data-dependent value picks one branch, and every replay
repeats it.`,
	Signature: `The runs agree exactly for several steps and break at one step — when the
eager run takes the other branch — by a term that is not proportional to the
eager values (a loss term switched on or off, a tensor constantly zero).`,
	Confirm: `Find Python conditions in the captured code that depend on the step or on
tensor values (.item(), bool(tensor)).`,
	Fix: `Capture one graph per branch and choose the graph in Python, or express the
branch on the device (torch.where, multiplying by a 0/1 tensor).`,
}

// capturedBranch: several steps agree exactly, then the runs break apart at
// one step by a difference that is not a scale factor.
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
	conf := 0.6
	if bitwise {
		conf = 0.75
	}
	if a, b := f.s.get(f.s.a, f.div, loaders.KindGrad), f.s.get(f.s.b, f.div, loaders.KindGrad); a != nil {
		ev.add("the gradients at step %d are not a scale of the eager ones (cosine %.4f, norm ratio %s), so not a changed scalar", f.div, cosine(a, b), g(norm(b)/norm(a)))
	} else {
		conf -= 0.15
		ev.add("%s (to tell a branch from a scalar that changed at step %d)", f.missing(loaders.KindGrad, loaders.KindParam), f.div)
	}
	return &Cause{ID: CapturedBranch, Confidence: conf, Evidence: ev}
}
