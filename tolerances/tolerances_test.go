package tolerances

import (
	"math"
	"testing"

	"github.com/graphdiff/graphdiff/loaders"
)

func TestForMatchesTorch(t *testing.T) {
	// torch.testing.assert_close's defaults (torch/testing/_comparison.py).
	cases := map[loaders.DType]Tolerance{
		loaders.Float16:  {1e-3, 1e-5},
		loaders.BFloat16: {1.6e-2, 1e-5},
		loaders.Float32:  {1.3e-6, 1e-5},
		loaders.Float64:  {1e-7, 1e-7},
		loaders.Int64:    {0, 0},
		loaders.Bool:     {0, 0},
	}
	for d, want := range cases {
		if got := For(d); got != want {
			t.Errorf("For(%s) = %+v, want %+v", d, got, want)
		}
	}
}

// TestCloseEdges probes the predicate at the edge of the tolerance and at
// the special values.
func TestCloseEdges(t *testing.T) {
	f32 := For(loaders.Float32)
	edge := f32.ATol + f32.RTol*1.0 // the largest allowed |a−b| at a = 1
	cases := []struct {
		name string
		a, b float64
		tol  Tolerance
		want bool
	}{
		{"at the edge", 1, 1 + edge, f32, true},
		{"one ulp past the edge", 1, math.Nextafter(1+edge, 2), f32, false},
		{"half the edge below", 1, 1 - edge/2, f32, true},
		{"scale is the reference", 0, f32.ATol, f32, true},
		{"scale is not the candidate", 0, math.Nextafter(f32.ATol, 1), f32, false},
		{"signed zeros", math.Copysign(0, -1), 0, Tolerance{}, true},
		{"nan nan", math.NaN(), math.NaN(), f32, true},
		{"nan number", math.NaN(), 1, f32, false},
		{"number nan", 1, math.NaN(), f32, false},
		{"inf inf", math.Inf(1), math.Inf(1), f32, true},
		{"inf -inf", math.Inf(1), math.Inf(-1), f32, false},
		{"inf vs huge", math.Inf(1), math.MaxFloat64, Tolerance{RTol: 1, ATol: math.Inf(1)}, false},
		{"subnormals exact", 5e-324, 1e-323, Tolerance{}, false},
		{"subnormals within atol", 5e-324, 1e-323, f32, true},
		{"integers exact", 3, 4, For(loaders.Int32), false},
	}
	for _, tc := range cases {
		if got := tc.tol.Close(tc.a, tc.b); got != tc.want {
			t.Errorf("%s: Close(%v, %v) = %v, want %v", tc.name, tc.a, tc.b, got, tc.want)
		}
	}
}
