package judge

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/graphdiff/graphdiff/compare"
	"github.com/graphdiff/graphdiff/loaders"
	"github.com/graphdiff/graphdiff/tolerances"
)

// adamEpsilon is the relative rounding of Adam's bias correction 1 − β2^t
// computed in float32 at the default β2 = 0.999: 2^-23/(1 − β2). Eager and
// capturable or fused implementations compute it differently, so their
// updates differ by about this factor at early steps, for every element.
const adamEpsilon = 0x1p-23 / (1 - 0.999)

// radamRect returns what RAdam's float32 arithmetic predicts at optimizer
// step t, at the default β2 = 0.999: the capturable implementation's
// update over the eager one's, minus 1 (pred, ≤ 0), and the rounding of
// that prediction (e, ≥ 0); both 0 where the update is not rectified
// (ρ_t ≤ 5). RAdam scales its update by the rectification
//
//	r(ρ) = sqrt((ρ − 4)(ρ − 2)ρ_∞ / ((ρ_∞ − 4)(ρ_∞ − 2)ρ)),
//	ρ_t = ρ_∞ − T_t,  T_t = 2t·β2^t / (1 − β2^t),  ρ_∞ = 2/(1 − β2) − 1.
//
// The eager implementation computes ρ_t in Python floats; the capturable
// one computes T_t on the device in float32 from β2 rounded to float32
// (0.999 becomes 0.999 + 1.29e-8) and subtracts it from ρ_∞ of the exact
// β2. Both terms are near 2/(1 − β2) = 2000, so
//
//	pred = r(ρ_∞ − T_t(float32(β2))) / r(ρ_t) − 1
//	e    = ½·δ·(1/(ρ_t − 4) + 1/(ρ_t − 2) − 1/ρ_t),  δ = T_t·2^-24/(1 − β2^t)
//
// e the float32 evaluation of T_t: one unit in the last place of β2^t
// carried through 1 − β2^t. pred is −0.76% at t = 6, where rectification
// starts, −0.088% at t = 20, −1.4e-4 at t = 100, −1.4e-5 at t = 1000;
// testdata/gen/optim_rounding.py measured PyTorch 2.11's capturable RAdam
// against the eager one at −0.57%, −0.097%, −1.5e-4 and −7.5e-5 at t = 6,
// 20, 100 and 200, each within pred ± (e + the Adam term of the update
// limit) (optim_rounding.txt); Adam, AdamW, NAdam, Adamax and RMSprop
// stayed within 3e-5, inside that term.
func radamRect(t int) (pred, e float64) {
	const b2 = 0.999
	if t < 1 {
		return 0, 0
	}
	tt := float64(t)
	term := func(b float64) float64 {
		bt := math.Pow(b, tt)
		return 2 * tt * bt / (1 - bt)
	}
	rhoInf := 2/(1-b2) - 1
	rect := func(rho float64) float64 {
		return math.Sqrt((rho - 4) * (rho - 2) * rhoInf / ((rhoInf - 4) * (rhoInf - 2) * rho))
	}
	rho, rho32 := rhoInf-term(b2), rhoInf-term(float64(float32(b2)))
	if !(rho > 5) || !(rho32 > 5) {
		return 0, 0
	}
	delta := term(b2) * 0x1p-24 / (1 - math.Pow(b2, tt))
	return rect(rho32)/rect(rho) - 1, 0.5 * delta * (1/(rho-4) + 1/(rho-2) - 1/rho)
}

// rectifies reports whether the step's optimizer could be RAdam, whose
// rectification rectShift allows for: true unless the step holds an
// optimizer's saved state and none of it is the first moment exp_avg
// that RAdam keeps (SGD's momentum_buffer, RMSprop's square_avg). Where
// no state was saved, graphdiff does not see the optimizer.
func rectifies(pairs []Pair) bool {
	state := false
	for i := range pairs {
		if pairs[i].A == nil {
			continue
		}
		switch pairs[i].A.Moment.State {
		case "":
		case "exp_avg":
			return true
		default:
			state = true
		}
	}
	return !state
}

// rectShift returns the part of a step's update ratio β that RAdam's
// float32 rectification explains (radamRect): β clamped to the range of
// pred ± e over the optimizer steps the step's updates span, widened to
// take in 0, so that the shift only ever brings β nearer 0. A dump
// numbered k holds the parameters after optimizer step t = k + 1 (steps
// numbered from 0), so the update from the previous judged step p to k
// spans t = p + 2 … k + 1 (k + 1 alone where none was judged before). 0
// for a step-less pair or a NaN β. Where the dumps hold no optimizer
// state, graphdiff does not see the optimizer, and the run is allowed the
// rounding of the rule whose capturable arithmetic rounds most; where the
// saved state is no RAdam's (rectifies), judgeUpdates takes no shift. The
// shift is the most a wrong number can hide behind, and only where its
// sign and size are RAdam's at that step.
func rectShift(beta float64, k int, c Context) float64 {
	if k < 0 || math.IsNaN(beta) {
		return 0
	}
	from := k + 1
	if c.HasPrevious && c.Previous >= 0 && c.Previous < k {
		from = c.Previous + 2
	}
	lo, hi := 0.0, 0.0
	for t := from; t <= k+1 && t < from+64; t++ { // pred falls from its first rectified step on
		pred, e := radamRect(t)
		if pred != 0 {
			lo, hi = min(lo, pred-e), max(hi, pred+e)
		}
	}
	return min(max(beta, lo), hi)
}

