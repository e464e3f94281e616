package diagnose

import (
	"cmp"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"

	"github.com/graphdiff/graphdiff/internal/parallel"
	"github.com/graphdiff/graphdiff/internal/words"
	"github.com/graphdiff/graphdiff/judge"
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
a drifting factor. In decoding (logits and tokens per position), a position
or step counter frozen at capture makes each replay's logits depend on its
input token alone: two steps whose previous tokens are equal put out equal
logits. In served outputs, those that depart are eager's times one factor
(probabilities compared in the form a temperature scales: centered
log-probabilities, or a sigmoid's log-odds).`,
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
//
// Where the factor shows decides how sure it is: parameter updates scaled
// while the step's gradients pass the verdict is an optimizer scalar (a
// learning rate), 0.9; gradients that are a scale up to the step's
// gradient noise limit is a scalar on the loss (a loss weight or scale),
// 0.9; gradients close to a scale but with a residual above that limit is
// a value acting inside the network, where a Python number frozen there
// and a reassigned tensor (reassigned_tensor) cannot be told apart: 0.5.
//
// Prediction: a Python number read by the captured step keeps its value
// from capture, so where it acts the graph's numbers are eager's times a
// factor: updates (a learning rate), gradients (a loss weight), derived
// state (a momentum, a decay), or, in decoding, logits that depend on the
// input token alone (a position).
func capturedScalar(f *facts) *Cause {
	if f.div == loaders.NoStep {
		return nil
	}
	if c := stateScalar(f); c != nil {
		return c
	}
	if c := momentRule(f); c != nil {
		return c
	}
	if c := decodePosition(f); c != nil {
		return c
	}
	if sf := f.firstScale(); sf != nil && !(sf.kind == loaders.KindGrad && !sf.exact && (f.oneStep || sf.fit < minScaleFit || f.midRunStart(sf.step))) && !(sf.kind == loaders.KindParam && !sf.exact && sf.fit < minScaleFit) {
		// (a value inside the network frozen at capture keeps acting: a
		// break gone the step after, a batch of another size, is not one;
		// and its scale explains most of the difference, or the numbers
		// came some other way; so must a scale of the parameter updates
		// that is not one up to rounding: a learning rate frozen at
		// capture scales every update)
		var ev evidence
		ev.add("%s", sf.String())
		conf := 0.9
		if sf.kind == loaders.KindGrad && !sf.exact {
			ev.add("close to a scale but not one up to rounding (residual %s of the gradients' norm, above the step's gradient noise limit %s): a value inside the network; a Python number frozen there, or a tensor reassigned after capture (reassigned_tensor)", g(sf.residual), g(sf.limit))
			switch bufs, couldSee := f.scheduledBuffers(); {
			case len(bufs) > 0:
				conf = 0.45 // a buffer set each step: reassigned_tensor
			case couldSee:
				conf = 0.6
				ev.add("no buffer of the dumped state changes from step to step, so the value is no module buffer")
			default:
				conf = 0.55
			}
		}
		if !f.s.kinds[loaders.KindGrad] {
			ev.add("%s", f.missing(loaders.KindGrad))
		}
		var fs fitSet
		fs.add(sf.fit)
		what, of := "graph = λ·eager", "the gradients' difference from eager"
		if sf.kind == loaders.KindParam {
			of = "the parameter updates' difference from eager"
		}
		return fs.set(&Cause{ID: CapturedScalar, Confidence: conf, Evidence: ev}, what, of)
	}
	if c := optimizerStep(f); c != nil {
		return c
	}
	if of := f.outputScale(); of != nil {
		var ev evidence
		ev.add("%s", of.String())
		conf := 0.9
		if !of.exact {
			ev.add("close to a scale but not one up to rounding (residual %s of the outputs' norm, above the step's output limit %s): a value inside the network; a Python number frozen there, or a tensor reassigned after capture (reassigned_tensor)", g(of.residual), g(of.limit))
			conf = 0.5
		}
		return of.fits.set(&Cause{ID: CapturedScalar, Confidence: conf, Evidence: ev}, "graph = λ·eager", "the departing outputs' difference from eager")
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
	var ev evidence
	ev.add("graphed loss / eager loss from step %d on: %s — a factor that drifts steadily, as a frozen loss weight or scale gives", f.div, strings.Join(parts, ", "))
	ev.add("%s", f.missing(loaders.KindGrad, loaders.KindParam))
	return &Cause{ID: CapturedScalar, Confidence: 0.6, Evidence: ev}
}

// stateScalar: at the first divergence, state tensors (running
// statistics, EMA weights) whose updates are the eager ones times a factor
// (judge.StepFacts.State) while no gradient, parameter or loss departs
// there — the prediction of a
// scalar that acts on derived state alone, a BatchNorm momentum or an EMA
// decay set from Python after capture: parameters and gradients equal,
// the state's updates scaled by new/old (momentum) or (1 − new)/(1 − old)
// (decay). A branch or a batch of another shape would change the
// gradients. 0.9.
func stateScalar(f *facts) *Cause {
	if s := f.stepFacts(f.div); s != nil && len(s.State) > 0 && !f.departsBesideState(s.State) {
		fit := s.State[0]
		var ev evidence
		more := ""
		if len(s.State) > 1 {
			byBeta := func(x, y judge.StateFit) int { return cmp.Compare(x.Beta, y.Beta) }
			lo, hi := slices.MinFunc(s.State, byBeta), slices.MaxFunc(s.State, byBeta)
			more = fmt.Sprintf(" (and %d more state tensors, factors %s to %s)", len(s.State)-1, g(1+lo.Beta), g(1+hi.Beta))
		}
		ev.add("at step %d the updates of %s are %s× the eager ones%s, a factor that explains %s of their difference, while %s", f.div, fit.Name, g(1+fit.Beta), more, g(fit.Explained), f.gradsAgree(f.div))
		// Explained is the share of the update difference's square the
		// factor explains; its residual's norm is √(1 − Explained) of it
		ev.add("a scalar that acts on derived state alone, held at capture: a BatchNorm momentum (the factor is new/old) or an EMA decay (the factor is (1 − new)/(1 − old)) changed from Python after capture")
		fs := fitSet{1 - math.Sqrt(1-fit.Explained)}
		return fs.set(&Cause{ID: CapturedScalar, Confidence: 0.9, Evidence: ev}, "state update = (1 + β)·eager's", "the state updates' difference from eager")
	}
	return nil
}

// gradsAgree says how the gradients of step k compare: "every gradient
// agrees bit for bit", "every gradient agrees within its limit", or that
// none were dumped.
func (f *facts) gradsAgree(k int) string {
	if !f.s.kinds[loaders.KindGrad] {
		return "the parameters agree (no gradients dumped)"
	}
	if a, b := f.s.get(f.s.a, k, loaders.KindGrad), f.s.get(f.s.b, k, loaders.KindGrad); a != nil && relL2(a, b) == 0 {
		return "every gradient agrees bit for bit"
	}
	return "every gradient agrees within its limit"
}

// proportionalWarning: on a passing comparison, gradients or parameter
// updates that are a scale of the eager ones (exactly, or explaining at
// least minScaleFit of their difference, as for a failed comparison: a
// scale at cosine 0.95 that removes a fifth of the difference is noise
// in bf16 updates), or, in outputs-only dumps, outputs that differ and
// are exactly a scale of eager's (outputScale).
func proportionalWarning(f *facts) *Cause {
	var ev evidence
	for i := range f.s.steps {
		if sf := f.scaleOf(i); sf != nil && (sf.exact || sf.fit >= minScaleFit) {
			ev.add("%s", sf.String())
		}
		if len(ev) >= 3 {
			break
		}
	}
	if len(ev) == 0 {
		if of := f.outputScale(); of != nil && of.exact {
			ev.add("%s", of.String())
			if _, line := f.nearestLimit(); line != "" {
				ev.add("%s", line) // what precision_noise, which is not named beside it, would have said
			}
		}
	}
	if len(ev) == 0 {
		return nil
	}
	ev.add("the differences are inside the thresholds, but a scale factor is no rounding: a learning rate, loss weight or scale differs slightly between the runs")
	return &Cause{ID: CapturedScalar, Confidence: 0.7, Evidence: ev}
}

// scaleFinding is a scale factor between the runs at one step.
type scaleFinding struct {
	step int
	// kind is KindGrad when the gradients are the eager ones times ratio,
	// KindParam when the gradients agree and the parameter updates are.
	kind       loaders.Kind
	ratio, cos float64
	// residual is the part of the graphed gradients that no scale of the
	// eager ones explains, relative to their norm: sin θ = √(1 − cos²).
	// exact is residual ≤ limit, the step's gradient noise limit
	// (judge.StepFacts.GradLimit; Grad·ε when the step was not judged as a
	// whole): a scale up to rounding.
	residual, limit float64
	exact           bool
	// fit is how much of the difference the best scale of the eager
	// values removes (fitOf with P = λ·A, λ = A·B / A·A).
	fit float64
	// beyond is, for a scale of the parameter updates at a step whose
	// gradients failed, the step's facts: its updates departed beyond
	// what its gradients' difference explains (updatesBeyondGrads).
	beyond *judge.StepFacts
}

func (sf *scaleFinding) String() string {
	if sf.kind == loaders.KindParam && sf.beyond != nil {
		return fmt.Sprintf("step %d: the gradients differ by %s (relative L2), the parameter updates by far more (β = %+.3g, beyond the limit %s that difference allows): the graphed updates are the eager ones × %s (cosine %.6f), a learning rate or other optimizer scalar frozen at capture", sf.step, g(sf.beyond.GradRel), sf.beyond.UpdateRatio, g(sf.beyond.UpdateLimit), ratioString(sf.ratio), sf.cos)
	}
	if sf.kind == loaders.KindParam {
		return fmt.Sprintf("step %d: gradients agree, but the graphed parameter updates are the eager ones × %s (cosine %.6f): a learning rate or other optimizer scalar frozen at capture", sf.step, ratioString(sf.ratio), sf.cos)
	}
	if sf.exact {
		return fmt.Sprintf("step %d: the graphed gradients are the eager ones × %s (cosine %.6f): a loss weight or scale frozen at capture", sf.step, ratioString(sf.ratio), sf.cos)
	}
	return fmt.Sprintf("step %d: the graphed gradients are close to the eager ones × %s (cosine %.6f)", sf.step, ratioString(sf.ratio), sf.cos)
}

// scaleAt looks for a scale factor at step k: gradients that are the
// eager ones times a factor, or, where the step's gradients pass the
// verdict or its updates depart beyond what their difference explains
// (updatesBeyondGrads), parameter updates that are. off gives the
// smallest factor distance from 1 that counts. nil when there is none.
func (f *facts) scaleAt(k int, off func(loaders.Kind) float64) *scaleFinding {
	var beyond *judge.StepFacts // the step's facts where its gradients failed and its updates departed further
	if f.gradsFailAt(k) {
		beyond = f.updatesBeyondGrads(k)
	}
	if a, b := f.s.get(f.s.a, k, loaders.KindGrad), f.s.get(f.s.b, k, loaders.KindGrad); a != nil && relL2(a, b) > 0 {
		if ok, c, r := proportional(a, b, off(loaders.KindGrad)); ok {
			sf := &scaleFinding{step: k, kind: loaders.KindGrad, ratio: r, cos: c, residual: math.Sqrt(max(0, 1-c*c)), limit: f.gradLimit(k),
				fit: fitOf(a, b, scaled(a, b))}
			sf.exact = sf.residual <= sf.limit
			return sf
		}
		if f.gradsFailAt(k) && beyond == nil {
			return nil
		}
	}
	p, ok := f.s.prev(k)
	if !ok {
		return nil
	}
	if a, ap, b, bp := f.four(loaders.KindParam, k, p); a != nil {
		ua, ub := sub(a, ap), sub(b, bp)
		if s := f.stepFacts(k); s != nil && s.RectShift != 0 {
			// the part of the update ratio that RAdam's float32
			// rectification explains is rounding (judge.StepFacts.RectShift):
			// the graph's updates are measured against eager's times it
			for i := range ua {
				ua[i] *= 1 + s.RectShift
			}
		}
		if relL2(ua, ub) == 0 {
			return nil
		}
		if ok, c, r := proportional(ua, ub, off(loaders.KindParam)); ok {
			return &scaleFinding{step: k, kind: loaders.KindParam, ratio: r, cos: c, fit: fitOf(ua, ub, scaled(ua, ub)), beyond: beyond}
		}
	}
	return nil
}

// optimizerStep: at the first divergent step, whose gradients were
// dumped, the parameter updates depart from eager's beyond what the
// gradients' difference lets them (updatesBeyondGrads: the verdict's
// update rule, |β| above the gradients' pooled relative difference plus
// the updates' rounding), and no scale of the updates fits (firstScale
// found none): the optimizer took another step for nearly the same
// gradients. A learning rate, momentum or other optimizer scalar frozen
// at capture does that; where the dumps skip steps, the parameters and
// with them the gradients move apart before the next dump, and the
// updates, though far larger or smaller than eager's, are no single
// scale of them. A bug that changes the gradients moves the updates by
// no more than it moves the gradients (on the labelled runs, |β| reaches
// at most 0.85 of the gradients' difference where the cause is not an
// optimizer scalar). 0.6: a scale of the updates would say more.
//
// Prediction: the optimizer's step departs from the one eager's
// gradients give, |β| > UpdateLimit at the first divergent step.
func optimizerStep(f *facts) *Cause {
	if !f.s.kinds[loaders.KindGrad] || f.s.derived != "" {
		return nil
	}
	s := f.updatesBeyondGrads(f.div)
	if s == nil {
		return nil
	}
	var ev evidence
	ev.add("step %d: the parameter updates depart from eager's by β = %+.3g, beyond the limit %s that the gradients' difference (%s, relative L2) and the updates' rounding allow, and by no single scale: the optimizer took another step for nearly the same gradients, as a learning rate, momentum or other optimizer scalar frozen at capture makes it", f.div, s.UpdateRatio, g(s.UpdateLimit), g(s.GradRel))
	if p, ok := f.s.prev(f.div); ok && f.div-p > 1 {
		ev.add("the dumps skip %s before %d: every step from %d to %d would show the updates' scale before the parameters moved apart", words.Plural(f.div-p-1, "step"), f.div, p, f.div)
	}
	return &Cause{ID: CapturedScalar, Confidence: 0.6, Evidence: ev}
}

// updatesBeyondGrads returns the facts of step k where its parameter
// updates depart from eager's by more than its gradients' difference
// explains, as the verdict's update rule measured it (judge.StepFacts:
// UpdateBeyond: |β| above UpdateLimit, which already allows the gradients' pooled
// difference), nil where they do not: then the updates' scale is a
// finding even where the gradients failed, as they do at a sparse dump's
// step when a frozen learning rate has moved the parameters apart over
// the steps between dumps.
func (f *facts) updatesBeyondGrads(k int) *judge.StepFacts {
	if s := f.stepFacts(k); s != nil && s.UpdateLimit > 0 && s.UpdateBeyond() {
		return s
	}
	return nil
}

// gradsFailAt reports whether some gradient pair of step k failed.
func (f *facts) gradsFailAt(k int) bool { return slices.Contains(f.diverged[loaders.KindGrad], k) }

// gradLimit returns the gradient noise limit the verdict applied at step k
// (judge.StepFacts.GradLimit), or DefaultRunRules.Grad·ε of the gradients'
// comparison dtype when the step was not judged as a whole.
func (f *facts) gradLimit(k int) float64 {
	if s := f.stepFacts(k); s != nil && s.GradLimit > 0 {
		return s.GradLimit
	}
	return tolerances.DefaultRunRules.Grad * tolerances.Epsilon(f.compareDType(loaders.KindGrad))
}

// forwardScale returns the first scale finding at or before the first
// divergent step whose gradients are close to a scale of the eager ones
// but not exactly (a value acting inside the network), the scale's fit
// at least minScaleFit, at a step whose inputs, where dumped, agree; nil
// when there is none.
func (f *facts) forwardScale() *scaleFinding {
	sf := f.firstScale()
	if sf == nil || sf.kind != loaders.KindGrad || sf.exact || sf.fit < minScaleFit || slices.Contains(f.diverged[loaders.KindInput], sf.step) {
		return nil
	}
	return sf
}

// minScaleFit is the least fit (fitOf) of the scale λ·eager at which a
// value acting inside the network is named from gradients close to a
// scale: 1 − 1/√2, where ‖B − λA‖² = ½‖B − A‖², the scale explaining half
// of the square of the graphed gradients' difference from eager. Below
// it, most of the difference is something no scale makes (other random
// draws, another function), and a number frozen inside the network is no
// prediction of it.
var minScaleFit = 1 - 1/math.Sqrt2

// firstScale returns the scale finding (scaleAt) of the first sampled step
// at or before the first divergent one that has one, nil when none has.
func (f *facts) firstScale() *scaleFinding {
	for i, k := range f.s.steps {
		if k > f.div {
			break
		}
		if sf := f.scaleOf(i); sf != nil {
			return sf
		}
	}
	return nil
}

// scaleBlock is how many steps' scale findings scaleOf makes at a time.
const scaleBlock = 32

// scaleOf returns scaleAt(f.s.steps[i], f.warnOff), made once: both
// proportionalWarning and firstScale read it, and a correct run looks at
// every sampled step. Steps are looked at scaleBlock at a time, on all
// processors (a step's finding reads only its samples and the result),
// so a run with findings at its first steps looks at a few.
func (f *facts) scaleOf(i int) *scaleFinding {
	if f.scales == nil {
		f.scales = make([]*scaleFinding, len(f.s.steps))
	}
	for f.scaled <= i {
		from, to := f.scaled, min(len(f.s.steps), f.scaled+scaleBlock)
		parallel.For(to-from, runtime.GOMAXPROCS(0), func(j int) {
			f.scales[from+j] = f.scaleAt(f.s.steps[from+j], f.warnOff)
		})
		f.scaled = to
	}
	return f.scales[i]
}

// proportional reports whether b is a multiple of a other than 1, with the
// cosine and norm ratio r = ‖b‖/‖a‖: either clearly (cosine > coarseCos, r
// off 1 by more than coarseOff: a learning rate halved, in bf16 noise), or
// precisely (cosine > fineCos, and |r − 1| above fineOff and fineParallel
// times sin θ = √(1 − cos²): the part of the difference along a is most of
// it, as a factor of 1.001 in float32 gives; correct fp32 Adam vs
// capturable Adam measured ratios within 1e-5 of 1, and rounding drift in
// bf16 moves the norm by less than it turns the direction).
func proportional(a, b vec, fineOff float64) (bool, float64, float64) {
	c, r := cosine(a, b), norm(b)/norm(a)
	off := math.Abs(r - 1)
	coarse := c > proportionalCos && off > proportionalRatio
	fine := c > fineCos && off > fineOff && off > fineParallel*math.Sqrt(max(0, 1-c*c))
	return coarse || fine, c, r
}

// fineParallel: a precise factor's departure from 1, over the part of the
// difference it leaves unexplained (sin θ), is at least this: the factor
// carries over 90% of the squared difference (3² / (3² + 1)).
const fineParallel = 3

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

// departsBesideState reports whether at the first divergent step a
// gradient, a parameter or the loss departs that is none of the state
// tensors fitted (a dump may call BatchNorm's running statistics
// parameters): a scalar on derived state alone leaves what the forward
// and the optimizer make as eager's at that step, and where gradients
// are not dumped, the parameters and the loss are what shows it.
func (f *facts) departsBesideState(state []judge.StateFit) bool {
	for _, t := range f.r.Tensors {
		if t.Step != f.div || t.Status != judge.StatusMismatch {
			continue
		}
		switch t.Kind {
		case loaders.KindGrad, loaders.KindParam, loaders.KindLoss:
			if !slices.ContainsFunc(state, func(s judge.StateFit) bool { return s.Name == t.Name }) {
				return true
			}
		}
	}
	return false
}

// midRunStart reports whether step k is the first dumped step of dumps
// that begin mid-run (after step 1): gradients that differ there may
// have been parted before the dumps began, and gradients accumulated over
// the steps before are close to a scale of one step's, as a value frozen
// inside the network makes them.
func (f *facts) midRunStart(k int) bool { return k == f.firstStep && !f.fromStart() }

// momentRule: at the first divergent step, the compared run's optimizer
// moments, saved without gradients (the checkpoint recipe, Hugging Face's
// optimizer.pt), follow the moment rule with another momentum than the
// one its saved param groups state. Fitted with the reference run's
// gradient (momentFit: m_B ≈ D·m_B′ + G·g_A), the rule (D, G) must hold to
// within rounding, ‖m_B − D·m_B′ − G·g_A‖ ≤ Grad·ε·‖m_B‖ (Grad the run
// rule, ε the dumps' finest floating-point epsilon), while the saved rule
// departs by more than twice that; and it must be a momentum's rule,
// 0 ≤ D < 1 and G > 0. Rounding cannot give such
// a fit, nor can other gradients (a lag, a stale batch, an accumulation):
// what is left of them is another function of the batch, no rule of m_B′
// and g_A. 0.9.
//
// Prediction: the optimizer's step reads its momentum (Adam's β1, SGD's
// momentum) as a Python number, baked in at capture; the loop changes
// the param group's value (OneCycleLR cycling momentum), which the state
// dict saves, while the graph keeps the old one: its moments follow the
// captured rule with the gradient eager's step saw. The gradients derived
// from its moments with the saved rule are not the ones it saw.
func momentRule(f *facts) *Cause {
	mf, ok := f.s.momentFits[f.div]
	if !ok || !(mf.Norm > 0) {
		return nil
	}
	stored := f.storedFloat()
	if stored == loaders.Invalid {
		return nil
	}
	limit := f.r.Rules.Grad * tolerances.Epsilon(stored) * mf.Norm
	if !(mf.Resid <= limit) || !(mf.Dep > 2*limit) || !(mf.D >= 0 && mf.D < 1 && mf.G > 0) {
		return nil
	}
	var ev evidence
	ev.add("step %d: the graphed run's optimizer moments follow m_k = %.6g·m_{k−1} + %.6g·g_k, g_k the gradient the eager run's moments give, to within rounding (residual %s of their norm, limit %s), not the rule its saved param groups state, %s, which misses them by %s of their norm: its step read a momentum (Adam's β1, SGD's momentum) other than the one its param groups hold, a Python number frozen at capture",
		f.div, mf.D, mf.G, g(mf.Resid/mf.Norm), g(limit/mf.Norm), mf.Saved.String(), g(mf.Dep/mf.Norm))
	ev.add("the gradients derived from the graphed run's moments with the saved rule are not the ones it saw: they differ from eager's by that rule's change alone")
	var fs fitSet
	fs.add(1 - mf.Resid/mf.Dep)
	return fs.set(&Cause{ID: CapturedScalar, Confidence: 0.9, Evidence: ev}, "m_k = D·m_{k−1} + G·g_k with eager's gradient", "the moments' departure from their saved rule")
}
