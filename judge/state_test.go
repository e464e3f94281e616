package judge

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/graphdiff/graphdiff/compare"
	"github.com/graphdiff/graphdiff/loaders"
)

// stateUpdate sums the updates uA and uB of a state tensor s (its previous
// values) into an Update's one bin, as compare.Updates does for a tensor
// without a gradient.
func stateUpdate(s, uA, uB []float64) *compare.Update {
	b := compare.UpdateBin{Exp: compare.NoGrad, N: int64(len(uA))}
	for i := range uA {
		d := uB[i] - uA[i]
		b.UU += uA[i] * uA[i]
		b.DU += d * uA[i]
		b.DD += d * d
		b.PU += math.Abs(s[i]) * math.Abs(uA[i])
	}
	n := int64(len(uA))
	return &compare.Update{Count: n, MovedA: n, MovedB: n, Bins: []compare.UpdateBin{b}}
}

// runningMean is the step of a BatchNorm's running mean over c channels
// with momentum m in each run: s the running mean both runs held, batch
// the batch means, drift what the compared run's batch means differ by
// (an upstream bias that drifted). It returns the pair, its update
// measured, with the gradient and parameter pairs of a step that agree.
func runningMean(c int, mA, mB, drift float64, rng *rand.Rand) []Pair {
	s, uA, uB := make([]float64, c), make([]float64, c), make([]float64, c)
	for i := range s {
		s[i] = rng.NormFloat64()
		batch := s[i] + 0.3*rng.NormFloat64()
		uA[i] = mA * (batch - s[i])
		uB[i] = mB * (batch + drift*rng.NormFloat64() - s[i])
	}
	bn := stepPair("params/bn.running_mean", loaders.KindParam, int64(c), 1, 0.01)
	bn.Update = stateUpdate(s, uA, uB)
	g := stepPair("grads/fc.weight", loaders.KindGrad, 64, 8, 0)
	p := stepPair("params/fc.weight", loaders.KindParam, 64, 8, 0)
	p.Update = update(64, 0, 1e-3, 0)
	return []Pair{g, p, bn}
}

// TestStateScalarFails: a BatchNorm momentum the graph holds at another
// value (0.1 for 0.05: the updates twice the reference's) fails the
// running mean while gradients and parameters agree, and the step records
// the fit; the same running mean whose batch means drifted (an upstream
// bias, 10% of the batch noise) passes, as does a one-element state. Each
// records a state rule, beyond its limit where it fails and within it
// where it passes.
func TestStateScalarFails(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	f, d := Step(runningMean(16, 0.05, 0.1, 0, rng), ctx())
	if d[2].Status != StatusMismatch || len(f.State) != 1 || len(f.Reasons) != 1 ||
		!strings.Contains(d[2].Reasons[0], "2× the reference run's") {
		t.Fatalf("momentum 0.05 → 0.1: %s %v, state %+v", d[2].Status, d[2].Reasons, f.State)
	}
	if fit := f.State[0]; math.Abs(fit.Beta-1) > 1e-12 || fit.Explained < 1-1e-12 || fit.N != 16 {
		t.Errorf("fit %+v, want β = 1 explaining all of 16 elements", fit)
	}
	stateRule := func(d Decision) bool { return d.Rule == RuleStateFactor || d.Rule == RuleStateChance }
	if !stateRule(d[2]) || !(d[2].Ratio() > 1) {
		t.Errorf("momentum 0.05 → 0.1: %s %g of %g", d[2].Rule, d[2].Measure, d[2].Limit)
	}
	for trial := range 200 {
		f, d = Step(runningMean(16, 0.1, 0.1, 0.1, rng), ctx())
		if d[2].Status != StatusMatch || len(f.State) != 0 {
			t.Fatalf("trial %d, drift alone: %s %v", trial, d[2].Status, d[2].Reasons)
		}
		if !stateRule(d[2]) || !(d[2].Ratio() < 1) {
			t.Fatalf("trial %d, drift alone: %s %g of %g", trial, d[2].Rule, d[2].Measure, d[2].Limit)
		}
	}
	if _, d = Step(runningMean(1, 0.05, 0.1, 0, rng), ctx()); d[2].Status != StatusMatch || d[2].Rule != RuleStateFactor || d[2].Measure != 0 {
		t.Errorf("one element: %s %v, %s %g", d[2].Status, d[2].Reasons, d[2].Rule, d[2].Measure)
	}
}

// TestStateNeedsWeights: an inference step (no gradient, no parameter)
// has nothing its tensors follow: a tensor whose change from step to step
// is a scale of the reference's is not failed by the state rule.
func TestStateNeedsWeights(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	pairs := runningMean(16, 0.05, 0.1, 0, rng)
	st := pairs[2]
	st.Name, st.Kind = "gen/cache", loaders.KindTensor
	f, d := Step([]Pair{st}, ctx())
	if len(f.State) != 0 || strings.Contains(strings.Join(d[0].Reasons, ";"), "reference run's") {
		t.Errorf("inference: state %+v, reasons %v", f.State, d[0].Reasons)
	}
}

// TestStateDriftFollowsTheGradients: a buffer of no kind word whose
// difference is beyond its dtype's default limit (running_mean after a
// bias ahead of it drifted) passes, listed as state drift, where every
// gradient of the step agrees and its updates fit no factor; where a
// gradient fails it keeps its failure, and so it does at a step that
// dumped no gradient.
func TestStateDriftFollowsTheGradients(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	pairs := runningMean(16, 0.1, 0.1, 0.1, rng)
	st := &pairs[2]
	st.Name, st.Kind = "buffers/bn.running_mean", loaders.KindTensor
	st.Metrics.NormDiff, st.Metrics.RelL2 = 0.02, 0.02 // beyond 3e-4
	f, d := Step(pairs, ctx())
	if d[2].Status != StatusMatch || len(f.Drift) != 1 || !f.Drift[0].State || len(f.Reasons) != 0 {
		t.Errorf("gradients agree: %s %v, drift %+v", d[2].Status, d[2].Reasons, f.Drift)
	}
	pairs[0].Metrics.NormDiff, pairs[0].Metrics.RelL2 = 1, 1.0/8 // the gradient departs
	if _, d = Step(pairs, ctx()); d[2].Status != StatusMismatch {
		t.Errorf("a gradient fails: %s", d[2].Status)
	}
	if _, d = Step([]Pair{*st}, ctx()); d[0].Status != StatusMismatch {
		t.Errorf("no gradient dumped: %s", d[0].Status)
	}
}