// StepFacts are the facts of one step that the run-level verdict judged
// its tensors with.
type StepFacts struct {
	Step int
	// Epsilon is the working epsilon ε. The limits: GradLimit is
	// max(Grad·ε, GradGrowth·PriorDrift), UpdateLimit Update·UpdateFloor
	// + max(GradRel, PriorGradRel), LossLimit max(Loss·ε,
	// GradGrowth·PriorLoss), OutputLimit max(Output·ε,
	// GradGrowth·PriorOutput) (see Step).
	Epsilon                                        float64
	GradLimit, UpdateLimit, LossLimit, OutputLimit float64
	// ActivationLimit is max(Output·ε, GradGrowth·PriorActivation): a
	// tapped module's output, or the gradient into it, gets an output's
	// budget of rounding units (see tolerances.RunRules.Output), grown from
	// the activations' own drift while the runs agreed.
	ActivationLimit float64
	// GradScale S is the RMS of every element of the reference run's
	// gradients at this step, over Grads gradient pairs (0 and 0 when the
	// step dumped none).
	GradScale float64
	Grads     int
	// WorstGrad is the gradient with the largest difference ratio
	// RMS(g_B − g_A)/max(RMS(g_A), S), WorstGradRatio that ratio ("" and 0
	// without gradients).
	WorstGrad      string
	WorstGradRatio float64
	// PriorDrift is the largest WorstGradRatio of the passing steps
	// before: the drift the runs had built up while they agreed. GradLimit is max(Grad·ε, GradGrowth ·
	// PriorDrift).
	PriorDrift float64
	// Resolution is ε_p·Σ|p|·|u| / Σu² over the pooled elements: how much
	// storing the parameters in their dtype may round their updates,
	// relative to the updates.
	Resolution float64
	// UpdateFloor is max(ε_Adam, Resolution): how far rounding alone may
	// move the updates, relative to them.
	UpdateFloor float64
	// RectShift is the part of UpdateRatio that RAdam's float32
	// rectification explains at the optimizer steps this step's updates
	// span (rectShift; 0 before rectification starts, or where β is of
	// the other sign): the step's updates fail where |UpdateRatio −
	// RectShift| > UpdateLimit (UpdateBeyond).
	RectShift float64
	// LossRel and OutputRel are the largest relative L2 error of the
	// step's losses and of its outputs (0 without any).
	LossRel, OutputRel float64
	// ActivationRel is the largest relative L2 error of the step's tapped
	// activations and their gradients.
	ActivationRel float64
	// GradRel is the gradients' pooled relative difference,
	// sqrt(Σ_t ‖g_B,t − g_A,t‖² / Σ_t ‖g_A,t‖²) (0 without gradients).
	GradRel float64
	// HealthyFloor is the gradient size above which an element's update
	// is pooled into UpdateRatio: the smallest power of two ≥ √ε·S. Where
	// the step dumped no gradients but the optimizer's moments that carry
	// them (loaders.Moment, matched to their parameters), it is the
	// smallest power of two ≥ √ε·M in the moments' units, M their RMS
	// (MomentScale, over Moments pairs): a moment is an average of the
	// gradients of the last steps, as small where they are rounding. Zero
	// when the step has neither: every element is then pooled.
	HealthyFloor float64
	MomentScale  float64
	Moments      int
	// UpdateRatio is β = Σ(u_B − u_A)·u_A / Σ u_A², over the healthy
	// elements of every parameter whose update was measured (u = p_k −
	// p_{k−1} in each run): the graphed run's update, projected on the
	// eager one, minus 1. NaN when no update was measured. UpdateElems is
	// the number of elements pooled.
	UpdateRatio float64
	UpdateElems int64
	// Drift lists the parameters that differ by more than their dtype's
	// default limit but pass: differences the gradients and the optimizer
	// explain.
	Drift []Drift
	// BaselinePairs is how many of the step's compared pairs a baseline
	// run was compared with; BaselineRel and RunRel are the RMS over them
	// of the baseline's and of the compared run's relative L2 error
	// against the reference (0 without such pairs). BaselineUnused is set
	// where the baseline is farther from the reference than NoiseFactor
	// times the compared run (baselineFacts) and its noise, not used,
	// would have passed a pair that fails without it.
	BaselinePairs       int
	BaselineRel, RunRel float64
	BaselineUnused      bool
	// Flips are the sequences of a decoding step whose greedy tokens
	// differ, each judged a near tie or not (decideTokens).
	Flips []FlipFact
	// State lists the state tensors whose updates are the reference
	// run's times a factor (judgeState), which fail.
	State []StateFit
	// Reasons say why the step failed; empty when it passed.
	Reasons []string
}

