package diagnose

import (
	"fmt"
	"math"
	"strings"

	"github.com/graphdiff/graphdiff/loaders"
	"github.com/graphdiff/graphdiff/tolerances"
)

// CapturedScalar is the ID of the cause "a Python scalar frozen at capture (learning rate, loss weight, step, loss scale)".
const CapturedScalar = "captured_scalar"

// capturedScalarCause is what `graphdiff explain captured_scalar` prints.
var capturedScalarCause = Explanation{
	ID:    CapturedScalar,
	Title: "a Python scalar frozen at capture (learning rate, loss weight, step, loss scale)",
	What: `A Python float or int used inside the captured code — a learning rate changed
by a scheduler, a loss weight, a step counter, a loss scale — is baked into the
graph's kernels as a constant at capture; later changes never reach it.`,
	Signature: `The difference is proportional: gradients or parameter updates equal the
eager ones times a factor other than 1 (cosine ≈ 1), starting at the step
where the scalar first changes; with only losses dumped, the losses differ by
a drifting factor.`,
	Confirm: `Log the scalar on both sides; in the graphed run, put it in a tensor and
check whether the kernels read it.`,
	Fix: `Keep changing scalars in device tensors updated in place (lr_tensor.fill_(lr));
use capturable optimizers (Adam(capturable=True)) and schedulers that write
tensors; never branch on or multiply by Python numbers that change.`,
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
