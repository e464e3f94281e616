package curve

import (
	"fmt"
	"math"

	"github.com/graphdiff/graphdiff/judge"
	"github.com/graphdiff/graphdiff/loaders"
)

// PatternBeyondBaseline: the compared curve departs from the reference by
// more than a baseline shows rounding can carry it.
const PatternBeyondBaseline = "beyond_baseline"

// Baseline is what a baseline curve (a second reference run from weights
// one unit in the last place apart, or with its batch reduced in another
// order) showed: how far rounding alone carries this run's loss.
type Baseline struct {
	// Source describes the baseline curve; Steps is how many steps it
	// shares with both curves.
	Source string
	Steps  int
	// MaxRel is the largest relative difference of the baseline from the
	// reference over those steps, M_b = max_t |c_t − a_t|/|a_t|, at
	// MaxRelStep; Limit the relative difference the compared curve may
	// reach, judge.NoiseFactor·M_b + ε_c (one rounding unit); 0 and 0 when
	// the baseline repeats the reference bit for bit (Identical), which
	// measures no noise and is not used.
	MaxRel     float64
	MaxRelStep int64
	Limit      float64
	Identical  bool
}

// AnalyzeBaseline is Analyze with a baseline curve c: where c measures
// noise (it differs from a somewhere), the compared curve b also parts
// from a at the first step k whose relative difference passes
//
//	L = NoiseFactor·max_t |c_t − a_t|/|a_t| + ε_c
//
// with more than AllowedFailingSteps of the five steps from k beyond L
// too (else k is a spike), the maximum taken over every step the three
// curves share. Why the whole run's largest baseline difference and not
// the baseline's difference at step k: rounding differences are amplified
// by training, in a chaotic run exponentially, so two perturbations of
// different sizes (the graph's rounding, the baseline's nudge) reach the
// same size at different steps; what a baseline shows is how far rounding
// can carry this run's loss at all. A slow break (a schedule frozen at
// capture) grows past it where rounding drift does not: in fp32, a slow
// cosine frozen at capture reaches 1e-4 relative within 50 steps where
// the baseline stays under 3e-6 for 400. NoiseFactor is the factor by
// which compare's baseline raises its limits (judge.NoiseFactor).
func AnalyzeBaseline(a, b, c *loaders.Curve, o Options) *Result {
	r := Analyze(a, b, o)
	if c == nil {
		return r
	}
	base := &Baseline{Source: c.Source, MaxRelStep: -1, Identical: true}
	r.Baseline = base
	at := make(map[int64]float64, len(c.Steps))
	for i, s := range c.Steps {
		at[s] = c.Values[i]
	}
	for k, s := range r.Steps {
		v, ok := at[s]
		x := r.ValuesA[k]
		if !ok || !isFinite(v) || !isFinite(x) || !isFinite(r.ValuesB[k]) {
			continue
		}
		base.Steps++
		if v != x {
			base.Identical = false
		}
		if x != 0 {
			if rel := math.Abs(v-x) / math.Abs(x); rel > base.MaxRel {
				base.MaxRel, base.MaxRelStep = rel, s
			}
		}
	}
	if base.Identical || base.Steps == 0 {
		base.Identical = base.Steps > 0
		r.Evidence = append(r.Evidence, baselineUnused(base))
		return r
	}
	base.Limit = judge.NoiseFactor*base.MaxRel + r.Options.RTol
	beyond := func(k int) bool { v := r.RelDiff[k]; return v > base.Limit || v != v }
	for k := range r.Steps {
		if _, ok := at[r.Steps[k]]; !ok || !beyond(k) {
			continue
		}
		end := min(len(r.Steps), k+confirmSteps)
		n := 0
		for j := k; j < end; j++ {
			if beyond(j) {
				n++
			}
		}
		if n <= min(r.Options.AllowedFailingSteps, end-k-1) {
			continue
		}
		if r.FirstDivergentStep == nil || *r.FirstDivergentStep > r.Steps[k] {
			s := r.Steps[k]
			r.FirstDivergentStep, r.Pattern, r.Verdict = &s, PatternBeyondBaseline, judge.Fail
			r.Evidence = []string{fmt.Sprintf("step %d: the relative difference %.3g passes %g× the largest the baseline %s shows (%.3g, at step %d) plus one rounding unit: %.3g; %d of the %d steps from it are beyond it",
				s, r.RelDiff[k], float64(judge.NoiseFactor), base.Source, base.MaxRel, base.MaxRelStep, base.Limit, n, end-k)}
		}
		return r
	}
	r.Evidence = append(r.Evidence, fmt.Sprintf("the baseline %s differs from the reference by up to %.3g relative (step %d); the compared curve stays within %g× that plus one rounding unit (%.3g) but at isolated steps",
		base.Source, base.MaxRel, base.MaxRelStep, float64(judge.NoiseFactor), base.Limit))
	return r
}

// baselineUnused says why baseline b raised no limit.
func baselineUnused(b *Baseline) string {
	if b.Steps == 0 {
		return fmt.Sprintf("the baseline %s shares no step with both curves: not used", b.Source)
	}
	return fmt.Sprintf("the baseline %s repeats the reference bit for bit over %d steps, so it measures no noise and is not used (nudge its initial parameters by one ULP)", b.Source, b.Steps)
}
