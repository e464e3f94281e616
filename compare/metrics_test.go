package compare

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/graphdiff/graphdiff/loaders"
	"github.com/graphdiff/graphdiff/tolerances"
)

// pairMetrics runs the accumulator over two in-memory vectors with the
// dtype's default tolerance.
func pairMetrics(a, b []float64, d loaders.DType, complex bool) Metrics {
	return pairMetricsTol(a, b, d, tolerances.For(d), complex)
}

func pairMetricsTol(a, b []float64, d loaders.DType, tol tolerances.Tolerance, complex bool) Metrics {
	var h errorHistogram
	c := newAcc(goKernels, tol, ulpKeyFor(d), complex, true, &h, 0)
	if complex {
		c.addComplex(a, b)
	} else {
		c.addReal(a, b)
	}
	t := &loaders.Tensor{Shape: []int{len(a)}}
	return c.metrics(&h, t.Index)
}

// TestMetricsEdges probes the elementwise rule and the aggregates at the
// edges: one ULP either side of the tolerance, signed zeros, subnormals,
// NaN and infinities, a zero reference.
func TestMetricsEdges(t *testing.T) {
	t.Parallel()
	// Powers of two make the edge exact: at a = 1 the largest allowed
	// |a−b| is atol + rtol = 2^-20 + 2^-10.
	pow2 := &tolerances.Tolerance{RTol: 0x1p-10, ATol: 0x1p-20}
	edge := 1 + 0x1p-10 + 0x1p-20
	inf, nan := math.Inf(1), math.NaN()
	cases := []struct {
		name       string
		a, b       []float64
		dtype      loaders.DType
		tol        *tolerances.Tolerance // nil: the dtype's default
		mismatched int64
		specials   int64
		relL2      float64 // NaN: don't check
		cosine     float64 // NaN: must be NaN
		maxULP     uint64
	}{
		{"equal", []float64{1, 2, 3}, []float64{1, 2, 3}, loaders.Float32, nil, 0, 0, 0, 1, 0},
		{"at the edge", []float64{1}, []float64{edge}, loaders.Float64, pow2, 0, 0, edge - 1, 1, 1<<42 + 1<<32},
		{"one ulp past the edge", []float64{1}, []float64{math.Nextafter(edge, 2)}, loaders.Float64, pow2, 1, 0, nan, 1, 1<<42 + 1<<32 + 1},
		{"one ulp inside the edge", []float64{1}, []float64{math.Nextafter(edge, 0)}, loaders.Float64, pow2, 0, 0, nan, 1, 1<<42 + 1<<32 - 1},
		{"signed zeros", []float64{math.Copysign(0, -1)}, []float64{0}, loaders.Float32, nil, 0, 0, 0, 1, 0},
		{"float32 subnormal neighbours", []float64{0x1p-149}, []float64{0x1p-148}, loaders.Float32, nil, 0, 0, 1, 1, 1},
		{"float32 across zero", []float64{-0x1p-149}, []float64{0x1p-149}, loaders.Float32, nil, 0, 0, 2, -1, 2},
		{"bfloat16 neighbours", []float64{1}, []float64{1.0078125}, loaders.BFloat16, nil, 0, 0, 0.0078125, 1, 1},
		{"float8 neighbours", []float64{1}, []float64{1.125}, loaders.Float8E4M3FN, nil, 0, 0, 0.125, 1, 1},
		{"float8 max", []float64{-448}, []float64{448}, loaders.Float8E4M3FN, nil, 1, 0, 2, -1, 252},
		{"same nan", []float64{nan, 1}, []float64{nan, 1}, loaders.Float32, nil, 0, 0, 0, 1, 0},
		{"nan on one side", []float64{1, 1}, []float64{nan, 1}, loaders.Float32, nil, 1, 1, 0, 1, 0},
		{"same inf", []float64{inf, -inf, 1}, []float64{inf, -inf, 1}, loaders.Float32, nil, 0, 0, 0, 1, 0},
		{"opposite inf", []float64{inf}, []float64{-inf}, loaders.Float32, nil, 1, 1, 0, 1, 0},
		{"zero reference", []float64{0, 0}, []float64{0, 1e-6}, loaders.Float32, nil, 0, 0, inf, nan, 0x358637BD}, // bits of float32(1e-6)
		{"both zero", []float64{0, 0}, []float64{0, 0}, loaders.Float32, nil, 0, 0, 0, 1, 0},
		{"empty", nil, nil, loaders.Float32, nil, 0, 0, 0, 1, 0},
		{"integers exact", []float64{3, 5}, []float64{3, 4}, loaders.Int32, nil, 1, 0, 1 / math.Sqrt(34), 29 / (math.Sqrt(34) * 5), 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tol := tolerances.For(tc.dtype)
			if tc.tol != nil {
				tol = *tc.tol
			}
			m := pairMetricsTol(tc.a, tc.b, tc.dtype, tol, false)
			if m.Mismatched != tc.mismatched || m.SpecialMismatches != tc.specials {
				t.Errorf("mismatched %d specials %d, want %d %d", m.Mismatched, m.SpecialMismatches, tc.mismatched, tc.specials)
			}
			if !math.IsNaN(tc.relL2) && m.RelL2 != tc.relL2 && math.Abs(m.RelL2-tc.relL2) > 1e-12*tc.relL2 {
				t.Errorf("rel_l2 %v, want %v", m.RelL2, tc.relL2)
			}
			if math.IsNaN(tc.cosine) != math.IsNaN(m.Cosine) || !math.IsNaN(tc.cosine) && math.Abs(m.Cosine-tc.cosine) > 1e-12 {
				t.Errorf("cosine %v, want %v", m.Cosine, tc.cosine)
			}
			if m.MaxULP != tc.maxULP {
				t.Errorf("max ULP %d, want %d", m.MaxULP, tc.maxULP)
			}
		})
	}
}

