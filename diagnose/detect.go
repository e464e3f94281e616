package diagnose

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/graphdiff/graphdiff/judge"
	"github.com/graphdiff/graphdiff/loaders"
	"github.com/graphdiff/graphdiff/tolerances"
)

// Detector thresholds. Each was set on the real runs in testdata/scenarios,
// with wide margins between correct runs, the cause it detects and the
// causes it must not be confused with (the values measured there are in
// the comments).
const (
	// identical: a relative L2 difference this small is "the same values".
	identical = 1e-7
	// lagRatio: step k of the graph is "the eager step k−1" when it is
	// this much closer to it than to eager step k (input_lag: 0.02–0.22
	// of the same-step difference; other causes ≥ 0.6).
	lagRatio = 0.3
	// accRatio: graph grad[k] − graph grad[k−1] is "eager grad[k]" when it
	// is this much closer (grad_accumulation: 5e-8–0.14; others ≥ 0.7).
	accRatio = 0.3
	// repeatRatio: the graph repeats itself when its step-to-step change is
	// this much smaller than the eager run's (stale_input outputs:
	// 0.19–0.35; others ≥ 0.6).
	repeatRatio = 0.4
	// zeroRepeat, zeroVary: Jaccard index of exactly-zero positions between
	// consecutive steps above which a pattern repeats and below which it
	// varies (stale_input grads: 0.90–0.99 in the graph, 0.34–0.41 eager).
	zeroRepeat = 0.85
	zeroVary   = 0.7
	// proportionalCos, proportionalRatio: a difference is a scale factor
	// when the cosine exceeds the first and the norm ratio is further from
	// 1 than the second (captured_lr updates: cosine 0.9925, ratio 1.99;
	// autocast_cache updates: 0.9985, 1.012).
	proportionalCos   = 0.95
	proportionalRatio = 0.05
)