// Drift describes a parameter whose difference passes because the
// gradients and the optimizer explain it.
type Drift struct {
	Name  string
	RelL2 float64
	// NoisyElems of Count elements have gradients below the healthy floor
	// (rounding-level): Adam-family optimizers turn that noise into
	// full-size steps, differently in each run. NoisyShare is their share
	// of the tensor's squared difference, ‖Δu‖² over them / ‖Δu‖².
	NoisyElems, Count int64
	NoisyShare        float64
	// GradRatio is the parameter's gradient RMS over the step's gradient
	// scale; UpdateRMS the RMS of its update in the reference run.
	GradRatio, UpdateRMS float64
	// Elements are the elements of largest update difference among those
	// with rounding-level gradients (from compare.Update.Worst, so at most
	// compare.WorstElems), largest first.
	Elements []compare.UpdateElem
	// State is set for derived state (a tensor of no kind word: running
	// statistics, EMA weights, optimizer state) whose difference passed
	// because every gradient of the step agrees and its updates fit no
	// factor (see stateDrift).
	State bool
	// Unmeasured is set for a parameter whose update could not be
	// measured (no previous step dumped alike) and whose difference passed
	// because every gradient of the step agrees (see unmeasuredDrift):
	// NoisyElems, NoisyShare, UpdateRMS and Elements are then zero.
	Unmeasured bool
}

// Context is what Step needs besides the step's pairs: the run's
// precision and rules, and what the steps before it showed.
type Context struct {
	// Precision gives the working epsilon ε (Precision.Epsilon) and the
	// epsilon of the dtype the parameters are stored in
	// (Precision.ParamEpsilon): the optimizer's own arithmetic rounds at
	// that level.
	Precision tolerances.Precision
	Rules     tolerances.RunRules
	// PriorDrift is the largest WorstGradRatio of the passing steps
	// before, PriorGradRel their largest GradRel, PriorLoss and
	// PriorOutput their largest LossRel and OutputRel (0 for the first
	// step).
	PriorDrift, PriorGradRel, PriorLoss, PriorOutput float64
	// PriorActivation is the passing steps' largest ActivationRel.
	PriorActivation float64
	// Agreeing counts the passing steps before (the ones the priors come
	// from), for the reasons to say what their limits grew from.
	Agreeing int
	// Previous is the step judged before this one, HasPrevious whether
	// one was: the parameter updates of this step span the optimizer
	// steps after it (rectShift).
	Previous    int
	HasPrevious bool
}

// NewContext returns the context of a run's first step.
func NewContext(p tolerances.Precision, rules tolerances.RunRules) Context {
	return Context{Precision: p, Rules: rules}
}

// Next returns the context of the step after one with facts f. Only a
// step that passed adds to the priors: they are the drift the runs built
// up while they agreed, and a bug's own departure must not widen the
// limits of the steps after it.
func (c Context) Next(f StepFacts) Context {
	c.Previous, c.HasPrevious = f.Step, true
	if len(f.Reasons) > 0 {
		return c
	}
	c.Agreeing++
	if !math.IsInf(f.WorstGradRatio, 0) && !math.IsNaN(f.WorstGradRatio) {
		c.PriorDrift = max(c.PriorDrift, f.WorstGradRatio)
	}
	finite := func(x float64) bool { return !math.IsInf(x, 0) && !math.IsNaN(x) }
	if finite(f.GradRel) {
		c.PriorGradRel = max(c.PriorGradRel, f.GradRel)
	}
	if finite(f.LossRel) {
		c.PriorLoss = max(c.PriorLoss, f.LossRel)
	}
	if finite(f.OutputRel) {
		c.PriorOutput = max(c.PriorOutput, f.OutputRel)
	}
	if finite(f.ActivationRel) {
		c.PriorActivation = max(c.PriorActivation, f.ActivationRel)
	}
	return c
}

