package check

import (
	"fmt"
	"slices"
	"testing"

	"github.com/graphdiff/graphdiff/judge"
	"github.com/graphdiff/graphdiff/loaders"
	"github.com/graphdiff/graphdiff/outcome"
)

// TestLikelyRenames checks which pairs only one run holds are taken for
// a tensor under two names: same step, kind, shape and dtype; several
// alike matched by the names' shared ends; the rest left alone.
func TestLikelyRenames(t *testing.T) {
	meta := func(dt loaders.DType, shape ...int) *loaders.Meta { return &loaders.Meta{DType: dt, Shape: shape} }
	missing := func(step int, name string, m *loaders.Meta) *judge.TensorResult {
		return &judge.TensorResult{Pair: judge.Pair{Name: name, Step: step, Kind: loaders.KindOf(name), A: m},
			Decision: judge.Decision{Status: judge.StatusMissing}}
	}
	extra := func(step int, name string, m *loaders.Meta) *judge.TensorResult {
		return &judge.TensorResult{Pair: judge.Pair{Name: name, Step: step, Kind: loaders.KindOf(name), B: m},
			Decision: judge.Decision{Status: judge.StatusExtra}}
	}
	f32 := func(shape ...int) *loaders.Meta { return meta(loaders.Float32, shape...) }
	for _, tc := range []struct {
		name string
		ts   []*judge.TensorResult
		want []string // "A>B flag steps"
	}{
		{"one renamed at two steps", []*judge.TensorResult{
			missing(0, "params/fc.weight", f32(4, 2)), extra(0, "params/fc1.weight", f32(4, 2)),
			missing(1, "params/fc.weight", f32(4, 2)), extra(1, "params/fc1.weight", f32(4, 2)),
		}, []string{"params/fc.weight>params/fc1.weight fc.weight=fc1.weight [0 1]"}},
		{"two alike, matched by their names", []*judge.TensorResult{
			missing(0, "params/fc1.bias", f32(32)), missing(0, "params/fc2.bias", f32(32)),
			extra(0, "params/l1.bias", f32(32)), extra(0, "params/l2.bias", f32(32)),
		}, []string{"params/fc1.bias>params/l1.bias fc1.bias=l1.bias [0]", "params/fc2.bias>params/l2.bias fc2.bias=l2.bias [0]"}},
		{"other shape", []*judge.TensorResult{missing(0, "params/a", f32(4)), extra(0, "params/b", f32(5))}, nil},
		{"other dtype", []*judge.TensorResult{missing(0, "params/a", f32(4)), extra(0, "params/b", meta(loaders.BFloat16, 4))}, nil},
		{"other kind", []*judge.TensorResult{missing(0, "params/a", f32(4)), extra(0, "grads/b", f32(4))}, nil},
		{"other step", []*judge.TensorResult{missing(0, "params/a", f32(4)), extra(1, "params/b", f32(4))}, nil},
		{"a step missing", []*judge.TensorResult{missing(3, "params/a", f32(4)), missing(3, "loss", f32())}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, r := range likelyRenames(tc.ts) {
				got = append(got, fmt.Sprintf("%s>%s %s %v", r.A, r.B, r.Flag, r.Steps))
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("renames %q, want %q", got, tc.want)
			}
			view := diagnosable(&judge.Result{Tensors: tc.ts}, likelyRenames(tc.ts))
			if len(tc.want) > 0 && len(view.Tensors) != len(tc.ts)-2*len(stepsOf(likelyRenames(tc.ts))) {
				t.Errorf("diagnosis sees %d pairs of %d", len(view.Tensors), len(tc.ts))
			}
		})
	}
}

// stepsOf lists every step of every rename, once for each.
func stepsOf(rs []outcome.Rename) []int {
	var out []int
	for _, r := range rs {
		out = append(out, r.Steps...)
	}
	return out
}