// dynamicShape: pairs whose shapes differ between the runs.
func dynamicShape(f *facts) *Cause {
	var ev evidence
	var ks []int
	n := 0
	for _, t := range f.r.Tensors {
		if t.Status != judge.StatusShapeMismatch {
			continue
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
	ev.add("%d tensor pairs differ in shape, at steps %s; the other steps agree in shape", n, steps(ks))
	return &Cause{ID: DynamicShape, Confidence: 0.95, Evidence: ev}
}

// outputAliasing: some kind whose graphed values are identical at every
// step while the eager ones change.
func outputAliasing(f *facts) *Cause {
	if len(f.s.steps) < 3 {
		return nil
	}
	last := f.s.steps[len(f.s.steps)-1]
	var ev evidence
	conf := 0.0
	for _, kind := range kindOrder(f.s.kinds) {
		bLast, aLast := f.s.get(f.s.b, last, kind), f.s.get(f.s.a, last, kind)
		if bLast == nil {
			continue
		}
		constant, n, eagerVaries := true, 0, 0.0
		for _, k := range f.s.steps {
			b, a := f.s.get(f.s.b, k, kind), f.s.get(f.s.a, k, kind)
			if b == nil || a == nil {
				continue
			}
			n++
			if !(relL2(bLast, b) <= identical) {
				constant = false
				break
			}
			eagerVaries = max(eagerVaries, relL2(aLast, a))
		}
		if !constant || n < 3 || eagerVaries < 1e-4 {
			continue
		}
		matchesLast := relL2(aLast, bLast) <= 1e-3
		c := 0.8
		if matchesLast {
			c = 0.95
		}
		conf = max(conf, c)
		line := fmt.Sprintf("%s: the graphed run's values are identical at all %d steps while the eager ones change (by up to %s relative to the last step)",
			kindWord(kind), n, g(eagerVaries))
		if matchesLast {
			line += fmt.Sprintf(", and they equal the eager run's last step (%d)", last)
		}
		ev.add("%s", line)
	}
	if conf == 0 {
		return nil
	}
	return &Cause{ID: OutputAliasing, Confidence: conf, Evidence: ev}
}

// gradAccumulation: graph grad[k] − graph grad[k−1] matches eager grad[k].
func gradAccumulation(f *facts) *Cause {
	if !f.s.kinds[loaders.KindGrad] {
		return nil
	}
	hits, tried := 0, 0
	var ev evidence
	var ratios []string
	for _, k := range f.diverged[loaders.KindGrad] {
		p, ok := f.s.prev(k)
		a, b, bp := f.s.get(f.s.a, k, loaders.KindGrad), f.s.get(f.s.b, k, loaders.KindGrad), f.s.get(f.s.b, p, loaders.KindGrad)
		if !ok || a == nil || b == nil || bp == nil {
			continue
		}
		tried++
		acc, same := relL2(a, sub(b, bp)), relL2(a, b)
		if acc < accRatio*same {
			hits++
			if hits <= 2 {
				ev.add("step %d: graph grads − graph grads of step %d differ from eager grads by %s (relative L2), graph vs eager %s", k, p, g(acc), g(same))
			}
		}
		ratios = append(ratios, g(norm(b)/norm(a)))
	}
	if hits == 0 || float64(hits) < 0.6*float64(tried) {
		return nil
	}
	ev.add("gradient norm, graph / eager, at steps %s: %s", steps(f.diverged[loaders.KindGrad]), strings.Join(ratios, ", "))
	conf := 0.75
	if hits >= 2 {
		conf = 0.92
	}
	return &Cause{ID: GradAccumulation, Confidence: conf, Evidence: ev}
}

// inputLag: graph step k matches eager step k−1 better than eager step k.
// Strongly (0.9) when, at two or more diverged steps, the graph is several
// times closer to the previous eager step; moderately (0.65) when it is
// several times closer at the first divergence and merely closer at 80% of
// at least three diverged steps (the graph's own parameters drift, so with
// fast-moving weights the match to the previous step loosens).
func inputLag(f *facts) *Cause {
	best := (*Cause)(nil)
	for _, kind := range []loaders.Kind{loaders.KindOutput, loaders.KindLoss, loaders.KindGrad} {
		strong, closer, tried := 0, 0, 0
		firstStrong := false
		var ev evidence
		for _, k := range f.divergedSteps(kind) {
			p, ok := f.s.prev(k)
			a, ap, b := f.s.get(f.s.a, k, kind), f.s.get(f.s.a, p, kind), f.s.get(f.s.b, k, kind)
			if !ok || a == nil || ap == nil || b == nil {
				continue
			}
			tried++
			lag, same := relL2(ap, b), relL2(a, b)
			if lag < same {
				closer++
			}
			if lag < lagRatio*same {
				strong++
				firstStrong = firstStrong || k == f.div
				if strong <= 3 {
					ev.add("%s at step %d: graph vs eager step %d differ by %s (relative L2), graph vs eager step %d by %s", kindWord(kind), k, p, g(lag), k, g(same))
				}
			}
		}
		switch {
		case strong >= 2 && float64(strong) >= 0.8*float64(tried):
			ev.add("%s", f.missing(loaders.KindOutput, loaders.KindInput))
			return &Cause{ID: InputLag, Confidence: 0.9, Evidence: ev}
		case best == nil && kind != loaders.KindLoss && firstStrong && tried >= 3 && float64(closer) >= 0.8*float64(tried):
			ev.add("%s: at %d of %d diverged steps the graph is closer to the eager run's previous step than to the same step", kindWord(kind), closer, tried)
			ev.add("%s", f.missing(loaders.KindOutput, loaders.KindInput))
			best = &Cause{ID: InputLag, Confidence: 0.65, Evidence: ev}
		}
	}
	return best
}

// divergedSteps returns the steps at which a kind diverged, or, for a kind
// whose own tensors all matched, the steps at which anything diverged.
func (f *facts) divergedSteps(kind loaders.Kind) []int {
	if ks := f.diverged[kind]; len(ks) > 0 {
		return ks
	}
	var out []int
	for _, k := range f.s.steps {
		if f.div != loaders.NoStep && k >= f.div {
			out = append(out, k)
		}
	}
	return out
}

// staleInput: after the first divergence, the graphed run changes far less
// from step to step than the eager run (outputs), or repeats its gradients'
// zero pattern. Outputs that never change at all are output_aliasing, and
// accumulated gradients keep their zero pattern too, so each signal is left
// out when that cause was found.
func staleInput(f *facts) *Cause {
	if f.div == loaders.NoStep {
		return nil
	}
	useOutputs := f.explained(OutputAliasing) < 0.6
	useZeros := f.explained(GradAccumulation) < 0.6
	var ev evidence
	outHits, zeroHits := 0, 0
	for _, k := range f.s.steps {
		p, ok := f.s.prev(k)
		if !ok || k <= f.div {
			continue // the first divergent step may still see the capture batch legitimately
		}
		if a, ap, b, bp := f.four(loaders.KindOutput, k, p); a != nil && useOutputs {
			sA, sB := relL2(ap, a), relL2(bp, b)
			if sA > 0.05 && sB < repeatRatio*sA {
				outHits++
				if outHits <= 2 {
					ev.add("outputs from step %d to %d change by %s (relative L2) in the graphed run, %s in the eager run", p, k, g(sB), g(sA))
				}
			}
		}
		if a, ap, b, bp := f.four(loaders.KindGrad, k, p); a != nil && useZeros {
			jA, zA := zeroJaccard(a, ap)
			jB, zB := zeroJaccard(b, bp)
			if zA > 0.02 && zB > 0.02 && jB >= zeroRepeat && jA < zeroVary {
				zeroHits++
				if zeroHits <= 2 {
					ev.add("gradients' zero pattern (ReLU) at steps %d and %d: %.0f%% the same in the graphed run, %.0f%% in the eager run", p, k, 100*jB, 100*jA)
				}
			}
		}
	}
	if outHits == 0 && zeroHits == 0 {
		return nil
	}
	conf := 0.6
	switch {
	case outHits > 0 && zeroHits > 0:
		conf = 0.92
	case outHits >= 2 || zeroHits >= 2:
		conf = 0.85
	}
	ev.add("%s", f.missing(loaders.KindOutput))
	return &Cause{ID: StaleInput, Confidence: conf, Evidence: ev}
}

// four returns a kind's samples at steps k and p in both runs, all nil
// when any is missing.
func (f *facts) four(kind loaders.Kind, k, p int) (a, ap, b, bp vec) {
	a, ap = f.s.get(f.s.a, k, kind), f.s.get(f.s.a, p, kind)
	b, bp = f.s.get(f.s.b, k, kind), f.s.get(f.s.b, p, kind)
	if a == nil || ap == nil || b == nil || bp == nil {
		return nil, nil, nil, nil
	}
	return a, ap, b, bp
}

// proportional reports whether b is a multiple of a other than 1, with the
// cosine and norm ratio ‖b‖/‖a‖: either clearly (cosine > coarseCos, ratio
// off 1 by more than coarseOff: a learning rate halved, in bf16 noise), or
// precisely (cosine > fineCos and the ratio off 1 by more than fineOff and
// by 100× the cosine's distance from 1: a factor of 1.001 in float32).
// Correct fp32 Adam vs capturable Adam measured ratios within 1e-5 of 1.
func proportional(a, b vec, fineOff float64) (bool, float64, float64) {
	c, r := cosine(a, b), norm(b)/norm(a)
	off := math.Abs(r - 1)
	coarse := c > proportionalCos && off > proportionalRatio
	fine := c > fineCos && off > fineOff && off > 100*(1-c)
	return coarse || fine, c, r
}

// fineCos: the cosine above which the precise proportionality test applies.
const fineCos = 0.9999

// warnOff returns how far from 1 a factor must be to count as one, for a
// warning on a pass or to explain a failure: at least 5e-5 (5× what correct
// fp32 Adam vs capturable Adam showed) and a quarter of the dtype's epsilon
// (bf16 Adam noise moved gradient norms by up to 2e-4 with cosine 0.99999).
func (f *facts) warnOff(kind loaders.Kind) float64 {
	return max(5e-5, 0.25*tolerances.Epsilon(f.compareDType(kind)))
}

// capturedScalar: gradients or parameter updates that are the eager ones
// times a factor, at the first divergence or at any step before it (a
// factor near 1 grows into a failure over steps); with only losses dumped,
// losses that differ by a factor drifting from step to step.
func capturedScalar(f *facts) *Cause {
	if f.div == loaders.NoStep {
		return nil
	}
	var ev evidence
	for _, k := range f.s.steps {
		if k > f.div {
			break
		}
		if ev = f.scaleAt(k, f.warnOff); len(ev) > 0 {
			if !f.s.kinds[loaders.KindGrad] {
				ev.add("%s", f.missing(loaders.KindGrad))
			}
			return &Cause{ID: CapturedScalar, Confidence: 0.9, Evidence: ev}
		}
	}
	if f.s.kinds[loaders.KindGrad] || f.s.kinds[loaders.KindParam] {
		return nil
	}
	// Only losses: a factor between the runs' losses that drifts steadily.
	var ratios []float64
	for _, k := range f.divergedSteps(loaders.KindLoss) {
		a, b := f.s.get(f.s.a, k, loaders.KindLoss), f.s.get(f.s.b, k, loaders.KindLoss)
		if len(a) == 1 && a[0] != 0 {
			ratios = append(ratios, b[0]/a[0])
		}
	}
	if len(ratios) < 2 || !monotone(ratios) || math.Abs(math.Log(ratios[len(ratios)-1])) < 0.1 {
		return nil
	}
	parts := make([]string, len(ratios))
	for i, r := range ratios {
		parts[i] = g(r)
	}
	ev.add("graphed loss / eager loss from step %d on: %s — a factor that drifts steadily, as a frozen loss weight or scale gives", f.div, strings.Join(parts, ", "))
	ev.add("%s", f.missing(loaders.KindGrad, loaders.KindParam))
	return &Cause{ID: CapturedScalar, Confidence: 0.6, Evidence: ev}
}

// scaleAt looks for a scale factor at step k: gradients that are the
// eager ones times a factor, or, where gradients agree, parameter updates
// that are. off gives the smallest factor distance from 1 that counts.
func (f *facts) scaleAt(k int, off func(loaders.Kind) float64) evidence {
	var ev evidence
	gradsAgree := true
	if a, b := f.s.get(f.s.a, k, loaders.KindGrad), f.s.get(f.s.b, k, loaders.KindGrad); a != nil && relL2(a, b) > 0 {
		if ok, c, r := proportional(a, b, off(loaders.KindGrad)); ok {
			ev.add("step %d: the graphed gradients are the eager ones × %s (cosine %.6f): a loss weight or scale frozen at capture", k, ratioString(r), c)
			return ev
		}
		gradsAgree = relL2(a, b) <= 1e-3
	}
	p, ok := f.s.prev(k)
	if !ok || !gradsAgree {
		return nil
	}
	if a, ap, b, bp := f.four(loaders.KindParam, k, p); a != nil {
		ua, ub := sub(a, ap), sub(b, bp)
		if relL2(ua, ub) == 0 {
			return nil
		}
		if ok, c, r := proportional(ua, ub, off(loaders.KindParam)); ok {
			ev.add("step %d: gradients agree, but the graphed parameter updates are the eager ones × %s (cosine %.6f): a learning rate or other optimizer scalar frozen at capture", k, ratioString(r), c)
		}
	}
	return ev
}

// ratioString shows a factor with enough digits to see how far it is from 1.
func ratioString(r float64) string {
	if math.Abs(r-1) < 0.01 {
		return fmt.Sprintf("%.6f", r)
	}
	return g(r)
}

func monotone(xs []float64) bool {
	up, down := true, true
	for i := 1; i < len(xs); i++ {
		up = up && xs[i] >= xs[i-1]
		down = down && xs[i] <= xs[i-1]
	}
	return up || down
}

// capturedBranch: several steps agree exactly, then the runs break apart at
// one step by a difference that is not a scale factor.
func capturedBranch(f *facts) *Cause {
	if f.div == loaders.NoStep || len(f.s.steps) == 0 || f.explained(CapturedScalar, OutputAliasing, DynamicShape) >= 0.6 {
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

// uninitializedMemory: NaN/Inf or huge values only in the graphed run, or
// a difference already at the first step, which no replay-order bug can
// cause.
func uninitializedMemory(f *facts) *Cause {
	var ev evidence
	conf := 0.0
	for _, t := range f.r.Tensors {
		if m := t.Metrics; m != nil && m.SpecialMismatches > 0 && (m.NaNB > m.NaNA || m.InfB > m.InfA) {
			conf = max(conf, 0.9)
			ev.add("%s at %s: %d NaN and %d Inf in the graphed run, %d and %d in the eager run", t.Name, stepName(t.Step), m.NaNB, m.InfB, m.NaNA, m.InfA)
			break
		}
	}
	for _, k := range f.s.steps {
		for _, kind := range kindOrder(f.s.kinds) {
			a, b := f.s.get(f.s.a, k, kind), f.s.get(f.s.b, k, kind)
			ma, _ := maxAbs(a)
			mb, _ := maxAbs(b)
			if ma > 0 && mb > 1e4*ma {
				conf = max(conf, 0.85)
				ev.add("%s at step %d: largest |value| %s in the graphed run, %s in the eager run", kindWord(kind), k, g(mb), g(ma))
				break
			}
		}
	}
	if f.div != loaders.NoStep && f.div == f.firstStep && f.explained(OutputAliasing, DynamicShape) < 0.6 {
		conf = max(conf, 0.7)
		line := fmt.Sprintf("the runs differ already at step %d, the first step, before any replay-order bug could act", f.div)
		if a, b := f.s.get(f.s.a, f.div, loaders.KindGrad), f.s.get(f.s.b, f.div, loaders.KindGrad); a != nil {
			line += fmt.Sprintf(": gradients' cosine %.3f, norm ratio %s", cosine(a, b), g(norm(b)/norm(a)))
		}
		ev.add("%s", line)
	}
	if conf == 0 {
		return nil
	}
	return &Cause{ID: UninitializedMemory, Confidence: conf, Evidence: ev}
}

// autocastCache: under autocast, the runs agree at the capture step and
// then drift apart while staying strongly correlated.
func autocastCache(f *facts) *Cause {
	compute, stored := f.r.ComputeDType, f.storedFloat()
	if compute == loaders.Invalid || stored == loaders.Invalid || tolerances.Epsilon(compute) <= tolerances.Epsilon(stored) {
		return nil
	}
	if f.div == loaders.NoStep || f.div == f.firstStep || f.explained(InputLag, StaleInput, GradAccumulation, CapturedScalar, OutputAliasing, DynamicShape) >= 0.6 {
		return nil
	}
	var ev evidence
	ev.add("the runs used autocast: compute dtype %s, dumps in %s", compute, stored)
	ks := f.diverged[loaders.KindGrad]
	if len(ks) == 0 {
		ev.add("step %d, the first replay after capture, breaks: %s", f.div, strings.Join(f.r.FirstDivergence.Reasons, "; "))
		ev.add("%s", f.missing(loaders.KindGrad))
		return &Cause{ID: AutocastCache, Confidence: 0.55, Evidence: ev}
	}
	var parts []string
	for _, k := range ks {
		a, b := f.s.get(f.s.a, k, loaders.KindGrad), f.s.get(f.s.b, k, loaders.KindGrad)
		parts = append(parts, fmt.Sprintf("step %d: relative L2 %s, cosine %.3f", k, g(relL2(a, b)), cosine(a, b)))
	}
	ev.add("steps before %d agree; the gradients then drift apart while staying correlated — %s", f.div, strings.Join(parts, "; "))
	return &Cause{ID: AutocastCache, Confidence: 0.75, Evidence: ev}
}

// frozenRNG: the runs agree at the capture step and differ from the first
// replay on, with none of the more specific signatures.
func frozenRNG(f *facts) *Cause {
	if f.div == loaders.NoStep || f.div == f.firstStep || f.explained(InputLag, StaleInput, GradAccumulation, CapturedScalar,
		OutputAliasing, DynamicShape, AutocastCache, CapturedBranch, UninitializedMemory) >= 0.6 {
		return nil
	}
	if p, ok := f.s.prev(f.div); !ok || p != f.firstStep {
		return nil // random values frozen at capture show from the first replay
	}
	var ev evidence
	ev.add("step %d (the capture step) agrees and step %d, the first replay after it, breaks: %s", f.firstStep, f.div, strings.Join(f.r.FirstDivergence.Reasons, "; "))
	ev.add("no lag behind the eager run, no repeated batch, no accumulating gradients and no scale factor: what is left is values fixed at capture, such as random masks or noise")
	if a, b := f.s.get(f.s.a, f.div, loaders.KindGrad), f.s.get(f.s.b, f.div, loaders.KindGrad); a != nil {
		ev.add("gradients at step %d: cosine %.3f, relative L2 %s", f.div, cosine(a, b), g(relL2(a, b)))
	}
	ev.add("not dumped, and would confirm it: the random tensors (dropout masks, noise) at two steps; if the runs used autocast, give --compute-dtype")
	return &Cause{ID: FrozenRNG, Confidence: 0.55, Evidence: ev}
}

// precisionNoise: a pass with differences, or a failure no detector
// explains whose differences are small.
func precisionNoise(f *facts) *Cause {
	var worst *judge.TensorResult
	for _, t := range f.r.Tensors {
		if t.Metrics == nil || t.Metrics.RelL2 == 0 || math.IsInf(t.Metrics.RelL2, 0) || math.IsNaN(t.Metrics.RelL2) {
			continue
		}
		if worst == nil || t.Metrics.RelL2/math.Max(t.MaxRelL2, 1e-300) > worst.Metrics.RelL2/math.Max(worst.MaxRelL2, 1e-300) {
			worst = t
		}
	}
	if worst == nil {
		return nil
	}
	var ev evidence
	ev.add("largest difference relative to its limit: %s at %s, relative L2 %s (limit %s, %s)", worst.Name, stepName(worst.Step),
		g(worst.Metrics.RelL2), g(worst.MaxRelL2), worst.Settings.DType)
	if !f.failed {
		ev.add("every tensor is within its dtype's noise and no structured pattern was found")
		return &Cause{ID: PrecisionNoise, Confidence: 0.9, Evidence: ev}
	}
	if f.explained(causeIDs...) >= 0.5 || worst.Metrics.RelL2 > 10*worst.MaxRelL2 {
		return nil
	}
	ev.add("the failing differences are within 10× the limits and match no bug's signature: the limits may be too tight for these runs; compare two eager runs with --baseline")
	return &Cause{ID: PrecisionNoise, Confidence: 0.35, Evidence: ev}
}

// causeIDs are the IDs of actual bugs (everything but precision_noise).
var causeIDs = []string{FrozenRNG, StaleInput, InputLag, OutputAliasing, UninitializedMemory, GradAccumulation,
	CapturedScalar, CapturedBranch, AutocastCache, DynamicShape}

// proportionalWarning: on a passing comparison, gradients or parameter
// updates that are exactly a scale of the eager ones.
func proportionalWarning(f *facts) *Cause {
	var ev evidence
	for _, k := range f.s.steps {
		ev = append(ev, f.scaleAt(k, f.warnOff)...)
		if len(ev) >= 3 {
			break
		}
	}
	if len(ev) == 0 {
		return nil
	}
	ev.add("the differences are inside the thresholds, but a scale factor is no rounding: a learning rate, loss weight or scale differs slightly between the runs")
	return &Cause{ID: CapturedScalar, Confidence: 0.7, Evidence: ev}
}

// kindOrder returns sampled kinds in the report order.
func kindOrder(kinds map[loaders.Kind]bool) []loaders.Kind {
	var out []loaders.Kind
	for k := range kinds {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Rank() < out[j].Rank() })
	return out
}

func stepName(step int) string {
	if step == loaders.NoStep {
		return "no step"
	}
	return fmt.Sprintf("step %d", step)
}