// Step judges the pairs of one step as a whole (step-less pairs count as
// one step) in context c. It returns the step's facts and, by position,
// the decision on each compared pair (one with Metrics); a pair not
// compared gets the zero Decision, for its caller to fill from what could
// be read. Pairs the run-level rules do not cover (inputs, other tensors,
// parameters without a measured update, pairs whose thresholds a policy
// or an override set) are decided alone, by Tensor. The rules:
//
//	S      = sqrt(Σ_t ‖g_A,t‖² / Σ_t n_t)         gradient scale, over the step's gradients
//	r_t    = ‖g_B,t − g_A,t‖ / max(‖g_A,t‖, S·sqrt(n_t))
//	grad t fails when   r_t > max(Grad·ε, GradGrowth·PriorDrift)
//	loss fails when     ‖L_B − L_A‖/‖L_A‖ > max(Loss·ε, GradGrowth·PriorLoss)
//	output fails when   ‖o_B − o_A‖/‖o_A‖ > max(Output·ε, GradGrowth·PriorOutput)
//	activation fails when (a tapped module's output, or the gradient into it)
//	                    ‖a_B − a_A‖/‖a_A‖ > max(Output·ε, GradGrowth·PriorActivation)
//	param t fails when  it moved in one run and not at all in the other
//	                    (p_k = p_{k−1} bit for bit), by more than one unit
//	                    in the last place of its dtype in some element
//	                    (|u| > ε_p·|p|: an update that rounds to nothing
//	                    in one run may round to one unit in the other), or
//	                    |β| > U and |β_t| > U, or
//	                    |β| > U and t has the step's largest |Σ(u_B−u_A)·u_A|
//	                    where β_t is β over t's healthy elements alone and
//	                    U = Update·max(ε_Adam, ε_p·Σ|p|·|u_A| / Σu_A²) + R:
//	                    rounding in Adam's bias correction (ε_Adam = 2^-23/(1 −
//	                    0.999): 1 − β2^t rounded in float32 at the default β2) or
//	                    in storing p + u in the parameters' dtype (each update
//	                    rounded by up to ε_p·|p|; pooled, relative to the
//	                    updates), plus what the gradients' own relative
//	                    difference R = max(GradRel, PriorGradRel) explains: for
//	                    u = −lr·g, |β| ≤ ‖Δu‖/‖u‖ = R (Cauchy–Schwarz); optimizer
//	                    state carries earlier steps' gradients, hence the prior.
//	state t fails when  its updates are the reference run's times a factor
//	                    (judgeState: a momentum or decay held at capture);
//	                    its size alone does not fail it where every gradient
//	                    passes (stateDrift). State: a tensor of no kind word
//	                    with a measured update, or a parameter whose
//	                    gradient the step did not dump while it dumped others.
//
// A failure of NaN/±Inf positions, or of differing dtypes, is decided as in
// Tensor. A tensor whose max_rel_l2 a policy rule or an override set is
// left to Tensor: the user chose its threshold (a gradient still counts
// towards S); so is a pair compared as integers (token ids, counters),
// which must be equal, not within rounding. A parameter difference is not judged by its size: a
// parameter whose gradients are rounding-level (the key bias of attention,
// a bias ahead of a normalization, embedding rows a batch does not touch)
// takes optimizer steps of random sign in any correct run. Such
// differences beyond the dtype's default max_rel_l2 are listed in Drift.
//
// A baseline's noise (Pair.Noise) raises each limit to NoiseFactor times
// the baseline's own difference, at a step where the baseline serves
// (baselineFacts). Where it does not, the step is judged without it, and
// BaselineUnused says so when that changed a decision: when its noise
// would have passed a pair that fails without it. The pairs keep their
// Noise either way.
func Step(pairs []Pair, c Context) (StepFacts, []Decision) {
	var b StepFacts
	serves := baselineFacts(pairs, &b) || b.BaselinePairs == 0
	judged := pairs
	if !serves {
		judged = withoutNoise(pairs)
	}
	f, out := step(judged, c)
	f.BaselinePairs, f.BaselineRel, f.RunRel = b.BaselinePairs, b.BaselineRel, b.RunRel
	if !serves {
		_, with := step(pairs, c)
		f.BaselineUnused = !slices.EqualFunc(with, out, func(x, y Decision) bool { return x.Status == y.Status })
	}
	return f, out
}

