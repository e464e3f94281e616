package diagnose

import (
	"fmt"
	"testing"

	"github.com/graphdiff/graphdiff/judge"
	"github.com/graphdiff/graphdiff/loaders"
)

// BenchmarkPlanSamples plans the samples of 8 steps x 2,000 gradients of
// 1,024 float32 (a run that dumps every tensor to a file of its own),
// which a comparison does three times.
func BenchmarkPlanSamples(b *testing.B) {
	var ts []*judge.TensorResult
	for step := range 8 {
		for i := range 2000 {
			m := &loaders.Meta{DType: loaders.Float32, Shape: []int{1024}}
			ts = append(ts, &judge.TensorResult{Pair: judge.Pair{Name: fmt.Sprintf("grads/layer_%04d.weight", i), Step: step,
				Kind: loaders.KindGrad, A: m, B: m}, Decision: judge.Decision{Status: judge.StatusMatch}})
		}
	}
	for b.Loop() {
		if len(PlanSamples(ts)) != len(ts) {
			b.Fatal("not every pair sampled")
		}
	}
}

// BenchmarkLongInference diagnoses the reads of an inference run of 2,000
// dumped steps (outputs only, 256 values a step) whose second half departs
// from eager's by other values, not another step's: batchesRead and
// input_lag's nearest-step rule look at the first steps of the break, each
// against every dumped step, so the cost grows with the steps, not their
// square (it was 24 s for the command on such a run before they did).
func BenchmarkLongInference(b *testing.B) {
	const steps, n = 2000, 256
	s := &sampleSet{a: map[key]vec{}, b: map[key]vec{}, kinds: map[loaders.Kind]bool{loaders.KindTensor: true}}
	r := &judge.Result{}
	x := uint64(1)
	next := func() float64 { // a fixed sequence, a xorshift's
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		return float64(x>>11)/(1<<53) - 0.5
	}
	for k := range steps {
		a, bv := make(vec, n), make(vec, n)
		for i := range a {
			a[i] = next()
			bv[i] = a[i]
			if k >= steps/2 {
				bv[i] += 0.01 * next()
			}
		}
		s.a[key{k, loaders.KindTensor}], s.b[key{k, loaders.KindTensor}] = a, bv
		s.steps = append(s.steps, k)
		st := judge.StatusMatch
		if k >= steps/2 {
			st = judge.StatusMismatch
		}
		r.Tensors = append(r.Tensors, &judge.TensorResult{Pair: judge.Pair{Name: "logits", Step: k, Kind: loaders.KindTensor},
			Decision: judge.Decision{Status: st, Rule: judge.RuleRelL2, Limit: 3e-4}})
	}
	f := &facts{r: r, s: s, div: steps / 2, found: map[string]float64{}}
	for b.Loop() {
		f.reads = f.batchesRead()
		if len(f.reads.reads) != maxReadSteps || inputLag(f) != nil {
			b.Fatalf("%d reads, want %d; no lag", len(f.reads.reads), maxReadSteps)
		}
	}
}
