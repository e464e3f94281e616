package compare

import (
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"gonum.org/v1/gonum/stat"

	"github.com/graphdiff/graphdiff/loaders"
)

func fixture(parts ...string) string {
	return filepath.Join(append([]string{"..", "testdata"}, parts...)...)
}

// TestSummaryAgainstGonum folds values into a Summary in random-sized
// pieces and checks the result against gonum's whole-slice statistics of
// the finite values, and the counts against a direct count.
func TestSummaryAgainstGonum(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	vals := make([]float64, 100_003)
	var finite []float64
	nan, inf, zeros := 0, 0, 0
	for i := range vals {
		switch r := rng.IntN(1000); {
		case r == 0:
			vals[i] = math.NaN()
			nan++
		case r == 1:
			vals[i] = math.Inf(1 - 2*rng.IntN(2))
			inf++
		case r < 50:
			vals[i] = math.Copysign(0, float64(1-2*rng.IntN(2)))
		default:
			vals[i] = 1e3 + rng.NormFloat64() // an offset stresses cancellation
		}
		if !math.IsNaN(vals[i]) && !math.IsInf(vals[i], 0) {
			finite = append(finite, vals[i])
			if vals[i] == 0 {
				zeros++
			}
		}
	}
	var s Summary
	scratch := make([]float64, len(vals))
	for lo := 0; lo < len(vals); {
		hi := min(len(vals), lo+1+rng.IntN(5000))
		s.add(vals[lo:hi], scratch, false)
		lo = hi
	}
	mean, std := stat.PopMeanStdDev(finite, nil)
	if s.Count != int64(len(vals)) || s.NaN != int64(nan) || s.Inf != int64(inf) || s.Zeros != int64(zeros) || s.Finite != int64(len(finite)) {
		t.Errorf("counts %+v; want nan %d inf %d zeros %d finite %d", s, nan, inf, zeros, len(finite))
	}
	if rel := math.Abs(s.Mean-mean) / mean; rel > 1e-14 {
		t.Errorf("mean %v, gonum %v (rel %g)", s.Mean, mean, rel)
	}
	if rel := math.Abs(s.Std()-std) / std; rel > 1e-12 {
		t.Errorf("std %v, gonum %v (rel %g)", s.Std(), std, rel)
	}
	lo, hi := finite[0], finite[0]
	for _, v := range finite {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	if s.Min != lo || s.Max != hi {
		t.Errorf("min %v max %v, want %v %v", s.Min, s.Max, lo, hi)
	}
}

func TestSummaryEdges(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		vals      []float64
		complex   bool
		count     int64
		finite    int64
		nan, inf  int64
		zeroFrac  float64 // NaN: none
		min, max  float64
		mean, std float64 // NaN: none
	}{
		{"empty", nil, false, 0, 0, 0, 0, math.NaN(), 0, 0, math.NaN(), math.NaN()},
		{"all nan", []float64{math.NaN(), math.NaN()}, false, 2, 0, 2, 0, 0, 0, 0, math.NaN(), math.NaN()},
		{"single", []float64{math.Copysign(0, -1)}, false, 1, 1, 0, 0, 1, 0, 0, 0, 0},
		{"inf only", []float64{math.Inf(-1), 2}, false, 2, 1, 0, 1, 0, 2, 2, 2, 0},
		// squares of subnormals underflow, as in numpy: the std is 0
		{"subnormal", []float64{1e-323, 0}, false, 2, 2, 0, 0, 0.5, 0, 1e-323, 5e-324, 0},
		// complex: |3+4i| = 5, |0+0i| = 0, NaN in either part is NaN, Inf in either part is Inf
		{"complex", []float64{3, 4, 0, 0, math.NaN(), 1, 1, math.Inf(1)}, true, 4, 2, 1, 1, 0.25, 0, 5, 2.5, 2.5},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var s Summary
			s.add(tc.vals, make([]float64, len(tc.vals)), tc.complex)
			same := func(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }
			if s.Count != tc.count || s.Finite != tc.finite || s.NaN != tc.nan || s.Inf != tc.inf ||
				!same(s.ZeroFraction(), tc.zeroFrac) || !same(s.Std(), tc.std) {
				t.Errorf("got %+v zero fraction %v std %v", s, s.ZeroFraction(), s.Std())
			}
			if s.Finite > 0 && (s.Min != tc.min || s.Max != tc.max || s.Mean != tc.mean) {
				t.Errorf("min %v max %v mean %v, want %v %v %v", s.Min, s.Max, s.Mean, tc.min, tc.max, tc.mean)
			}
		})
	}
}

// TestSummarizeWorkersAgree splits a tensor into many chunks and checks that
// the result is the same, bit for bit, with 1 worker and with 8.
func TestSummarizeWorkersAgree(t *testing.T) {
	t.Parallel()
	e := newEngine()
	e.chunkElems = 10_007
	ts, _, err := loaders.OpenFile(fixture("npy", "f4_big.npy"), loaders.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ts2, _, err := loaders.OpenFile(fixture("npz", "deflated.npz"), loaders.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tensors := append(ts, ts2...)
	one, errs := e.summarize(tensors, 1)
	for _, e := range errs {
		if e != nil {
			t.Fatal(e)
		}
	}
	eight, _ := e.summarize(tensors, 8)
	for i := range one {
		if one[i] != eight[i] {
			t.Errorf("%s: 1 worker %+v, 8 workers %+v", tensors[i].Name, one[i], eight[i])
		}
	}
	// f4_big holds 0.5*i - 1000 for i < 300000: mean 0.5*149999.5 - 1000.
	big := one[0]
	if big.Count != 300_000 || big.Min != -1000 || big.Max != 0.5*299_999-1000 || big.Mean != 0.5*149_999.5-1000 {
		t.Errorf("f4_big: %+v", big)
	}
	// population std of 0.5*i over n values: 0.5*sqrt((n²−1)/12)
	if want := 0.5 * math.Sqrt((300_000.0*300_000.0-1)/12); math.Abs(big.Std()-want) > 1e-9*want {
		t.Errorf("f4_big std %v, want %v", big.Std(), want)
	}
}