// step is Step with each pair's Noise used as it is.
func step(pairs []Pair, c Context) (StepFacts, []Decision) {
	eps, rules, prior := c.Precision.Epsilon, c.Rules, c.PriorDrift
	f := StepFacts{Epsilon: eps, GradLimit: max(rules.Grad*eps, rules.GradGrowth*prior), PriorDrift: prior,
		LossLimit: max(rules.Loss*eps, rules.GradGrowth*c.PriorLoss), OutputLimit: max(rules.Output*eps, rules.GradGrowth*c.PriorOutput),
		ActivationLimit: max(rules.Output*eps, rules.GradGrowth*c.PriorActivation),
		UpdateRatio:     math.NaN()}
	if len(pairs) > 0 {
		f.Step = pairs[0].Step
	}
	grads := poolGradients(pairs, &f)
	// at a step that dumped no gradients, the optimizer's state is what
	// the dumps hold of them: its moments stand in for them where they
	// name their parameters, and all of it is judged as gradients are,
	// each member against its own scale (stateScale)
	var moments map[string]*Pair
	var stateScale map[string]float64
	minExp := compare.NoGrad // every element, when the step has no gradients
	if f.Grads > 0 {
		f.HealthyFloor, minExp = healthyFloor(math.Sqrt(eps) * f.GradScale)
	} else if moments, stateScale = poolOptimizerState(pairs, &f); f.MomentScale > 0 {
		f.HealthyFloor, minExp = healthyFloor(math.Sqrt(eps) * f.MomentScale)
	}
	// gradOf reports whether parameter t's update is binned by a size of
	// its gradient the floor applies to: its gradient's, or its moment's
	gradOf := func(t *Pair) bool {
		if f.Grads > 0 {
			return grads[loaders.Subject(t.Name)] != nil
		}
		return moments[t.Name] != nil
	}

	out := make([]Decision, len(pairs))
	var unmeasured []int // parameters without an update, beyond their limits, with a gradient
	var sized []int      // tensors of no kind word failed alone by their size
	var du, uu, pu float64
	var updates []contribution
	for i := range pairs {
		t := &pairs[i]
		if t.Metrics == nil {
			continue
		}
		if t.Decode != nil && !t.Settings.PerTensor && !t.Settings.DType.IsFloat() {
			out[i] = decideTokens(t, &f, c) // a decoding step's tokens: near ties
			continue
		}
		if t.Settings.PerTensor || !t.Settings.DType.IsFloat() {
			out[i] = Tensor(t) // the user set its thresholds, or integers: exact
			continue
		}
		d := Decision{MaxRelL2: t.Settings.MaxRelL2, MaxMismatchFraction: t.Settings.MaxMismatchFraction}
		m := t.Metrics
		switch t.Kind {
		case loaders.KindGrad:
			r := gradRatio(m, f.GradScale)
			if r > f.WorstGradRatio || f.WorstGrad == "" {
				f.WorstGrad, f.WorstGradRatio = t.Name, r
			}
			limit := f.GradLimit
			if t.Noise != nil && m.Count > 0 && f.GradScale > 0 {
				// the baseline's own difference, as a ratio of S
				limit = max(limit, NoiseFactor*t.Noise.RelL2*m.NormA/math.Sqrt(float64(m.Count))/f.GradScale)
			}
			d.judged(RuleGradRatio, r, limit)
			if r > limit {
				d.Reasons = append(d.Reasons, fmt.Sprintf("gradient difference RMS %.3g is %.3g of max(its RMS %.3g, the step's gradient scale %.3g) (limit %.3g: %s)",
					m.NormDiff/math.Sqrt(float64(max(m.Count, 1))), r, m.NormA/math.Sqrt(float64(max(m.Count, 1))), f.GradScale, limit, limitWords(rules.Grad, rules.GradGrowth, prior, c.Agreeing)))
			}
		case loaders.KindLoss, loaders.KindOutput, loaders.KindActivation, loaders.KindActivationGrad:
			judgeLevel(t, &d, &f, c)
		case loaders.KindParam:
			if t.Update == nil { // no previous step: judged alone, or by the step's gradients
				out[i] = Tensor(t)
				if out[i].Status == StatusMismatch && specialsReason(m) == "" && (f.Grads > 0 || f.Moments > 0) && gradOf(t) {
					unmeasured = append(unmeasured, i)
				}
				continue
			}
			u := t.Update
			switch { // moves of one unit in the last place at most are rounding (compare.Update)
			case u.MovedA == 0 && u.MovedB > u.UlpMovedB:
				d.Reasons = append(d.Reasons, fmt.Sprintf("left unchanged by the reference run but moved by the compared run (%d of %d elements)", u.MovedB, u.Count))
				d.judged(RuleMovedOneRun, float64(u.MovedB), float64(u.UlpMovedB))
			case u.MovedB == 0 && u.MovedA > u.UlpMovedA:
				d.Reasons = append(d.Reasons, fmt.Sprintf("moved by the reference run (%d of %d elements) but left unchanged by the compared run", u.MovedA, u.Count))
				d.judged(RuleMovedOneRun, float64(u.MovedA), float64(u.UlpMovedA))
			}
			if gradOf(t) || f.Grads == 0 && f.Moments == 0 {
				h := u.Above(minExp)
				du += h.DU
				uu += h.UU
				pu += h.PU
				f.UpdateElems += h.N
				updates = append(updates, contribution{i, h.DU, h.UU})
			}
			if dr, ok := drift(t, grads[loaders.Subject(t.Name)], f, minExp); ok {
				f.Drift = append(f.Drift, dr)
			}
		default:
			if stateScale != nil && isOptimizerState(t) {
				r := gradRatio(m, stateScale[t.A.Moment.State])
				d.judged(RuleOptimizerState, r, f.GradLimit)
				if r > f.GradLimit {
					d.Reasons = append(d.Reasons, fmt.Sprintf("optimizer state difference RMS %.3g is %.3g of max(its RMS %.3g, the step's %s scale %.3g) (limit %.3g: %s; judged as a gradient, none being dumped)",
						m.NormDiff/math.Sqrt(float64(max(m.Count, 1))), r, m.NormA/math.Sqrt(float64(max(m.Count, 1))), t.A.Moment.State, stateScale[t.A.Moment.State], f.GradLimit, limitWords(rules.Grad, rules.GradGrowth, prior, c.Agreeing)))
				}
				break
			}
			out[i] = Tensor(t)
			if t.Kind == loaders.KindTensor && out[i].Status == StatusMismatch && specialsReason(m) == "" {
				sized = append(sized, i)
			}
			continue
		}
		if r := specialsReason(m); r != "" {
			d.Reasons = append(d.Reasons, r)
			d.judged(RuleSpecials, float64(m.SpecialMismatches), 0)
		}
		settle(t, &d)
		out[i] = d
	}
	if uu > 0 {
		f.UpdateRatio = du / uu
		f.Resolution = c.Precision.ParamEpsilon * pu / uu
	}
	judgeUpdates(&f, out, updates, c, rectifies(pairs))
	judgeState(pairs, out, &f, c)
	unmeasuredDrift(pairs, out, unmeasured, grads, &f)
	stateDrift(pairs, out, sized, &f)
	for i := range pairs {
		t, rs := &pairs[i], out[i].Reasons
		switch { // said once, after its last reason
		case len(rs) == 0 || !t.Settings.DType.IsFloat():
		case t.Decode != nil && t.Decode.Selective():
			rs[len(rs)-1] += fmt.Sprintf(" (measured over the %d logits of the sequences that had not parted, %d masks left out)", t.Decode.LogitsCount, t.Decode.Masked)
		case t.Masked > 0:
			rs[len(rs)-1] += fmt.Sprintf(" (measured without its %d masks: elements equal in both runs at half the dtype's largest finite value or more)", t.Masked)
		}
	}
	for i, d := range out {
		if d.Status != "" && d.Status != StatusMatch && len(f.Reasons) == 0 && (stepRuled(&pairs[i]) || stateScale != nil && isOptimizerState(&pairs[i])) {
			f.Reasons = append(f.Reasons, pairs[i].Name+": "+d.Reasons[len(d.Reasons)-1])
		}
	}
	sort.SliceStable(f.Drift, func(i, j int) bool { return f.Drift[i].RelL2 > f.Drift[j].RelL2 })
	return f, out
}