// TestMetricsExtremes checks the index and the values reported at the
// largest absolute and relative errors, and the first element beyond
// tolerance, for a 2-D Fortran-order tensor.
func TestMetricsExtremes(t *testing.T) {
	t.Parallel()
	// storage (Fortran) order of a (2, 3) array: a[0,0] a[1,0] a[0,1] a[1,1] a[0,2] a[1,2]
	a := []float64{1, 2, 3, 4, 5, 100}
	b := []float64{1, 2, 3.5, 4, 5, 101}
	var h errorHistogram
	c := newAcc(goKernels, tolerances.For(loaders.Float32), ulpKeyFor(loaders.Float32), false, true, &h, 0)
	c.addReal(a, b)
	tn := &loaders.Tensor{Shape: []int{2, 3}, FortranOrder: true}
	m := c.metrics(&h, tn.Index)
	if m.MaxAbs.Value != 1 || m.MaxAbs.A != 100 || m.MaxAbs.B != 101 || m.MaxAbs.Index[0] != 1 || m.MaxAbs.Index[1] != 2 {
		t.Errorf("max abs %+v", m.MaxAbs)
	}
	if m.MaxRel.Value != 0.5/3 || m.MaxRel.Index[0] != 0 || m.MaxRel.Index[1] != 1 {
		t.Errorf("max rel %+v", m.MaxRel)
	}
	if m.FirstMismatch[0] != 0 || m.FirstMismatch[1] != 1 || m.Mismatched != 2 {
		t.Errorf("first mismatch %v, mismatched %d", m.FirstMismatch, m.Mismatched)
	}
}

