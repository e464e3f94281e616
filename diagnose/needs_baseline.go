package diagnose

import (
	"github.com/graphdiff/graphdiff/loaders"
)

// NeedsBaseline is the ID of the warning "differences that only a
// baseline can judge".
const NeedsBaseline = "needs_baseline"

// needsBaselineCause is what `graphdiff explain needs_baseline` prints.
var needsBaselineCause = Explanation{
	ID:    NeedsBaseline,
	Title: "differences that only a baseline can judge (not a cause: a warning)",
	What: `The runs differ from the first dumped step on, a little beyond rounding, in
the gradients' size but not their direction. Rounding amplified by training
looks like this: a chaotic run through normalization layers, TF32 or
bfloat16 noise, or parameters that drifted in steps before the dumps began
(the recipe's warm-up, a resumed run). So does a bug that acts from before
the first dump.`,
	Signature: `The first divergent step is the first dumped step; its worst gradient
differs by less than ten times the step's gradient limit, with the
gradients' direction kept; no baseline was given.`,
	Confirm: `Run the reference again from weights nudged by one unit in the last place of
the compute dtype (bfloat16's or TF32's where the model computes in them)
and compare with --baseline: a correct run's differences stay within what
the baseline shows.`,
	Fix: `graphdiff compare EAGER GRAPH --baseline NUDGED_EAGER; or dump from the
first training step, where both runs start from the same weights.`,
}

// needsBaseline: on a failing comparison without a baseline, whose first
// divergent step is the first dumped one, where the worst gradient's
// difference ratio is under ten times the step's gradient limit (an order
// of magnitude: beyond rounding, within what its amplification reaches)
// and the gradients keep their direction (cosine ≥ 0.999 over the
// samples), a warning that the dumps cannot tell rounding amplified by
// training from a bug acting before the first dump, and which run would:
// a baseline.
func needsBaseline(f *facts) *Cause {
	if !f.failed || f.r.BaselineRun != "" || f.div == loaders.NoStep || f.div != f.firstStep {
		return nil
	}
	s := f.stepFacts(f.div)
	if s == nil || s.Grads == 0 || s.GradLimit <= 0 || s.WorstGradRatio > 10*s.GradLimit || s.WorstGradRatio <= s.GradLimit {
		return nil
	}
	a, b := f.s.get(f.s.a, f.div, loaders.KindGrad), f.s.get(f.s.b, f.div, loaders.KindGrad)
	if a == nil || cosine(a, b) < 0.999 {
		return nil
	}
	var ev evidence
	ev.add("the runs differ from step %d, the first dumped step: the worst gradient, %s, by %s of the gradient scale, %s× the step's limit %s, with the gradients' direction kept (cosine %.4f, norm ratio %s)",
		f.div, s.WorstGrad, g(s.WorstGradRatio), g(s.WorstGradRatio/s.GradLimit), g(s.GradLimit), cosine(a, b), g(norm(b)/norm(a)))
	ev.add("rounding amplified by training (a chaotic run, TF32 or bfloat16 noise through normalization, parameters that drifted before the dumps began) looks like this, and so does a bug acting from before the first dump: the dumps cannot tell them apart; a baseline (the reference run from weights one ULP of the compute dtype apart, --baseline) would")
	return &Cause{ID: NeedsBaseline, Confidence: 0.5, Evidence: ev}
}