// unmeasuredDrift decides the parameters at positions unmeasured: each
// has no update to measure (the first dumped step, or a step whose
// previous one was not dumped alike), its own gradient at this step, and a
// difference beyond its limit, with no NaN/Inf out of place. A gradient is
// a function of the parameters: parameters that differ where the model's
// computation can see it give gradients that differ. So where every
// gradient of the step passes the gradient rule, such a parameter's
// difference is drift the computation does not see (a bias before a
// normalization, attention's key bias, rows a batch does not touch, after
// steps of random sign that were not dumped: DESIGN.md's measurements) and
// passes, listed in Drift with Unmeasured set; where some gradient fails,
// the parameter keeps its failure. A parameter with no dumped gradient
// (params-only dumps) cannot be judged so and keeps its decision alone.
func unmeasuredDrift(pairs []Pair, out []Decision, unmeasured []int, grads map[string]*Pair, f *StepFacts) {
	if len(unmeasured) == 0 {
		return
	}
	g, agree := gradientsAgree(pairs, out, f.Grads == 0)
	if !agree {
		return // the gradients see a difference: the parameters keep their failures
	}
	rule := RuleStepGradients
	if f.Grads == 0 {
		rule = RuleStepMoments
	}
	for _, i := range unmeasured {
		t := &pairs[i]
		out[i].Status, out[i].Reasons = StatusMatch, nil
		out[i].rejudged(rule, g.Measure, g.Limit)
		dr := Drift{Name: t.Name, RelL2: t.Metrics.RelL2, Count: t.Metrics.Count, Unmeasured: true}
		if g := grads[loaders.Subject(t.Name)]; f.GradScale > 0 && g.Metrics.Count > 0 {
			dr.GradRatio = g.Metrics.NormA / math.Sqrt(float64(g.Metrics.Count)) / f.GradScale
		}
		f.Drift = append(f.Drift, dr)
	}
}

// limitWords says what a step rule's limit max(k·ε, growth·prior) was
// made of: "11·ε, or 6.9× the 0.0021 of the steps before" where agreeing
// steps before it differed, "11·ε; the 3 steps before agree exactly" (or "the step before agrees")
// where they did not, "11·ε; no agreeing step before" where there were
// none.
func limitWords(k, growth, prior float64, agreeing int) string {
	switch {
	case agreeing == 0:
		return fmt.Sprintf("%g·ε; no agreeing step before", k)
	case prior == 0 && agreeing == 1:
		return fmt.Sprintf("%g·ε; the step before agrees exactly", k)
	case prior == 0:
		return fmt.Sprintf("%g·ε; the %d steps before agree exactly", k, agreeing)
	}
	return fmt.Sprintf("%g·ε, or %g× the %.3g of the steps before", k, growth, prior)
}

// judgeLevel decides a loss or an output t (into d) by its relative L2
// error against the step's limit for its kind, raised to NoiseFactor times
// the baseline's, and records its error in f.
func judgeLevel(t *Pair, d *Decision, f *StepFacts, c Context) {
	m, rules := t.Metrics, c.Rules
	limit, what, k, prior := f.LossLimit, "loss", rules.Loss, c.PriorLoss
	switch t.Kind {
	case loaders.KindOutput:
		limit, what, k, prior = f.OutputLimit, "output", rules.Output, c.PriorOutput
		f.OutputRel = max(f.OutputRel, m.RelL2)
	case loaders.KindActivation, loaders.KindActivationGrad:
		limit, what, k, prior = f.ActivationLimit, "activation", rules.Output, c.PriorActivation
		if t.Kind == loaders.KindActivationGrad {
			what = "activation gradient"
		}
		f.ActivationRel = max(f.ActivationRel, m.RelL2)
	default:
		f.LossRel = max(f.LossRel, m.RelL2)
	}
	if t.Noise != nil {
		limit = max(limit, NoiseFactor*t.Noise.RelL2)
	}
	d.MaxRelL2 = limit
	d.judged(RuleRelL2, m.RelL2, limit)
	if m.RelL2 > limit {
		d.Reasons = append(d.Reasons, fmt.Sprintf("%s relative L2 error %.3g > %.3g (%s)",
			what, m.RelL2, limit, limitWords(k, rules.GradGrowth, prior, c.Agreeing)))
	}
}

// poolGradients sets f's gradient scale S, pooled relative difference
// and count from the compared gradients of pairs, and returns them by
// subject (loaders.Subject), for the parameters to find theirs.
func poolGradients(pairs []Pair, f *StepFacts) map[string]*Pair {
	var sumSq, sumSqD float64
	var n int64
	grads := make(map[string]*Pair, len(pairs))
	for i := range pairs {
		t := &pairs[i]
		if t.Kind == loaders.KindGrad && t.Metrics != nil {
			sumSq += t.Metrics.NormA * t.Metrics.NormA
			sumSqD += t.Metrics.NormDiff * t.Metrics.NormDiff
			n += t.Metrics.Count
			f.Grads++
			grads[loaders.Subject(t.Name)] = t
		}
	}
	if n > 0 {
		f.GradScale = math.Sqrt(sumSq / float64(n))
	}
	switch {
	case sumSqD == 0:
	case sumSq == 0:
		f.GradRel = math.Inf(1)
	default:
		f.GradRel = math.Sqrt(sumSqD / sumSq)
	}
	return grads
}

