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
// applied and, for a pair that did not match, why.
type Decision struct {
	Status                        Status
	MaxRelL2, MaxMismatchFraction float64
	Reasons                       []string
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
	}
	switch {
	case math.IsNaN(m.RelL2) && m.Count > 0:
		// finite values whose norms overflow the comparison dtype
		d.Reasons = append(d.Reasons, fmt.Sprintf("relative L2 error undefined: the values' norms overflow %s, the comparison dtype", s.DType))
	case m.RelL2 > d.MaxRelL2:
		d.Reasons = append(d.Reasons, fmt.Sprintf("relative L2 error %.3g > %.3g", m.RelL2, d.MaxRelL2))
	}
	if lo := wilsonLower(m.Mismatched, m.Count); lo > d.MaxMismatchFraction && m.RelL2 > d.MaxRelL2/fractionFloor {
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
