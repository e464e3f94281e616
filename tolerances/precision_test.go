package tolerances

import (
	"testing"

	"github.com/graphdiff/graphdiff/loaders"
)

// TestNewPrecision: the working epsilon is the coarser of the compute and
// the model dtype, never finer than TF32 unless the model is float64.
func TestNewPrecision(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name           string
		compute, model loaders.DType
		eps, paramEps  float64
		comparison     loaders.DType
	}{
		{"float32 model: TF32 may have computed it", loaders.Invalid, loaders.Float32, 0x1p-10, 0x1p-23, loaders.Float32},
		{"bfloat16 model", loaders.Invalid, loaders.BFloat16, 0x1p-7, 0x1p-7, loaders.BFloat16},
		{"autocast", loaders.BFloat16, loaders.Float32, 0x1p-7, 0x1p-23, loaders.BFloat16},
		{"float64 model", loaders.Invalid, loaders.Float64, 0x1p-52, 0x1p-52, loaders.Float64},
		{"float64 model, float32 compute", loaders.Float32, loaders.Float64, 0x1p-23, 0x1p-52, loaders.Float32},
		{"nothing known", loaders.Invalid, loaders.Invalid, 0x1p-10, 0x1p-23, loaders.Invalid},
		{"integers count for nothing", loaders.Invalid, loaders.Int64, 0x1p-10, 0x1p-23, loaders.Int64},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := NewPrecision(tc.compute, tc.model)
			if p.Epsilon != tc.eps || p.ParamEpsilon != tc.paramEps || p.ComparisonCompute() != tc.comparison {
				t.Errorf("NewPrecision(%s, %s) = ε %g, ε_p %g, compared in %s; want %g, %g, %s",
					tc.compute, tc.model, p.Epsilon, p.ParamEpsilon, p.ComparisonCompute(), tc.eps, tc.paramEps, tc.comparison)
			}
		})
	}
	for _, tc := range []struct{ compute, model, want loaders.DType }{
		{loaders.BFloat16, loaders.Float32, loaders.BFloat16},
		{loaders.Float32, loaders.BFloat16, loaders.BFloat16},
		{loaders.Invalid, loaders.Float32, loaders.Float32},
		{loaders.Float16, loaders.Invalid, loaders.Float16},
		{loaders.Invalid, loaders.Invalid, loaders.Invalid},
	} {
		if got := NewPrecision(tc.compute, tc.model).Coarsest(); got != tc.want {
			t.Errorf("Coarsest of compute %s, model %s: %s, want %s", tc.compute, tc.model, got, tc.want)
		}
	}
	if p := NewPrecision(loaders.Invalid, loaders.Float32); !p.Coarser(loaders.BFloat16) || p.Coarser(loaders.Float32) || p.Coarser(loaders.Int8) {
		t.Error("Coarser: bfloat16 is coarser than a float32 model, float32 and integers are not")
	}
}
