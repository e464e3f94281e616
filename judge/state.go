package judge

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/graphdiff/graphdiff/compare"
	"github.com/graphdiff/graphdiff/loaders"
	"github.com/graphdiff/graphdiff/tolerances"
)

// StateChance is the probability below which a state tensor's update
// difference is too well explained by one factor to be noise (see
// judgeState): one in a million per tensor and step, so that a run of
// thousands of steps with tens of state tensors expects no false alarm
// from chance alone.
const StateChance = 1e-6

// StateFit is what judgeState fitted to one state tensor's updates.
type StateFit struct {
	Name string
	// N is the number of elements; Beta the fitted factor minus 1,
	// β = Σ(u_B − u_A)·u_A / Σu_A²; Explained the share of the update
	// difference that the factor explains, F = (Σ(u_B − u_A)·u_A)² /
	// (Σu_A²·Σ(u_B − u_A)²); Chance the probability of a share that
	// large from noise independent of the update, Pr[Beta(1/2, (N−1)/2)
	// ≥ F]; Limit the |β| that rounding and the gradients' difference
	// explain.
	N                              int64
	Beta, Explained, Chance, Limit float64
}

// isState reports whether pair t, with a measured update, is derived
// state at a step whose gradients (compared or not) are those of the
// subjects in dumped: a tensor that no optimizer steps by a dumped
// gradient — a tensor of no kind word (BatchNorm's running statistics,
// EMA weights, optimizer state), or a parameter whose gradient the step
// did not dump while it dumped others.
func isState(t *Pair, dumped map[string]bool, f *StepFacts) bool {
	switch t.Kind {
	case loaders.KindTensor:
		return true
	case loaders.KindParam:
		return f.Grads > 0 && !dumped[loaders.Subject(t.Name)]
	}
	return false
}

// judgeState fits the graphed run's state updates to the reference run's
// and fails, in out, each state tensor whose update is the reference one
// times a factor: the prediction of a scalar that acts on the state alone
// (a BatchNorm momentum or an EMA decay set from Python after capture, so
// that the graph keeps the old one while parameters and gradients agree
// bit for bit). With u = s_k − s_{k−1} in each run, over the n elements:
//
//	β = Σ(u_B − u_A)·u_A / Σu_A²                        the factor, minus 1
//	F = (Σ(u_B − u_A)·u_A)² / (Σu_A²·Σ(u_B − u_A)²)      the share of ‖u_B − u_A‖² it explains
//	U = Update·max(ε_Adam, ε_s·Σ|s|·|u_A| / Σu_A²) + R  rounding, as for parameters (Step),
//	    R = max(GradRel, PriorGradRel)                  plus what the gradients' difference explains
//	fails when n ≥ 2, |β| > U and Pr[Beta(1/2, (n−1)/2) ≥ F] < StateChance
//
// The state follows its inputs by its own rule (running_mean moves by
// momentum·(batch mean − running_mean), an EMA by (1 − decay)·(p − ema)),
// so in a correct run u_B − u_A is what drifting inputs pass on: a vector
// unrelated to the update itself, whose squared cosine with it, F, is
// distributed as Beta(1/2, (n−1)/2) when its direction is random. A
// changed momentum or decay makes u_B = (1+β)·u_A up to rounding: F = 1.
// U keeps a factor too small to matter (an EMA of a drifting bias is a
// scale of its update by 1e-5) from failing. ε_s is the state's dtype's
// epsilon or the parameters', the coarser. A single element (n = 1) always
// fits a factor, and is never failed by it. A step that dumped neither
// gradients nor parameters (inference: logits, tokens) has nothing the
// state follows, and no state is judged so.
func judgeState(pairs []Pair, out []Decision, f *StepFacts, c Context) {
	if !holdsWeights(pairs, f) {
		return // nothing the state could be said to follow
	}
	dumped := map[string]bool{} // a gradient that could not be read is still dumped
	for i := range pairs {
		if pairs[i].Kind == loaders.KindGrad {
			dumped[loaders.Subject(pairs[i].Name)] = true
		}
	}
	r := max(f.GradRel, c.PriorGradRel)
	for i := range pairs {
		t := &pairs[i]
		if t.Update == nil || t.Metrics == nil || !stepState(t) || !isState(t, dumped, f) {
			continue
		}
		if f.Grads == 0 && isOptimizerState(t) {
			continue // judged as gradients are (RuleOptimizerState): what the gradients did, not a held decay
		}
		s := t.Update.Above(compare.NoGrad)
		if s.N < 2 || s.UU == 0 || s.DD == 0 || math.IsNaN(s.DU) {
			out[i].judged(RuleStateFactor, 0, c.Rules.Update*adamEpsilon+r) // no factor to fit
			continue
		}
		eps := max(c.Precision.ParamEpsilon, tolerances.Epsilon(t.A.Effective()))
		fit := StateFit{Name: t.Name, N: s.N, Beta: s.DU / s.UU, Explained: min(1, s.DU*s.DU/(s.UU*s.DD)),
			Limit: c.Rules.Update*max(adamEpsilon, eps*s.PU/s.UU) + r}
		fit.Chance = distuv.Beta{Alpha: 0.5, Beta: float64(s.N-1) / 2}.Survival(fit.Explained)
		rule, measure, limit := fit.measure()
		if math.Abs(fit.Beta) <= fit.Limit || !(fit.Chance < StateChance) {
			out[i].judged(rule, measure, limit)
			continue
		}
		f.State = append(f.State, fit)
		d := &out[i]
		if d.Status == StatusMatch || d.Status == "" {
			*d = Decision{MaxRelL2: t.Settings.MaxRelL2, MaxMismatchFraction: t.Settings.MaxMismatchFraction}
		}
		d.judged(rule, measure, limit)
		d.Reasons = append(d.Reasons, fmt.Sprintf("its update is %.4g× the reference run's (β = %+.3g, limit |β| ≤ %.3g), a factor that explains %.4g of the difference (chance %.2g from noise over %d elements): a momentum or decay the graph holds at another value",
			1+fit.Beta, fit.Beta, fit.Limit, fit.Explained, fit.Chance, fit.N))
		if d.Status != StatusDTypeMismatch {
			d.Status = StatusMismatch
		}
		if len(f.Reasons) == 0 {
			f.Reasons = append(f.Reasons, t.Name+": "+d.Reasons[len(d.Reasons)-1])
		}
	}
}