// isMoment reports whether t is an optimizer's moment matched to its
// parameter (loaders.Moment.Param) in both runs alike.
func isMoment(t *Pair) bool {
	return isOptimizerState(t) && t.A.Moment.Param != ""
}

// isOptimizerState reports whether t is a tensor of an optimizer's state
// (loaders.Moment.State) in both runs alike.
func isOptimizerState(t *Pair) bool {
	return t.Kind == loaders.KindTensor && t.A != nil && t.B != nil && t.A.Moment.State != "" && t.A.Moment == t.B.Moment
}

// poolOptimizerState returns, by member (exp_avg, exp_avg_sq, ...), the
// RMS of every element of the reference run's optimizer state at this
// step (isOptimizerState), and the moments that name their parameter
// (isMoment) by that parameter's pair name; it sets f's MomentScale M,
// the RMS of every element of those moments, and Moments, their number.
func poolOptimizerState(pairs []Pair, f *StepFacts) (map[string]*Pair, map[string]float64) {
	sumSq, n := map[string]float64{}, map[string]int64{}
	var momentSq float64
	var momentN int64
	moments := map[string]*Pair{}
	for i := range pairs {
		t := &pairs[i]
		if t.Metrics == nil || !isOptimizerState(t) {
			continue
		}
		sq := t.Metrics.NormA * t.Metrics.NormA
		sumSq[t.A.Moment.State] += sq
		n[t.A.Moment.State] += t.Metrics.Count
		if isMoment(t) && t.Settings.DType.IsFloat() {
			momentSq += sq
			momentN += t.Metrics.Count
			f.Moments++
			moments[t.A.Moment.Param] = t
		}
	}
	scale := make(map[string]float64, len(n))
	for k, c := range n {
		if c > 0 {
			scale[k] = math.Sqrt(sumSq[k] / float64(c))
		}
	}
	if momentN > 0 {
		f.MomentScale = math.Sqrt(momentSq / float64(momentN))
	}
	return moments, scale
}

// contribution is one parameter's part of the step's update ratio: its
// position in the step's pairs and its sums Σ(u_B−u_A)·u_A and Σu_A².
type contribution struct {
	i      int
	du, uu float64
}

// judgeUpdates sets f's update floor and limit and, when the step's
// update ratio passes the limit, its reason, and fails (in out, by
// position) each parameter whose own ratio passes it, or else the one of
// largest contribution.
func judgeUpdates(f *StepFacts, out []Decision, updates []contribution, c Context, rectified bool) {
	rules := c.Rules
	f.UpdateFloor = max(adamEpsilon, f.Resolution)
	f.UpdateLimit = rules.Update*f.UpdateFloor + max(f.GradRel, c.PriorGradRel)
	if rectified {
		f.RectShift = rectShift(f.UpdateRatio, f.Step, c)
	}
	for _, u := range updates {
		out[u.i].judged(RuleUpdateRatio, updateMeasure(f.UpdateRatio, f.RectShift, u), f.UpdateLimit)
	}
	if f.UpdateBeyond() {
		rect := ""
		if f.RectShift != 0 {
			rect = fmt.Sprintf(", less the %+.3g RAdam's float32 rectification may give", f.RectShift)
		}
		f.Reasons = append(f.Reasons, fmt.Sprintf("update ratio β = %+.3g: the compared run's parameter updates are %.3g× the reference run's, while its gradients differ by %.3g relative L2 at most (limit |β%s| ≤ %.3g = %g·max(ε_Adam %.3g, storage rounding %.3g) + %.3g)",
			f.UpdateRatio, 1+f.UpdateRatio, max(f.GradRel, c.PriorGradRel), rect, f.UpdateLimit, rules.Update, adamEpsilon, f.Resolution, max(f.GradRel, c.PriorGradRel)))
		blamed := false
		var largest *contribution
		for i := range updates {
			c := &updates[i]
			if largest == nil || math.Abs(c.du) > math.Abs(largest.du) {
				largest = c
			}
			if c.uu > 0 && math.Abs(c.du/c.uu-f.RectShift) > f.UpdateLimit {
				blame(&out[c.i], *f, c.du/c.uu)
				blamed = true
			}
		}
		if !blamed && largest != nil {
			blame(&out[largest.i], *f, largest.du/math.Max(largest.uu, math.SmallestNonzeroFloat64))
			out[largest.i].judged(RuleStepUpdateRatio, math.Abs(f.departure()), f.UpdateLimit)
		}
	}
}

// UpdateBeyond reports whether the step's parameter updates depart from
// the reference run's beyond its update limit: |UpdateRatio − RectShift| >
// UpdateLimit (false for a NaN UpdateRatio: no update measured).
func (f StepFacts) UpdateBeyond() bool { return math.Abs(f.departure()) > f.UpdateLimit }

// departure is the step's update ratio less what RAdam's rectification
// explains: UpdateRatio − RectShift, what the update limit bounds.
func (f StepFacts) departure() float64 { return f.UpdateRatio - f.RectShift }

