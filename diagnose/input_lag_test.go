package diagnose

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/graphdiff/graphdiff/judge"
	"github.com/graphdiff/graphdiff/loaders"
)

// lagFacts returns the facts of runs whose gradients are sampled at steps
// 0 to steps−1, each eager step a batch of its own (independent values),
// the graph's step k made by graph(k, eager, rng); the runs part at step
// 0, the first dumped one.
func lagFacts(steps int, graph func(k int, eager []vec, rng *rand.Rand) vec) *facts {
	rng := rand.New(rand.NewPCG(7, 8))
	s := &sampleSet{a: map[key]vec{}, b: map[key]vec{}, kinds: map[loaders.Kind]bool{loaders.KindGrad: true}}
	eager := make([]vec, steps)
	for k := range eager {
		eager[k] = make(vec, 512)
		for i := range eager[k] {
			eager[k][i] = rng.NormFloat64()
		}
	}
	for k := range steps {
		s.a[key{k, loaders.KindGrad}], s.b[key{k, loaders.KindGrad}] = eager[k], graph(k, eager, rng)
		s.steps = append(s.steps, k)
	}
	return &facts{r: &judge.Result{}, s: s, div: 0, diverged: map[loaders.Kind][]int{}, aliased: map[loaders.Kind]bool{}}
}

// noisy returns v plus independent noise of relative size r.
func noisy(v vec, r float64, rng *rand.Rand) vec {
	out := make(vec, len(v))
	for i, x := range v {
		out[i] = x + r*rng.NormFloat64()
	}
	return out
}

// TestNearestStepLag checks input_lag's nearest-step test on
// gradients whose batches are independent: a graph that computes each
// step on the batch before, with its own drift too large for the ratio
// test (its step k as far from eager's k−1 as 0.9 of eager's norm), is
// found from the nearest steps alone; a graph that is eager plus
// rounding, one fed a single batch from before the dumps, and graphs
// unrelated to the eager
// batches (200 of them, each of which would pass by chance with
// probability 6⁻⁵) are not.
func TestNearestStepLag(t *testing.T) {
	const steps = 6
	lagging := lagFacts(steps, func(k int, eager []vec, rng *rand.Rand) vec {
		return noisy(eager[max(k-1, 0)], 0.9, rng)
	})
	c := inputLag(lagging)
	if c == nil || c.ID != InputLag || !strings.Contains(strings.Join(c.Evidence, "\n"), "the eager step nearest the graph's is the step before") {
		t.Fatalf("lagging graph: %+v, want input_lag from the nearest steps", c)
	}
	stale := noisy(make(vec, 512), 1, rand.New(rand.NewPCG(9, 10)))
	for name, graph := range map[string]func(int, []vec, *rand.Rand) vec{
		"eager plus rounding": func(k int, eager []vec, rng *rand.Rand) vec { return noisy(eager[k], 1e-6, rng) },
		"one batch": func(k int, eager []vec, rng *rand.Rand) vec {
			return noisy(stale, 0.3, rng) // captured before the dumps began
		},
	} {
		if c := inputLag(lagFacts(steps, graph)); c != nil {
			t.Errorf("%s: %s named: %q", name, c.ID, c.Evidence)
		}
	}
	fired := 0
	for trial := range 200 {
		f := lagFacts(steps, func(k int, eager []vec, rng *rand.Rand) vec {
			v := make(vec, len(eager[k]))
			for i := range v {
				v[i] = rng.NormFloat64() * (1 + float64(trial%3))
			}
			return v
		})
		if inputLag(f) != nil {
			fired++
		}
	}
	if fired > 0 {
		t.Errorf("input_lag named for %d of 200 graphs unrelated to the eager batches", fired)
	}
}
