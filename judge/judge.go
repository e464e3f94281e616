package judge

import (
	"fmt"
	"math"

	"github.com/graphdiff/graphdiff/compare"
	"github.com/graphdiff/graphdiff/loaders"
)

// NoiseFactor is how far beyond the baseline's noise a pair may go: the
// thresholds applied are max(default, NoiseFactor × baseline's value). A
// second eager run is one sample of legitimate noise; the graphed run is
// another, so it may land somewhat above it.
const NoiseFactor = 3

// Decision is the ruling on one compared pair: its status, the thresholds
// applied, the measure its rule compared with a limit and, for a pair that
// did not match, why.
type Decision struct {
	Status                        Status
	MaxRelL2, MaxMismatchFraction float64
	// Rule names the rule that decided the pair; Measure is what that rule
	// measured on it and Limit what it compared Measure with (each Rule
	// states its formula). Where several rules judged a pair, they are
	// those of the rule nearest to failing it (largest Ratio), and where a
	// step-wide rule passed a pair that failed alone (unmeasuredDrift,
	// stateDrift), those of the step-wide rule. Rule is "" for a pair no
	// rule measured (one not compared).
	Rule           Rule
	Measure, Limit float64
	Reasons        []string
}

// Rule names what a pair's verdict compared with a limit (Decision.Rule).
type Rule string

// The rules, each with its measure (Decision.Measure) and its limit
// (Decision.Limit). A pair passes its rule when Measure ≤ Limit and fails
// it above (the state rules need both of theirs above), so that Ratio is at
// most 1 for a pair that passed and above 1 for one that failed.
const (
	// RuleRelL2: ‖b − a‖/‖a‖ against max_rel_l2 for a pair judged alone
	// (Tensor), against the step's LossLimit or OutputLimit for a loss or
	// an output (Step), each raised by a baseline's noise.
	RuleRelL2 Rule = "relative L2"
	// RuleMismatchFraction: wilson(mismatched, count), the lower end of
	// the Wilson interval of the fraction of elements beyond rtol and
	// atol, against max_mismatch_fraction (Tensor; recorded where rel_l2
	// > max_rel_l2/3, without which the fraction fails nothing).
	RuleMismatchFraction Rule = "mismatch fraction"
	// RuleSpecials: the number of elements whose NaN/±Inf differ between
	// the runs, against 0.
	RuleSpecials Rule = "NaN/Inf positions"
	// RuleGradRatio: r = RMS(g_B − g_A)/max(RMS(g_A), S) against the step's
	// GradLimit, raised by a baseline's noise (Step).
	RuleGradRatio Rule = "gradient RMS ratio"
	// RuleStepGradients: the Measure and Limit of the step's gradient
	// nearest to its limit, for a parameter without a measured update or
	// a state tensor that passes because every gradient of the step
	// passes (unmeasuredDrift, stateDrift).
	RuleStepGradients Rule = "step's gradients"
	// RuleStepMoments: RuleStepGradients for a step that dumped no
	// gradients, from the optimizer's moments that carry them
	// (StepFacts.Moments): the Measure and Limit of the moment nearest to
	// its limit, for a parameter without a measured update that passes
	// because every moment of the step passes.
	RuleStepMoments Rule = "step's optimizer moments"
	// RuleOptimizerState: r = RMS(s_B − s_A)/max(RMS(s_A), S_m) against
	// the step's GradLimit, for a tensor of the optimizer's state (one
	// member, m: exp_avg, exp_avg_sq, momentum_buffer, ...) at a step that
	// dumped no gradients: judged as a gradient is, S_m the RMS of every
	// reference tensor of that member at the step.
	RuleOptimizerState Rule = "optimizer state RMS ratio"
	// RuleUpdateRatio: min(|β|, |β_t|) against the step's UpdateLimit U,
	// for a parameter t with a measured update: β is the step's pooled
	// update ratio Σ(u_B − u_A)·u_A / Σu_A², β_t the same over t's own
	// healthy elements (0 where t has none). t fails when both pass U.
	RuleUpdateRatio Rule = "update ratio"
	// RuleStepUpdateRatio: |β| against U, for the parameter of largest
	// contribution |Σ(u_B − u_A)·u_A| failed for the step's ratio when no
	// parameter's own ratio passes U.
	RuleStepUpdateRatio Rule = "step's update ratio"
	// RuleMovedOneRun: the elements one run moved by more than a unit in
	// the last place, against the elements it moved by one unit at most,
	// for a parameter the other run left unchanged bit for bit.
	RuleMovedOneRun Rule = "moved in one run only"
	// RuleStateFactor: |β| = |Σ(u_B − u_A)·u_A / Σu_A²| of a state tensor
	// against its limit (StateFit.Limit; judgeState); 0 where no factor can
	// be fitted (fewer than two elements, no update or no difference).
	RuleStateFactor Rule = "state update factor"
	// RuleStateChance: −log10 StateFit.Chance, the chance of the factor's
	// fit from noise in decades, against −log10 StateChance (judgeState).
	// A state tensor fails when both this and RuleStateFactor pass their
	// limits; the one nearer to passing is recorded.
	RuleStateChance Rule = "state factor chance"
	// RuleTokenGap: max(gap_A, gap_B) of the flipped token of a decoding
	// step farthest beyond a near tie, against its L (decideTokens); 0
	// against Output·ε where no token flipped.
	RuleTokenGap Rule = "token logit gap"
)

