package diagnose

import (
	"slices"
	"testing"

	"github.com/graphdiff/graphdiff/judge"
	"github.com/graphdiff/graphdiff/loaders"
)

// A head kept as float32 (as a comparison keeps it) gives the same samples
// as the same values handed over as float64.
func TestSamplesFromFloat32HeadsEqualFloat64(t *testing.T) {
	meta := &loaders.Meta{DType: loaders.Float32, Shape: []int{3}}
	var ts []*judge.TensorResult
	for step := range 2 {
		for _, name := range []string{"grads/a", "grads/b"} {
			ts = append(ts, &judge.TensorResult{Name: name, Step: step, Kind: loaders.KindGrad, A: meta, B: meta})
		}
	}
	r := &judge.Result{Tensors: ts}
	h64, h32 := Heads{}, Heads{}
	for i, tr := range ts {
		a32 := []float32{float32(i) + 0.1, -1.5, 3e-8}
		b32 := []float32{float32(i) + 0.2, -1.25, 7e-9}
		h32[tr] = Head{A32: a32, B32: b32}
		var a64, b64 []float64
		for j := range a32 {
			a64, b64 = append(a64, float64(a32[j])), append(b64, float64(b32[j]))
		}
		h64[tr] = Head{A: a64, B: b64}
	}
	s64, s32 := takeSamples(NewPlan(r.Tensors), h64), takeSamples(NewPlan(r.Tensors), h32)
	if len(s32.a) != 2 {
		t.Fatalf("float32 heads gave %d samples, want one per step (2)", len(s32.a))
	}
	for k, v := range s64.a {
		if !slices.Equal(v, s32.a[k]) || !slices.Equal(s64.b[k], s32.b[k]) {
			t.Errorf("step %d %s: float32 heads sampled %v / %v, float64 heads %v / %v", k.step, k.kind, s32.a[k], s32.b[k], v, s64.b[k])
		}
	}
	if len(s64.a[key{0, loaders.KindGrad}]) != 6 {
		t.Errorf("step 0 sample holds %d values, want 6 (3 of each of 2 tensors)", len(s64.a[key{0, loaders.KindGrad}]))
	}
}
