package diagnose

import (
	"fmt"
	"math"
	"sort"

	"github.com/graphdiff/graphdiff/loaders"
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

// stepPair is a kind's samples at a sampled step k and the sampled step p
// before it, in both runs.
type stepPair struct {
	k, p         int
	a, ap, b, bp vec
}

// afterBreak returns, for each sampled step after the first divergent one
// whose step before it was sampled too, a kind's samples at both steps in
// both runs (pairs missing any of the four are left out).
func (f *facts) afterBreak(kind loaders.Kind) []stepPair {
	var out []stepPair
	for _, k := range f.s.steps {
		p, ok := f.s.prev(k)
		if !ok || k <= f.div {
			continue
		}
		if a, ap, b, bp := f.four(kind, k, p); a != nil {
			out = append(out, stepPair{k, p, a, ap, b, bp})
		}
	}
	return out
}

// median returns the median of xs (the upper one of an even count) and
// how many there are; NaN and 0 for none. xs is sorted in place.
func median(xs []float64) (float64, int) {
	if len(xs) == 0 {
		return math.NaN(), 0
	}
	sort.Float64s(xs)
	return xs[len(xs)/2], len(xs)
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

// outputKinds returns the sampled kinds that hold what the model put out:
// outputs, and, in a run with neither gradients nor parameters (inference:
// logits and tokens per decoding step), tensors of no kind word.
func (f *facts) outputKinds() []loaders.Kind {
	out := []loaders.Kind{loaders.KindOutput}
	if f.inference() {
		out = append(out, loaders.KindTensor)
	}
	return out
}

// batchKinds returns outputKinds and the tapped modules' outputs: what a
// new batch moves directly, every one of them a function of it.
func (f *facts) batchKinds() []loaders.Kind {
	return append(f.outputKinds(), loaders.KindActivation)
}

// batchWord names a kind a batch moves in evidence: as kindWord, but
// "outputs" for the tensors of no kind word an inference run dumped
// (which batchKinds holds only there).
func batchWord(k loaders.Kind) string {
	if k == loaders.KindTensor {
		return "outputs"
	}
	return kindWord(k)
}

// fromStart reports whether the dumps begin at the first training step
// (step 0 or 1), before any replay could act.
func (f *facts) fromStart() bool { return f.firstStep <= 1 }

// inference reports whether the runs sampled no gradients, parameters or
// losses: what they dumped is what a model put out.
func (f *facts) inference() bool {
	return !f.s.kinds[loaders.KindGrad] && !f.s.kinds[loaders.KindParam] && !f.s.kinds[kindBuffer] && !f.s.kinds[loaders.KindLoss]
}