// Ratio returns Measure/Limit, the pair's error over its limit as the
// reports show it: at most 1 for a pair its rule passed, 1 or more for one
// it failed (a measure just past its limit may divide to 1). A measure
// above a limit of 0 and a NaN measure (norms that overflow) give +Inf, 0
// over 0 gives 0, and a pair no rule measured gives NaN.
func (d *Decision) Ratio() float64 {
	switch {
	case d.Rule == "":
		return math.NaN()
	case math.IsNaN(d.Measure):
		return math.Inf(1)
	case d.Measure == 0:
		return 0
	case d.Limit == 0:
		return math.Inf(1)
	}
	return d.Measure / d.Limit
}

// judged records that rule compared measure with limit on the pair d
// decides, where it comes nearer to failing it than the rule recorded
// (the first one always).
func (d *Decision) judged(rule Rule, measure, limit float64) {
	next := Decision{Rule: rule, Measure: measure, Limit: limit}
	if d.Rule == "" || next.Ratio() > d.Ratio() {
		d.Rule, d.Measure, d.Limit = rule, measure, limit
	}
}

// rejudged records rule, measure and limit on d in place of what it held:
// a step-wide rule that passes a pair its own rule failed.
func (d *Decision) rejudged(rule Rule, measure, limit float64) {
	d.Rule, d.Measure, d.Limit = rule, measure, limit
}

// Tensor decides a compared pair's status from its metrics (p.Metrics,
// and p.Noise when a baseline was given), its settings and its two dtypes.
// The rule:
//
//	fail if NaN/±Inf positions differ between the runs, or
//	        rel_l2 > max_rel_l2, or rel_l2 is NaN (norms that overflow), or
//	        wilson(mismatched, count) > max_mismatch_fraction
//	          and rel_l2 > max_rel_l2 / 3
//
// where wilson(k, n) is the lower end of the one-sided 95% Wilson score
// interval of the fraction k/n (z = 1.645):
//
//	(p + z²/2n − z·sqrt(p(1−p)/n + z²/4n²)) / (1 + z²/n),  p = k/n
//
// so that 2 of a 4-element bias beyond tolerance (wilson 0.18) is not read
// as half the tensor going wrong, while 4 of 4 (0.60) or 300 of 1,000
// (0.28) still fail at 25%. max_rel_l2 and max_mismatch_fraction are the
// dtype's defaults (or the policy's), each raised to NoiseFactor times the
// baseline's value when a baseline run shows more noise, for floating-point
// pairs: a pair compared as integers (token ids, counters) must be equal,
// and no baseline excuses a difference there. Differing
// effective dtypes (loaders.Meta.Effective) are compared in the coarser
// and judged by these numbers; they fail as dtype_mismatch, with the
// metrics still reported, only when the settings say a dtype change
// fails.
func Tensor(p *Pair) Decision {
	m, s := p.Metrics, p.Settings
	d := Decision{MaxRelL2: s.MaxRelL2, MaxMismatchFraction: s.MaxMismatchFraction}
	if p.Noise != nil && s.DType.IsFloat() { // integers must be equal, whatever a baseline shows
		d.MaxRelL2 = max(d.MaxRelL2, NoiseFactor*p.Noise.RelL2)
		d.MaxMismatchFraction = max(d.MaxMismatchFraction, min(1, NoiseFactor*p.Noise.MismatchFraction()))
	}
	if r := specialsReason(m); r != "" {
		d.Reasons = append(d.Reasons, r)
		d.judged(RuleSpecials, float64(m.SpecialMismatches), 0)
	}
	d.judged(RuleRelL2, m.RelL2, d.MaxRelL2)
	switch {
	case math.IsNaN(m.RelL2) && m.Count > 0:
		// finite values whose norms overflow the comparison dtype
		d.Reasons = append(d.Reasons, fmt.Sprintf("relative L2 error undefined: the values' norms overflow %s, the comparison dtype", s.DType))
	case m.RelL2 > d.MaxRelL2:
		d.Reasons = append(d.Reasons, fmt.Sprintf("relative L2 error %.3g > %.3g", m.RelL2, d.MaxRelL2))
	}
	lo := wilsonLower(m.Mismatched, m.Count)
	if m.RelL2 > d.MaxRelL2/fractionFloor { // the fraction fails nothing below
		d.judged(RuleMismatchFraction, lo, d.MaxMismatchFraction)
	}
	if lo > d.MaxMismatchFraction && m.RelL2 > d.MaxRelL2/fractionFloor {
		d.Reasons = append(d.Reasons, fmt.Sprintf("%d of %d elements (%.3g%%) beyond rtol %.3g, atol %.3g (limit %.3g%%)",
			m.Mismatched, m.Count, 100*m.MismatchFraction(), s.RTol, s.ATol, 100*d.MaxMismatchFraction))
	}
	settle(p, &d)
	return d
}

