package compare

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/x448/float16"

	"github.com/graphdiff/graphdiff/loaders"
	"github.com/graphdiff/graphdiff/tolerances"
)

// edgePairs returns pairs (a, b) of values representable in d that sit at
// the edge of d's default tolerance: for references of every magnitude
// (zero, −0, subnormal, near atol, ordinary, large; both signs), each b is
// one of the representable values nearest a ± (atol + rtol·|a|), inside
// and outside. NaN, ±Inf and ±0 pairs follow. With maxFirst the first pair
// differs so much that no later pair is a new maximum, so that the
// assembly loops, which hand new maxima back to Go, take the rest.
func edgePairs(d loaders.DType, maxFirst bool) (a, b []float32) {
	round := func(v float64) float32 { return float32(v) }
	switch d {
	case loaders.BFloat16:
		round = func(v float64) float32 { return math.Float32frombits(uint32(bfloat16Bits(v)) << 16) }
	case loaders.Float16:
		round = func(v float64) float32 { return float16.Fromfloat32(float32(v)).Float32() }
	}
	tol := tolerances.For(d)
	eps := tolerances.Epsilon(d)
	if maxFirst {
		a, b = append(a, round(1)), append(b, round(1000))
	}
	refs := []float64{0, math.Copysign(0, -1), 1e-40, 6e-8, tol.ATol, 3 * tol.ATol, tol.ATol / tol.RTol,
		1e-3, 0.1, 1, 3.7, 1000, 60000}
	rng := rand.New(rand.NewPCG(3, 5))
	for range 40 {
		refs = append(refs, rng.NormFloat64()*math.Pow(10, float64(rng.IntN(8)-4)))
	}
	for _, r := range refs {
		for _, sign := range []float64{1, -1} {
			x := round(sign * r)
			e := tol.ATol + tol.RTol*math.Abs(float64(x))
			for _, target := range []float64{float64(x) + e, float64(x) - e} {
				seen := map[float32]bool{}
				add := func(y float32) {
					if !seen[y] && !math.IsInf(float64(y), 0) {
						seen[y] = true
						a, b = append(a, x), append(b, y)
					}
				}
				for k := -6; k <= 6; k++ { // half-epsilon steps: every neighbour
					add(round(target * (1 + float64(k)*eps/2)))
				}
				if d == loaders.Float32 {
					y := round(target)
					for range 2 {
						add(y)
						add(math.Nextafter32(y, float32(math.Inf(1))))
						add(math.Nextafter32(y, float32(math.Inf(-1))))
						y = math.Nextafter32(y, float32(math.Inf(1)))
					}
				}
			}
		}
	}
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	negZero := float32(math.Copysign(0, -1))
	for _, p := range [][2]float32{{nan, nan}, {nan, 1}, {1, nan}, {inf, inf}, {-inf, -inf}, {inf, -inf},
		{1, inf}, {-inf, 1}, {nan, inf}, {0, negZero}, {negZero, 0}, {negZero, negZero}} {
		a, b = append(a, p[0]), append(b, p[1])
	}
	return a, b
}

// predicateCount returns how many pairs tolerances.Tolerance.Close says are
// not close, and the index of the first.
func predicateCount(tol tolerances.Tolerance, a, b []float32) (n int64, first []int) {
	for i := range a {
		if !tol.Close(float64(a[i]), float64(b[i])) {
			if n == 0 {
				first = []int{i}
			}
			n++
		}
	}
	return n, first
}

// TestKernelsApplyThePredicate folds pairs at the edge of the tolerance
// (edgePairs) with every kernel and kernel set, whole and in pieces, and
// checks that each counts beyond the tolerance exactly the pairs that
// tolerances.Tolerance.Close, the one predicate, calls not close, with the
// same first index.
func TestKernelsApplyThePredicate(t *testing.T) {
	t.Parallel()
	eachKernelSet(t, testKernelsApplyThePredicate)
}

func testKernelsApplyThePredicate(t *testing.T, k kernels) {
	check := func(name string, d loaders.DType, a, b []float32, fold func(c *acc, lo, hi int)) {
		t.Helper()
		n := len(a)
		wantN, wantFirst := predicateCount(tolerances.For(d), a, b)
		if wantN == 0 || wantN == int64(n) {
			t.Fatalf("%s: %d of %d pairs beyond: the data do not straddle the edge", name, wantN, n)
		}
		whole := metricsOf(k, d, n, func(c *acc) { fold(c, 0, n) })
		split := metricsOf(k, d, n, func(c *acc) { pieces(n, func(lo, hi int) { fold(c, lo, hi) }) })
		for _, m := range []struct {
			how string
			m   Metrics
		}{{"whole", whole}, {"in pieces", split}} {
			if m.m.Mismatched != wantN || fmt.Sprint(m.m.FirstMismatch) != fmt.Sprint(wantFirst) {
				t.Errorf("%s, %s: %d beyond, first %v; the predicate says %d, first %v",
					name, m.how, m.m.Mismatched, m.m.FirstMismatch, wantN, wantFirst)
			}
		}
	}
	for _, maxFirst := range []bool{false, true} {
		a, b := edgePairs(loaders.Float32, maxFirst)
		va, vb := widen(a), widen(b)
		check(fmt.Sprintf("float32 addF32 (max first %v)", maxFirst), loaders.Float32, a, b,
			func(c *acc, lo, hi int) { c.addF32(a[lo:hi], b[lo:hi], ulpFloat32) })
		check(fmt.Sprintf("float32 addReal (max first %v)", maxFirst), loaders.Float32, a, b,
			func(c *acc, lo, hi int) { c.addReal(va[lo:hi], vb[lo:hi]) })
		for _, d := range []loaders.DType{loaders.BFloat16, loaders.Float16} {
			f16 := d == loaders.Float16
			mode := ulpBFloat16
			if f16 {
				mode = ulpKeyFunc
			}
			a, b := edgePairs(d, maxFirst)
			ra, rb := halfBytes(a, f16), halfBytes(b, f16)
			half := &loaders.Tensor{DType: d}
			check(fmt.Sprintf("%s add16 (max first %v)", d, maxFirst), d, a, b,
				func(c *acc, lo, hi int) { c.add16(ra[2*lo:2*hi], rb[2*lo:2*hi], half, mode) })
			check(fmt.Sprintf("%s addF32 (max first %v)", d, maxFirst), d, a, b,
				func(c *acc, lo, hi int) { c.addF32(a[lo:hi], b[lo:hi], mode) })
		}
		// float32 values against bfloat16 ones at bfloat16's tolerance, the
		// bfloat16 side read in place, either way round
		x, y := edgePairs(loaders.BFloat16, maxFirst)
		for i := range x { // float32 references off the bfloat16 grid
			x[i] = math.Nextafter32(x[i]*(1+1e-4), 0)
		}
		for _, m := range []struct {
			name string
			a, b []float32
			mode ulpMode
		}{{"float32 vs bfloat16", x, y, ulpBFloat16 | ulpRoundA}, {"bfloat16 vs float32", y, x, ulpBFloat16 | ulpRoundB}} {
			v, raw, _ := mixedPair(m.a, m.b, m.mode)
			check(fmt.Sprintf("%s addMixed (max first %v)", m.name, maxFirst), loaders.BFloat16, m.a, m.b,
				func(c *acc, lo, hi int) { addMixedOnce(c, v[lo:hi], raw[2*lo:2*hi], m.mode) })
		}
	}
}

// widen returns v as float64.
func widen(v []float32) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}