// updateMeasure returns a parameter's RuleUpdateRatio measure, min(|β −
// shift|, |β_t − shift|), from the step's update ratio beta, its
// RectShift and the parameter's part of it: the parameter fails the
// update rule only when both pass the limit (or, of largest contribution,
// when no parameter's own does). β_t is 0 where the parameter has no
// update on its healthy elements, and so is β where no update was
// measured (NaN).
func updateMeasure(beta, shift float64, u contribution) float64 {
	own := 0.0
	if u.uu > 0 {
		own = math.Abs(u.du/u.uu - shift)
	}
	if math.IsNaN(beta) {
		return own
	}
	beta -= shift
	return min(math.Abs(beta), own)
}

// gradientsAgree returns the decision on the step's compared gradient
// nearest to its limit (largest Ratio) and whether every compared gradient
// passed; with moments, the same of the optimizer's moments that stand
// in for the gradients of a step that dumped none (isMoment).
func gradientsAgree(pairs []Pair, out []Decision, moments bool) (Decision, bool) {
	var worst Decision
	for i := range pairs {
		if pairs[i].Metrics == nil || !moments && pairs[i].Kind != loaders.KindGrad || moments && !isMoment(&pairs[i]) {
			continue
		}
		if out[i].Status != StatusMatch {
			return out[i], false
		}
		if worst.Rule == "" || out[i].Ratio() > worst.Ratio() {
			worst = out[i]
		}
	}
	return worst, true
}

// stepRuled reports whether the run-level rules decided pair p (Step),
// rather than Tensor alone.
func stepRuled(p *Pair) bool {
	switch {
	case p.Metrics == nil || p.Settings.PerTensor || !p.Settings.DType.IsFloat():
		return false
	case p.Kind == loaders.KindParam:
		return p.Update != nil
	}
	switch p.Kind {
	case loaders.KindGrad, loaders.KindLoss, loaders.KindOutput, loaders.KindActivation, loaders.KindActivationGrad:
		return true
	}
	return false
}

// blame fails the parameter decided by d for the step's update ratio; its
// own is beta.
func blame(d *Decision, f StepFacts, beta float64) {
	of := "gradients"
	if f.Grads == 0 && f.Moments > 0 {
		of = "optimizer moments"
	}
	d.Reasons = append(d.Reasons, fmt.Sprintf("its update is %.3g× the reference run's (β = %+.3g over elements with %s ≥ %.3g), and the step's is %.3g× (limit |β| ≤ %.3g)",
		1+beta, beta, of, f.HealthyFloor, 1+f.UpdateRatio, f.UpdateLimit))
	if d.Status != StatusDTypeMismatch {
		d.Status = StatusMismatch
	}
}

// gradRatio returns RMS(Δg)/max(RMS(g_A), S): 0 for equal gradients, +Inf
// for differing ones where both are 0.
func gradRatio(m *compare.Metrics, scale float64) float64 {
	if m.NormDiff == 0 || m.Count == 0 {
		return 0
	}
	sq := math.Sqrt(float64(m.Count))
	den := max(m.NormA/sq, scale)
	if den == 0 {
		return math.Inf(1)
	}
	return m.NormDiff / sq / den
}

// healthyFloor returns the smallest power of two ≥ x and the update bin
// exponent whose elements are at least that large (compare.UpdateBin: |g|
// in [2^(Exp−1), 2^Exp)). For x = 0 it is the smallest float32 normal.
func healthyFloor(x float64) (float64, int) {
	if x <= 0 || math.IsNaN(x) {
		return 0x1p-126, -125
	}
	_, e := math.Frexp(x) // x = m·2^e, m in [0.5, 1)
	floor := math.Ldexp(1, e-1)
	if floor < x {
		floor, e = floor*2, e+1
	}
	// elements with |g| ≥ 2^(e−1) are in bins Exp ≥ e
	return floor, max(e, -125)
}

// drift describes parameter t when its difference is beyond its dtype's
// default limit (the per-tensor rule a parameter would fail alone).
func drift(t, grad *Pair, f StepFacts, minExp int) (Drift, bool) {
	m := t.Metrics
	if m.RelL2 <= t.Settings.MaxRelL2 || math.IsNaN(m.RelL2) {
		return Drift{}, false
	}
	dr := Drift{Name: t.Name, RelL2: m.RelL2, Count: t.Update.Count}
	var uu, dd, noisyDD float64
	for _, b := range t.Update.Bins {
		uu += b.UU
		dd += b.DD
		if b.Exp < minExp {
			dr.NoisyElems += b.N
			noisyDD += b.DD
		}
	}
	if dd > 0 {
		dr.NoisyShare = noisyDD / dd
	}
	for _, w := range t.Update.Worst {
		if w.Exp < minExp {
			dr.Elements = append(dr.Elements, w)
		}
	}
	if t.Update.Count > 0 {
		dr.UpdateRMS = math.Sqrt(uu / float64(t.Update.Count))
	}
	if grad != nil && f.GradScale > 0 && grad.Metrics.Count > 0 {
		dr.GradRatio = grad.Metrics.NormA / math.Sqrt(float64(grad.Metrics.Count)) / f.GradScale
	}
	return dr, true
}