// specialsReason describes NaN/±Inf at different positions in the two
// runs; "" when there are none.
func specialsReason(m *compare.Metrics) string {
	if m.SpecialMismatches == 0 {
		return ""
	}
	return fmt.Sprintf("NaN/Inf at different positions in %d elements (NaN %d vs %d, Inf %d vs %d)",
		m.SpecialMismatches, m.NaNA, m.NaNB, m.InfA, m.InfB)
}

// settle sets d's status once its reasons are in: dtype_mismatch (its
// reason put first) when the pair's effective dtypes differ and its
// settings fail a dtype change, else mismatch when d holds reasons, else
// match. A pair stored in two dtypes is otherwise judged by its numbers,
// compared in the coarser dtype.
func settle(p *Pair, d *Decision) {
	switch {
	case p.A.Effective() != p.B.Effective() && p.Settings.FailOnDTypeChange:
		d.Status = StatusDTypeMismatch
		d.Reasons = append([]string{fmt.Sprintf("dtype %s vs %s", p.A.Effective(), p.B.Effective())}, d.Reasons...)
	case len(d.Reasons) > 0:
		d.Status = StatusMismatch
	default:
		d.Status = StatusMatch
	}
}

// fractionFloor: the fraction test fails a pair only when its relative L2
// error is at least 1/fractionFloor of the limit. torch's elementwise
// tolerance for float32 (atol 1e-5) is stricter than the aggregate limit
// for values near 0.1, so without this floor a 4-element bias 1e-4 off
// would fail a run whose tensors are otherwise well inside the limits.
const fractionFloor = 3

// wilsonZ is the one-sided 95% normal quantile.
const wilsonZ = 1.645

// wilsonLower returns the lower end of the one-sided 95% Wilson score
// interval of the fraction k/n (0 for n = 0).
func wilsonLower(k, n int64) float64 {
	if n == 0 || k == 0 {
		return 0
	}
	p, nf, z2 := float64(k)/float64(n), float64(n), wilsonZ*wilsonZ
	return (p + z2/(2*nf) - wilsonZ*math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf))) / (1 + z2/nf)
}

// Run returns the verdict of a comparison whose pairs are tensors (their
// statuses decided) and whose inputs that belong to no pair and could not
// be read are errs, and its first divergence: the first pair, in step
// order (step-less pairs after every step) and then in the order given,
// where the runs depart: its numbers differ, or only one run holds it (a
// gradient the graphed run produces and the eager run does not is where
// the two part); nil when none does.
func Run(tensors []*TensorResult, errs []error) (Verdict, *TensorResult) {
	var first *TensorResult
	failed, errored := false, len(errs) > 0
	for _, t := range tensors {
		switch {
		case t.Status == StatusError:
			errored = true
		case t.Failed():
			failed = true
		}
		departs := t.Diverged() || t.Status == StatusMissing || t.Status == StatusExtra
		if departs && (first == nil || StepOrder(t.Step) < StepOrder(first.Step)) {
			first = t
		}
	}
	switch {
	case errored:
		return Error, first
	case failed:
		return Fail, first
	}
	return Pass, first
}

// StepOrder maps a step to its place in a comparison's order: the step
// itself, and NoStep after every step.
func StepOrder(step int) int {
	if step == loaders.NoStep {
		return math.MaxInt
	}
	return step
}

// BaselineMeasuresNothing reports whether a baseline was compared and
// repeats the reference bit for bit on every pair it holds: no NaN/Inf
// moved and every difference 0. A second eager run often does (same
// kernels, same order), and then it measures no noise at all.
func BaselineMeasuresNothing(tensors []*TensorResult) bool {
	seen := false
	for _, t := range tensors {
		if t.Noise == nil {
			continue
		}
		seen = true
		if t.Noise.RelL2 != 0 || t.Noise.MaxAbs.Value != 0 || t.Noise.Mismatched != 0 {
			return false
		}
	}
	return seen
}
