package diagnose

import (
	"fmt"
	"slices"
	"strings"
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
			ts = append(ts, &judge.TensorResult{Pair: judge.Pair{Name: name, Step: step, Kind: loaders.KindGrad, A: meta, B: meta}})
		}
	}
	r := &judge.Result{Tensors: ts}
	p := NewPlan(r.Tensors)
	h64, h32 := p.NewHeads(), p.NewHeads()
	for i, w := range p.Wants() {
		v := float32(w.Index)
		a32 := []float32{v + 0.1, -1.5, 3e-8}
		b32 := []float32{v + 0.2, -1.25, 7e-9}
		h32.Set(i, Head{A32: a32, B32: b32})
		var a64, b64 []float64
		for j := range a32 {
			a64, b64 = append(a64, float64(a32[j])), append(b64, float64(b32[j]))
		}
		h64.Set(i, Head{A: a64, B: b64})
	}
	s64, s32 := takeSamples(p, h64), takeSamples(p, h32)
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

// TestPlanSamplesNamesCommonToEveryStep plans pairs given out of order:
// a kind is sampled in the names it has at every one of its steps (a name
// missing at a step, or of another layout there, is left out at all of
// them), parameters without a gradient apart as buffers, step by step,
// kinds and names in order, each pair's whole length where the budget
// allows.
func TestPlanSamplesNamesCommonToEveryStep(t *testing.T) {
	vec100 := &loaders.Meta{DType: loaders.Float32, Shape: []int{100}}
	other := &loaders.Meta{DType: loaders.Float32, Shape: []int{10, 10}}
	scalar := &loaders.Meta{DType: loaders.Float32}
	pair := func(step int, kind loaders.Kind, name string, a, b *loaders.Meta) *judge.TensorResult {
		return &judge.TensorResult{Pair: judge.Pair{Name: name, Step: step, Kind: kind, A: a, B: b}, Decision: judge.Decision{Status: judge.StatusMatch}}
	}
	var ts []*judge.TensorResult
	for _, step := range []int{2, 0, 1} {
		for _, name := range []string{"grads/w", "grads/v", "grads/u"} {
			ts = append(ts, pair(step, loaders.KindGrad, name, vec100, vec100))
		}
		ts = append(ts, pair(step, loaders.KindParam, "params/u", scalar, scalar),
			pair(step, loaders.KindParam, "params/running_mean", vec100, vec100))
		if step != 1 {
			ts = append(ts, pair(step, loaders.KindGrad, "grads/t", vec100, vec100)) // missing at step 1
		}
		b := vec100
		if step == 2 {
			b = other
		}
		ts = append(ts, pair(step, loaders.KindGrad, "grads/s", vec100, b)) // another layout at step 2
	}
	var got []string
	for _, w := range PlanSamples(ts) {
		got = append(got, fmt.Sprintf("%d %s %d", ts[w.Index].Step, ts[w.Index].Name, w.N))
	}
	var want []string
	for step := range 3 {
		// kinds in order: buffer, grad, param
		want = append(want, fmt.Sprintf("%d params/running_mean 100", step),
			fmt.Sprintf("%d grads/u 100", step), fmt.Sprintf("%d grads/v 100", step), fmt.Sprintf("%d grads/w 100", step),
			fmt.Sprintf("%d params/u 1", step))
	}
	if !slices.Equal(got, want) {
		t.Errorf("planned\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