// measure returns the state rule of fit nearer to passing it, with its
// measure and limit: RuleStateFactor (|β| against Limit) or
// RuleStateChance (−log10 Chance against −log10 StateChance). The tensor
// fails when both pass their limits, so the one recorded passes its limit
// exactly when the tensor passes.
func (fit StateFit) measure() (Rule, float64, float64) {
	factor := Decision{Rule: RuleStateFactor, Measure: math.Abs(fit.Beta), Limit: fit.Limit}
	chance := Decision{Rule: RuleStateChance, Measure: -math.Log10(fit.Chance), Limit: -math.Log10(StateChance)}
	if chance.Ratio() < factor.Ratio() {
		return chance.Rule, chance.Measure, chance.Limit
	}
	return factor.Rule, factor.Measure, factor.Limit
}

// holdsWeights reports whether the step dumped gradients or parameters:
// what derived state follows, and what must agree for a scalar on the
// state alone to be told from a departure of the whole computation.
func holdsWeights(pairs []Pair, f *StepFacts) bool {
	if f.Grads > 0 {
		return true
	}
	for i := range pairs {
		if pairs[i].Kind == loaders.KindParam && pairs[i].Metrics != nil {
			return true
		}
	}
	return false
}

// stepState reports whether pair t is one the state rule may judge:
// floating point, with thresholds no policy or override set.
func stepState(t *Pair) bool {
	return !t.Settings.PerTensor && t.Settings.DType.IsFloat()
}

// stateDrift decides the tensors at positions sized: each is state of no
// kind word (a buffer, EMA weights, optimizer state) that Tensor failed by
// its size alone, with no NaN/Inf out of place. State follows what it is
// derived from by its own rule — running_mean moves by momentum·(batch
// mean − running_mean), so a bias ahead of the normalization that drifts
// by rounding-level steps shifts it by as much, at any relative size
// (running means sit near 0) — and its size says nothing the gradients do
// not. So where the step dumped gradients, every one of them passes the
// gradient rule and judgeState fitted no factor to the tensor's updates,
// the difference is drift the computation does not see: the tensor passes,
// listed in Drift with State set. Where a gradient fails, or none was
// dumped, it keeps its failure. A buffer the dumped gradients do not read
// (running statistics in training) that departs without a factor passes
// so; an output of the model in eval mode, dumped, would judge it.
func stateDrift(pairs []Pair, out []Decision, sized []int, f *StepFacts) {
	if len(sized) == 0 || f.Grads == 0 {
		return
	}
	g, agree := gradientsAgree(pairs, out, false)
	if !agree {
		return
	}
	for _, i := range sized {
		t := &pairs[i]
		if slices.ContainsFunc(f.State, func(x StateFit) bool { return x.Name == t.Name }) {
			continue
		}
		out[i].Status, out[i].Reasons = StatusMatch, nil
		out[i].rejudged(RuleStepGradients, g.Measure, g.Limit)
		dr := Drift{Name: t.Name, RelL2: t.Metrics.RelL2, Count: t.Metrics.Count, State: true, Unmeasured: t.Update == nil}
		f.Drift = append(f.Drift, dr)
	}
}
