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