func TestComplexMetrics(t *testing.T) {
	t.Parallel()
	// (3+4i) vs (3+4i), (1+0i) vs (0+1i), (NaN+0i) vs (NaN+1i)
	a := []float64{3, 4, 1, 0, math.NaN(), 0}
	b := []float64{3, 4, 0, 1, math.NaN(), 1}
	m := pairMetrics(a, b, loaders.Complex64, true)
	if m.Count != 3 || m.NaNA != 1 || m.NaNB != 1 || m.SpecialMismatches != 0 {
		t.Errorf("counts %+v", m)
	}
	if m.MaxAbs.Value != math.Sqrt2 || m.MaxAbs.A != 1 || m.MaxAbs.B != 1 {
		t.Errorf("max abs %+v", m.MaxAbs)
	}
	// ‖a−b‖/‖a‖ = sqrt(2)/sqrt(26); a·b = Re(Σ a conj(b)) = 25
	if want := math.Sqrt(2) / math.Sqrt(26); math.Abs(m.RelL2-want) > 1e-15 {
		t.Errorf("rel_l2 %v, want %v", m.RelL2, want)
	}
	if want := 25 / 26.0; math.Abs(m.Cosine-want) > 1e-15 {
		t.Errorf("cosine %v, want %v", m.Cosine, want)
	}
}

// TestComplexSpecials: complex elements with a NaN or infinite part agree
// as numpy's isclose (equal_nan) has them: both NaN (in any part), or
// equal part by part. An infinity of the other sign, in the other part,
// or beside another finite part is a special mismatch, as it is for a
// real infinity; (+Inf, +1) against (+Inf, 5) and (+Inf, 0) against
// (−Inf, 0) matched before.
func TestComplexSpecials(t *testing.T) {
	t.Parallel()
	inf, nan, negZero := math.Inf(1), math.NaN(), math.Copysign(0, -1)
	for _, tc := range []struct {
		name   string
		a, b   [2]float64
		agrees bool
	}{
		{"the same infinity", [2]float64{inf, 0}, [2]float64{inf, 0}, true},
		{"the same infinity, ±0 beside it", [2]float64{inf, negZero}, [2]float64{inf, 0}, true},
		{"infinities of other signs", [2]float64{inf, 0}, [2]float64{-inf, 0}, false},
		{"infinities in other parts", [2]float64{inf, 0}, [2]float64{0, inf}, false},
		{"the same infinity beside other values", [2]float64{inf, 1}, [2]float64{inf, 5}, false},
		{"an infinity against a finite value", [2]float64{inf, 0}, [2]float64{1, 0}, false},
		{"NaN in other parts", [2]float64{nan, 0}, [2]float64{0, nan}, true},
		{"NaN against an infinity", [2]float64{nan, 0}, [2]float64{inf, 0}, false},
	} {
		m := pairMetrics(tc.a[:], tc.b[:], loaders.Complex128, true)
		if agrees := m.SpecialMismatches == 0 && m.Mismatched == 0; agrees != tc.agrees {
			t.Errorf("%s: %v against %v: %d special mismatches, want agreement %v", tc.name, tc.a, tc.b, m.SpecialMismatches, tc.agrees)
		}
	}
}

// TestHistogramQuantiles checks the histogram's quantiles against exact
// nearest-rank quantiles of a sorted copy: within the documented 1/32.
func TestHistogramQuantiles(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	var h errorHistogram
	errs := make([]float64, 50_001)
	for i := range errs {
		switch {
		case i%10 == 0:
			errs[i] = 0
		default:
			errs[i] = math.Exp(rng.NormFloat64()*5 - 10)
		}
		h.add(errs[i])
	}
	sort.Float64s(errs)
	ps := []float64{0.05, 0.5, 0.9, 0.99, 1}
	got := h.quantiles(errs[len(errs)-1], ps...)
	for i, p := range ps {
		rank := int(math.Ceil(p * float64(len(errs))))
		want := errs[rank-1]
		if want == 0 && got[i] != 0 || want != 0 && math.Abs(got[i]-want) > want/32 {
			t.Errorf("p%g = %g, exact %g", 100*p, got[i], want)
		}
	}
	var empty errorHistogram
	if q := empty.quantiles(0, 0.5); !math.IsNaN(q[0]) {
		t.Errorf("empty p50 = %v", q[0])
	}
	h.reset()
	if h.total() != 0 {
		t.Errorf("total after reset %d", h.total())
	}
}
