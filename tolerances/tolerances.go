// Package tolerances owns how close two values must be to count as equal:
// the default tolerance of each dtype, and the closeness predicate.
//
// A pair (a, b), with a from the reference run, is close when
//
//	|a − b| ≤ atol + rtol·|a|
//
// (torch.testing.assert_close's rule with the reference as the scale).
// NaN is close only to NaN, +Inf only to +Inf and −Inf only to −Inf; +0 and
// −0 are equal.
//
// The defaults for float16, bfloat16, float32 and float64 are
// torch.testing.assert_close's. torch has none for float8; graphdiff uses
// rtol = ε (the gap between 1 and the next representable value: 2^-3 for
// e4m3fn, 2^-2 for e5m2, one rounding step) and atol = the smallest normal
// value (2^-6 and 2^-14), the same ratio to the format that float16's
// 1e-3 ≈ ε(2^-10) has. Integers and bool are exact.
package tolerances

import (
	"math"

	"github.com/graphdiff/graphdiff/loaders"
)

// Tolerance is a relative and an absolute tolerance.
type Tolerance struct {
	RTol float64
	ATol float64
}

var defaults = map[loaders.DType]Tolerance{
	loaders.Float16:      {RTol: 1e-3, ATol: 1e-5},
	loaders.BFloat16:     {RTol: 1.6e-2, ATol: 1e-5},
	loaders.Float32:      {RTol: 1.3e-6, ATol: 1e-5},
	loaders.Float64:      {RTol: 1e-7, ATol: 1e-7},
	loaders.Complex64:    {RTol: 1.3e-6, ATol: 1e-5},
	loaders.Complex128:   {RTol: 1e-7, ATol: 1e-7},
	loaders.Float8E4M3FN: {RTol: 0.125, ATol: 0x1p-6},
	loaders.Float8E5M2:   {RTol: 0.25, ATol: 0x1p-14},
}

// For returns the default tolerance of a dtype: torch.testing's for the
// IEEE and brain floats, the documented float8 values, and zero (exact
// equality) for integers and bool.
func For(d loaders.DType) Tolerance {
	return defaults[d]
}

// Close reports whether b is within t of the reference value a: equal
// (+0 and −0 included), both NaN, the same infinity, or finite and not
// Beyond.
func (t Tolerance) Close(a, b float64) bool {
	if a == b { // equal finite values, same infinities, and +0 == −0
		return true
	}
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	if math.IsInf(a, 0) || math.IsInf(b, 0) {
		return false
	}
	return !t.Beyond(math.Abs(a-b), math.Abs(a))
}

// Beyond is the closeness predicate for a finite pair, stated on its
// absolute difference absDiff = |a − b| and its reference's magnitude
// absRef = |a|:
//
//	absDiff > atol + rtol·absRef
//
// with rtol·absRef rounded to float64 before the addition (never a fused
// multiply-add), as every comparison kernel, the assembly ones included,
// computes it; the kernels are tested against this function. A NaN absDiff
// is not beyond (NaN and ±Inf pairs are judged by Close, or by the kernels'
// special-value path, before this test).
func (t Tolerance) Beyond(absDiff, absRef float64) bool {
	return absDiff > t.ATol+float64(t.RTol*absRef)
}
