package diagnose

import (
	"fmt"
	"math"

	"github.com/graphdiff/graphdiff/judge"
	"github.com/graphdiff/graphdiff/loaders"
)

// PrecisionNoise is the ID of the cause "not a bug: rounding differences".
const PrecisionNoise = "precision_noise"

// precisionNoiseCause is what `graphdiff explain precision_noise` prints.
var precisionNoiseCause = Explanation{
	ID:    PrecisionNoise,
	Title: "not a bug: rounding differences",
	What: `Eager and graphed runs may pick different kernels or fuse operations
differently (capturable optimizers, for one), so results differ in the last
bits, and training amplifies that over steps.`,
	Signature: `Differences within the dtype's noise, with no structure: no proportional
factor, no lag, no repetition.`,
	Confirm: `Compare two eager runs (--baseline RUN2): the graph should differ from the
eager run about as much as the eager runs differ from each other.`,
	Fix: `Nothing to fix. If the verdict fails on noise alone, give --baseline or
loosen the thresholds for that dtype in a policy file.`,
}

// precisionNoise: a pass with differences, or a failure no detector
// explains whose differences are small. The difference it quotes is the
// pair nearest its limit as the verdict measured it (judge.Decision:
// the rule that decided the pair, its measure and limit), so the number
// is the one the verdict used, not the pair's relative L2 against its
// dtype's per-tensor threshold.
func precisionNoise(f *facts) *Cause {
	worst, line := f.nearestLimit()
	if worst == nil {
		return nil
	}
	var ev evidence
	ev.add("%s", line)
	if !f.failed {
		if f.found[CapturedScalar] > 0 {
			return nil // a scale factor, the warning's, is no rounding
		}
		ev.add("every tensor is within its dtype's noise and no structured pattern was found")
		if f.onlyLosses() {
			// a frozen learning rate or a stale batch reaches the loss
			// only slowly: the loss alone vouches for less
			ev.add("not dumped, and would show bugs that have not reached the loss yet: gradients, parameters")
			return &Cause{ID: PrecisionNoise, Confidence: 0.6, Evidence: ev}
		}
		return &Cause{ID: PrecisionNoise, Confidence: 0.9, Evidence: ev}
	}
	if f.bugFound() >= 0.5 || worst.Ratio() > 10 {
		return nil
	}
	ev.add("the failing differences are within 10× the limits and match no bug's signature: the limits may be too tight for these runs; compare two eager runs with --baseline")
	return &Cause{ID: PrecisionNoise, Confidence: 0.35, Evidence: ev}
}

// nearestLimit returns the pair nearest its limit as the verdict
// measured it (judge.Decision: the rule that decided the pair, its
// measure and limit), and a line that says so: "largest difference
// relative to its limit: NAME at step K, RULE M against L (R of it,
// DTYPE)". nil where no pair differs.
func (f *facts) nearestLimit() (*judge.TensorResult, string) {
	var worst *judge.TensorResult
	for _, t := range f.r.Tensors {
		r := t.Ratio()
		if t.Metrics == nil || !(r > 0) || math.IsInf(r, 0) {
			continue
		}
		if worst == nil || r > worst.Ratio() {
			worst = t
		}
	}
	if worst == nil {
		return nil, ""
	}
	at := ""
	if worst.Step != loaders.NoStep {
		at = " at " + stepName(worst.Step)
	}
	return worst, fmt.Sprintf("largest difference relative to its limit: %s%s, %s %s against %s (%s of it, %s)", worst.Name, at,
		worst.Rule, g(worst.Measure), g(worst.Limit), g(worst.Ratio()), worst.Settings.DType)
}

// onlyLosses reports whether losses (per step, or as a curve) are all the
// runs dumped.
func (f *facts) onlyLosses() bool {
	for _, t := range f.r.Tensors {
		if t.Kind != loaders.KindLoss {
			return false
		}
	}
	return true
}
