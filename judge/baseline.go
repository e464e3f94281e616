package judge

import "math"

// baselineFacts sets f's baseline facts from the step's pairs that a
// baseline was compared with (Noise set) and that were compared
// themselves, and reports whether the baseline may serve the step: whether
// its noise may widen the step's limits. With N_t the baseline's relative
// L2 error against the reference on pair t and D_t the compared run's,
// over the n such pairs:
//
//	serves  ⇔  sqrt(Σ N_t² / n) ≤ NoiseFactor · sqrt(Σ D_t² / n)
//
// A baseline is a second eager run: a sample of the same legitimate noise
// a correct graphed run shows, so each is within NoiseFactor of the other
// (the factor the limits give the compared run over the baseline, given
// the other way). A baseline farther than that from the reference is no
// sample of that noise — another seed, another model, a broken dump, values
// of 3e38 — and would widen every limit past the compared run's own
// differences and pass anything: its noise is not used at that step, which
// is judged as without a baseline. An N that is NaN or infinite never
// serves. A step the baseline holds no pair of is judged without it, as
// it must be. (A baseline made from nudged initial parameters is farther
// than that at the first steps, where the graphed run repeats the
// reference almost bit for bit: those steps then pass without it, and
// Step reports nothing.)
func baselineFacts(pairs []Pair, f *StepFacts) bool {
	var nn, dd float64
	for i := range pairs {
		t := &pairs[i]
		if t.Noise == nil || t.Metrics == nil {
			continue
		}
		f.BaselinePairs++
		nn += t.Noise.RelL2 * t.Noise.RelL2
		dd += t.Metrics.RelL2 * t.Metrics.RelL2
	}
	if f.BaselinePairs == 0 {
		return false
	}
	n := float64(f.BaselinePairs)
	f.BaselineRel, f.RunRel = math.Sqrt(nn/n), math.Sqrt(dd/n)
	return f.BaselineRel <= NoiseFactor*f.RunRel && !math.IsInf(f.BaselineRel, 0)
}

// withoutNoise returns a copy of pairs with no baseline metrics: how a
// step is judged where the baseline does not serve it.
func withoutNoise(pairs []Pair) []Pair {
	out := make([]Pair, len(pairs))
	for i, p := range pairs {
		p.Noise = nil
		out[i] = p
	}
	return out
}

// BaselineUse says how a baseline run served a comparison: which of the
// compared pairs it held and where it was too far from the reference to be
// used.
type BaselineUse struct {
	// Path is the baseline run given.
	Path string
	// Paired is how many of the Compared pairs the baseline held alike
	// (same step, name, shape and components) and was compared with.
	Paired, Compared int
	// Identical is set when it repeats the reference bit for bit on every
	// pair it holds (BaselineMeasuresNothing): it measures no noise.
	Identical bool
	// Farther are the steps at which it was farther from the reference
	// than NoiseFactor times the compared run (StepFacts.BaselineUnused),
	// in step order: its noise was not used there. FartherRel and RunRel
	// are the RMS relative L2 errors of the first such step.
	Farther            []int
	FartherRel, RunRel float64
}

// Baseline describes how the baseline of r served it; nil when r was
// compared without one.
func Baseline(r *Result) *BaselineUse {
	if r.BaselineRun == "" {
		return nil
	}
	u := &BaselineUse{Path: r.BaselineRun, Identical: BaselineMeasuresNothing(r.Tensors)}
	for _, t := range r.Tensors {
		if t.Metrics == nil {
			continue
		}
		u.Compared++
		if t.Noise != nil {
			u.Paired++
		}
	}
	for _, f := range r.Steps {
		if f.BaselineUnused {
			if len(u.Farther) == 0 {
				u.FartherRel, u.RunRel = f.BaselineRel, f.RunRel
			}
			u.Farther = append(u.Farther, f.Step)
		}
	}
	return u
}
