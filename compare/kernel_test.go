package compare

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/graphdiff/graphdiff/loaders"
	"github.com/graphdiff/graphdiff/tolerances"
)

// kernelData returns pairs that exercise every path of the kernels: long
// runs of equal values (the fast path), pairs that differ, ±0 against ∓0,
// NaN and ±Inf on either side or both, and ties for both maxima. With
// allDiffer every finite pair differs.
func kernelData(n int, allDiffer bool) ([]float32, []float32) {
	rng := rand.New(rand.NewPCG(7, 11))
	a, b := make([]float32, n), make([]float32, n)
	for i := range a {
		a[i] = float32(rng.NormFloat64())
		b[i] = a[i]
		if allDiffer || i%97 == 0 {
			b[i] = a[i] * (1 + float32(rng.NormFloat64())*1e-3)
		}
	}
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	set := func(i int, x, y float32) { a[i], b[i] = x, y }
	set(0, nan, nan) // no finite pair before the fast path may start
	// the first mismatch is a special one, in a lane after a difference's
	set(1, 3, 3)
	set(2, 4, 4)
	set(3, 1, nan)
	set(5, 0, float32(math.Copysign(0, -1)))
	set(10, inf, inf)
	set(11, 1, inf)
	set(n/3, -inf, -inf)
	set(n/3+1, nan, 1)
	set(n/2, 2, nan)
	for _, i := range []int{n/2 + 3, n/2 + 40, n - 7, n - 2} { // ties: same |a−b|, same |a−b|/|a|
		set(i, 100, 108)
	}
	return a, b
}

// metricsOf runs fold on a fresh accumulator running the kernels k and
// returns its metrics.
func metricsOf(k kernels, d loaders.DType, n int, fold func(c *acc)) Metrics {
	var h errorHistogram
	return foldedMetrics(k, d, n, &h, fold)
}

// foldedMetrics is metricsOf with the accumulator's histogram h.
func foldedMetrics(k kernels, d loaders.DType, n int, h *errorHistogram, fold func(c *acc)) Metrics {
	c := newAcc(k, tolerances.For(d), ulpKeyFor(d), false, true, h, 0)
	fold(c)
	tn := &loaders.Tensor{Shape: []int{n}}
	return c.metrics(h, tn.Index)
}

// pieces calls f on consecutive pieces of [0, n) of irregular sizes, so
// that pieces start in every lane and cut groups and runs.
func pieces(n int, f func(lo, hi int)) {
	sizes := []int{1, 3, 4, 5, 64, 7, 250, 1000, 2, 513}
	for lo, k := 0, 0; lo < n; k++ {
		hi := min(n, lo+sizes[k%len(sizes)])
		f(lo, hi)
		lo = hi
	}
}

// TestKernelsMatchGenericInPieces checks that the float32 and 16-bit
// kernels give exactly the metrics of the general loop, whether the data
// comes in one buffer or in pieces of any size.
func TestKernelsMatchGenericInPieces(t *testing.T) {
	t.Parallel()
	eachKernelSet(t, testKernelsMatchGenericInPieces)
}

// goKernels is the empty set of kernels: the Go loops alone.
const goKernels kernels = 0

// eachKernelSet runs test, in turn, with the Go loops alone and, where the
// machine has them, the AVX2 assembly kernels, then those with the
// AVX-512 loops too, without and with AVX512_VBMI2.
func eachKernelSet(t *testing.T, test func(t *testing.T, k kernels)) {
	t.Helper()
	for _, set := range []struct {
		name string
		k    kernels
	}{{"go", goKernels}, {"avx2", avx2Kernels}, {"avx512", avx512Kernels}, {"vbmi2", vbmi2Kernels}} {
		if set.k&^cpuKernels() != 0 {
			t.Logf("no %s kernels on this machine", set.name)
			continue
		}
		t.Run(set.name, func(t *testing.T) { test(t, set.k) })
	}
}

func testKernelsMatchGenericInPieces(t *testing.T, k kernels) {
	const n = 5000
	for _, allDiffer := range []bool{false, true} {
		a32, b32 := kernelData(n, allDiffer)
		generic := func(d loaders.DType, x, y []float32) Metrics {
			va, vb := make([]float64, n), make([]float64, n)
			for i := range x {
				va[i], vb[i] = float64(x[i]), float64(y[i])
			}
			return metricsOf(k, d, n, func(c *acc) { c.addReal(va, vb) })
		}
		want := generic(loaders.Float32, a32, b32)
		whole := metricsOf(k, loaders.Float32, n, func(c *acc) { c.addF32(a32, b32, ulpFloat32) })
		split := metricsOf(k, loaders.Float32, n, func(c *acc) {
			pieces(n, func(lo, hi int) { c.addF32(a32[lo:hi], b32[lo:hi], ulpFloat32) })
		})
		if !sameMetrics(&whole, &want) || !sameMetrics(&split, &want) {
			t.Errorf("float32, all differ %v:\ngeneric %#v\nkernel  %#v\npieces  %#v", allDiffer, want, whole, split)
		}
		for _, d := range []loaders.DType{loaders.BFloat16, loaders.Float16} {
			f16 := d == loaders.Float16
			mode := ulpBFloat16
			if f16 {
				mode = ulpKeyFunc
			}
			ra, rb := halfBytes(a32, f16), halfBytes(b32, f16)
			half := &loaders.Tensor{DType: d}
			x, y := make([]float32, n), make([]float32, n)
			half.DecodeFloat32(x, ra)
			half.DecodeFloat32(y, rb)
			want := generic(d, x, y)
			split := metricsOf(k, d, n, func(c *acc) {
				pieces(n, func(lo, hi int) { c.add16(ra[2*lo:2*hi], rb[2*lo:2*hi], half, mode) })
			})
			via32 := metricsOf(k, d, n, func(c *acc) { c.addF32(x, y, mode) })
			if !sameMetrics(&split, &want) || !sameMetrics(&via32, &want) {
				t.Errorf("%s, all differ %v:\ngeneric %#v\nadd16   %#v\naddF32  %#v", d, allDiffer, want, split, via32)
			}
		}
		// float32 against bfloat16 (either way round) and float32 against
		// float32, compared at bfloat16's precision: the float32 sides' ULP keys
		// round. The float32 side holds either any float32 values (every
		// pair differs) or values that are bfloat16 (equal runs).
		bf, bfA := make([]float32, n), make([]float32, n)
		(&loaders.Tensor{DType: loaders.BFloat16}).DecodeFloat32(bf, halfBytes(b32, false))
		(&loaders.Tensor{DType: loaders.BFloat16}).DecodeFloat32(bfA, halfBytes(a32, false))
		for _, m := range []struct {
			name string
			a, b []float32
			mode ulpMode
		}{
			{"float32 vs bfloat16", a32, bf, ulpBFloat16 | ulpRoundA},
			{"bfloat16 vs float32", bf, a32, ulpBFloat16 | ulpRoundB},
			{"bfloat16 values in float32 vs bfloat16", bfA, bf, ulpBFloat16 | ulpRoundA},
			{"bfloat16 vs bfloat16 values in float32", bf, bfA, ulpBFloat16 | ulpRoundB},
			{"float32 vs float32 at bfloat16", a32, b32, ulpBFloat16 | ulpRoundA | ulpRoundB},
		} {
			want := generic(loaders.BFloat16, m.a, m.b)
			got := metricsOf(k, loaders.BFloat16, n, func(c *acc) {
				pieces(n, func(lo, hi int) { c.addF32(m.a[lo:hi], m.b[lo:hi], m.mode) })
			})
			if !sameMetrics(&got, &want) {
				t.Errorf("%s, all differ %v:\ngeneric %#v\nkernel  %#v", m.name, allDiffer, want, got)
			}
			// with the bfloat16 side in place, in pieces and whole
			if v, raw, ok := mixedPair(m.a, m.b, m.mode); ok {
				whole := metricsOf(k, loaders.BFloat16, n, func(c *acc) { addMixedOnce(c, v, raw, m.mode) })
				split := metricsOf(k, loaders.BFloat16, n, func(c *acc) {
					pieces(n, func(lo, hi int) { addMixedOnce(c, v[lo:hi], raw[2*lo:2*hi], m.mode) })
				})
				if !sameMetrics(&whole, &want) || !sameMetrics(&split, &want) {
					t.Errorf("%s in place, all differ %v:\ngeneric %#v\nwhole   %#v\npieces  %#v", m.name, allDiffer, want, whole, split)
				}
			}
		}
		if want.MaxAbs.Index == nil || want.NaNA == 0 || want.SpecialMismatches == 0 {
			t.Fatalf("data misses a case: %#v", want)
		}
	}
}

// TestHalfSquaresExact checks the 16-bit fast path's squares against the
// decoded values for every finite bit pattern.
func TestHalfSquaresExact(t *testing.T) {
	t.Parallel()
	eachKernelSet(t, testHalfSquaresExact)
}

func testHalfSquaresExact(t *testing.T, kern kernels) {
	for h := range 1 << 16 {
		w := uint64(h) * 0x0001_0001_0001_0001 // the pattern in all four elements
		var buf [16]byte                       // two groups: the loops' 8-element step
		binary.LittleEndian.PutUint64(buf[:], w)
		binary.LittleEndian.PutUint64(buf[8:], w)
		for _, f16 := range []bool{false, true} {
			d := loaders.BFloat16
			if f16 {
				d = loaders.Float16
			}
			var x [lanes]float32
			(&loaders.Tensor{DType: d}).DecodeFloat32(x[:], buf[:])
			v := float64(x[0])
			run := kern.equalRunBF16
			if f16 {
				run = kern.equalRunF16
			}
			k, e := run(buf[:], buf[:], [lanes]float64{})
			if math.IsInf(v, 0) || math.IsNaN(v) {
				if k != 0 {
					t.Fatalf("f16 %v, %#04x: special value taken by the fast path", f16, h)
				}
				continue
			}
			if s := v*v + v*v; k != 2*lanes || e != [lanes]float64{s, s, s, s} {
				t.Fatalf("f16 %v, %#04x = %g: fast path took %d, squares %v", f16, h, v, k, e)
			}
		}
	}
}

// TestEqualRunsStopWhereGoStops checks the assembly fast paths against the
// Go loops on runs broken at every position by each kind of pair that ends
// a run: values that differ, NaN on both sides, ±Inf on both sides, and
// (for 16-bit data and float32 against bfloat16, which compare bit
// patterns) +0 against −0.
func TestEqualRunsStopWhereGoStops(t *testing.T) {
	t.Parallel()
	asm := cpuKernels() & avx2Kernels
	if asm == 0 {
		t.Skip("no assembly kernels on this machine")
	}
	rng := rand.New(rand.NewPCG(3, 5))
	nan, inf, negZero := float32(math.NaN()), float32(math.Inf(-1)), float32(math.Copysign(0, -1))
	breaks := []struct {
		name string
		x, y float32
	}{{"differ", 1, 1.5}, {"NaN", nan, nan}, {"Inf", inf, inf}, {"±0", 0, negZero}}
	for n := 0; n <= 40; n++ {
		for p := 0; p <= n; p++ { // p = n: no break
			for _, br := range breaks {
				a, b := make([]float32, n), make([]float32, n)
				for i := range a {
					a[i] = float32(rng.NormFloat64())
					b[i] = a[i]
				}
				if p < n {
					a[p], b[p] = br.x, br.y
				}
				e0 := [lanes]float64{rng.Float64(), 1, 2, 3}
				check := func(kind string, goK int, goE [lanes]float64, asmK int, asmE [lanes]float64) {
					if goK != asmK || goE != asmE {
						t.Fatalf("%s, n %d, %s at %d: Go took %d %v, assembly %d %v", kind, n, br.name, p, goK, goE, asmK, asmE)
					}
				}
				k, e := goKernels.equalRun32(a, b, e0)
				k2, e2 := asm.equalRun32(a, b, e0)
				check("float32", k, e, k2, e2)
				// float32 holding bfloat16 values against bfloat16 words
				v := make([]float32, n)
				(&loaders.Tensor{DType: loaders.BFloat16}).DecodeFloat32(v, halfBytes(a, false))
				raw := halfBytes(b, false)
				k, e = goKernels.equalRunMixed(v, raw, e0)
				k2, e2 = asm.equalRunMixed(v, raw, e0)
				check("float32 vs bfloat16", k, e, k2, e2)
				if p == n && k != n/lanes*lanes {
					t.Fatalf("float32 vs bfloat16, n %d: an unbroken run took %d", n, k)
				}
				for _, f16 := range []bool{false, true} {
					ra, rb := halfBytes(a, f16), halfBytes(b, f16)
					run := kernels.equalRunBF16
					if f16 {
						run = kernels.equalRunF16
					}
					k, e := run(goKernels, ra, rb, e0)
					k2, e2 := run(asm, ra, rb, e0)
					check(map[bool]string{false: "bfloat16", true: "float16"}[f16], k, e, k2, e2)
				}
			}
		}
	}
}

// TestFirstMismatchAfterTheMaxima checks the first element beyond the
// tolerance when it is no new maximum: the maxima come from pairs inside
// the tolerance (a large |a−b| at a large |a|, a large |a−b|/|a| at a tiny
// |a|), so the slow path's bulk, not its handling of maxima, finds it,
// first in its sixteen with another beyond it there (2001) or alone and
// later in it (2011). With an equal pair just before it, the sixteen-pair
// loop stops there and the four-pair loop finds it.
func TestFirstMismatchAfterTheMaxima(t *testing.T) {
	t.Parallel()
	eachKernelSet(t, func(t *testing.T, k kernels) {
		for _, firstBad := range []int{2001, 2011} {
			for _, equalBefore := range []bool{false, true} {
				testFirstMismatchAfterTheMaxima(t, k, firstBad, equalBefore)
			}
		}
	})
}

func testFirstMismatchAfterTheMaxima(t *testing.T, k kernels, firstBad int, equalBefore bool) {
	const n = 4096
	a, b := make([]float32, n), make([]float32, n)
	for i := range a {
		a[i] = 1 + float32(i%13)/16
		b[i] = math.Nextafter32(a[i], 2) // inside the tolerance
	}
	if equalBefore {
		b[firstBad-1] = a[firstBad-1]
	}
	a[0], b[0] = 1000, 1000.001  // |a−b| ≈ 1e-3 ≤ 1e-5 + 1.3e-6·1000
	a[1], b[1] = 1e-9, 1e-9+5e-6 // |a−b|/|a| ≈ 5000, |a−b| ≤ 1e-5
	b[firstBad] = a[firstBad] + 1e-4
	b[firstBad+7] = a[firstBad+7] - 1e-4
	m := metricsOf(k, loaders.Float32, n, func(c *acc) { c.addF32(a, b, ulpFloat32) })
	if m.Mismatched != 2 || len(m.FirstMismatch) != 1 || m.FirstMismatch[0] != firstBad {
		t.Errorf("first at %d, equal pair before: %v: mismatched %d, first at %v; want 2, first at [%d]", firstBad, equalBefore, m.Mismatched, m.FirstMismatch, firstBad)
	}
	if m.MaxAbs.Index[0] != 0 || m.MaxRel.Index[0] != 1 {
		t.Errorf("maxima at %v and %v, want [0] and [1]", m.MaxAbs.Index, m.MaxRel.Index)
	}
}

// TestLargestULPAfterTheMaxima checks the largest ULP distance when it
// belongs to no maximum, so that the slow path's bulk measures it: every
// pair differs by 1 or 2 units, but one by 5 at |a| ≈ 1.9, in a low or a
// high lane of eight and of sixteen, and the maxima of |a−b| and
// |a−b|/|a| are elsewhere: in the first group, or in the middle of the run
// (where the bulk must stop for them). For bfloat16 units the float32 side carries low bits
// that round up, down or to even, and the planted pair takes each of them
// with either parity of its rounded key.
func TestLargestULPAfterTheMaxima(t *testing.T) {
	t.Parallel()
	eachKernelSet(t, func(t *testing.T, k kernels) {
		for _, m := range ulpCases {
			for _, planted := range []int{2001, 2006, 2013} {
				for _, maxima := range [][2]int{{0, 1}, {3003, 3010}} {
					for _, low := range []uint32{0x7FFF, 0x8000, 0x8001, 0xC000, 0x1234, 0} {
						for _, base := range []float32{1.9, 1.9 + 1.0/128} { // keys of both parities
							name := fmt.Sprintf("%s, planted at %d (%.4f, low bits %#x), maxima at %v", m.name, planted, base, low, maxima)
							testLargestULP(t, k, name, m.dtype, m.mode, m.swap, planted, maxima, base, low)
						}
					}
				}
			}
		}
	})
}

func testLargestULP(t *testing.T, k kernels, name string, dtype loaders.DType, mode ulpMode, swap bool, planted int, maxima [2]int, base float32, low uint32) {
	const n = 4096
	rng := rand.New(rand.NewPCG(3, 5))
	pair := func(base float32, k, lo uint32) (float32, float32) { return unitPair(dtype, base, k, lo) }
	a, b := make([]float32, n), make([]float32, n)
	for i := range a {
		a[i], b[i] = pair(1+rng.Float32(), 1+uint32(rng.IntN(2)), lowBits[rng.IntN(len(lowBits))])
	}
	a[maxima[0]], b[maxima[0]] = pair(1<<20, 1, 0) // largest |a−b|
	a[maxima[1]], b[maxima[1]] = pair(1, 4, 0)     // largest |a−b|/|a|
	a[planted], b[planted] = pair(base, 5, low)
	if swap {
		a, b = b, a
	}
	wa, wb := widen64(a, b)
	want := metricsOf(k, dtype, n, func(c *acc) { c.addReal(wa, wb) })
	got := metricsOf(k, dtype, n, func(c *acc) { c.addF32(a, b, mode) })
	if want.MaxULP != 5 || want.MaxAbs.Index[0] != maxima[0] || want.MaxRel.Index[0] != maxima[1] {
		t.Fatalf("%s: data misses its aim: max ULP %d, maxima at %v and %v", name, want.MaxULP, want.MaxAbs.Index, want.MaxRel.Index)
	}
	if !sameMetrics(&got, &want) {
		t.Errorf("%s:\ngeneric %#v\nkernel  %#v", name, want, got)
	}
}

// mixedPair returns, for a pair of which one side is bfloat16 (mode has
// ulpRoundA or ulpRoundB, not both), the float32 side and the bfloat16
// side's little-endian bytes, as addMixed takes them.
func mixedPair(a, b []float32, mode ulpMode) (v []float32, raw []byte, ok bool) {
	switch mode {
	case ulpBFloat16 | ulpRoundA:
		return a, halfBytes(b, false), true
	case ulpBFloat16 | ulpRoundB:
		return b, halfBytes(a, false), true
	}
	return nil, nil, false
}

// addMixedOnce folds a mixed pair with addMixed.
func addMixedOnce(c *acc, v []float32, raw []byte, mode ulpMode) {
	c.addMixed(v, raw, &loaders.Tensor{DType: loaders.BFloat16}, mode, make([]float32, maxWindow))
}

// TestMixedEqualRunsInPlace checks that addMixed reads the bfloat16 side
// in place through runs of equal pairs, with every kernel set: float32
// values that are bfloat16 (a bfloat16 run saved as float32) against
// bfloat16 words, every 1000th pair different. Only the first window
// (before any finite pair) and one window at each difference are widened;
// the metrics are addF32's.
func TestMixedEqualRunsInPlace(t *testing.T) {
	t.Parallel()
	eachKernelSet(t, testMixedEqualRunsInPlace)
}

func testMixedEqualRunsInPlace(t *testing.T, k kernels) {
	const n, every = 20000, 1000
	rng := rand.New(rand.NewPCG(13, 17))
	a := make([]float32, n)
	for i := range a {
		a[i] = float32(rng.NormFloat64())
	}
	f32, bf := make([]float32, n), make([]float32, n)
	(&loaders.Tensor{DType: loaders.BFloat16}).DecodeFloat32(f32, halfBytes(a, false))
	copy(bf, f32)
	for i := every / 2; i < n; i += every {
		bf[i] = -bf[i] // exact in bfloat16
	}
	if m := metricsOf(k, loaders.BFloat16, n, func(c *acc) { c.addF32(f32, bf, ulpBFloat16|ulpRoundA) }); m.Mismatched != n/every {
		t.Fatalf("%d pairs beyond the tolerance, want %d", m.Mismatched, n/every)
	}
	checkMixedInPlace(t, k, f32, bf, n-(n/every+1)*minWindow, func(c *acc, v []float32, raw []byte, mode ulpMode) int {
		return c.addMixed(v, raw, &loaders.Tensor{DType: loaders.BFloat16}, mode, make([]float32, maxWindow))
	})
}

// checkMixedInPlace folds the float32 values f32 against the bfloat16
// values bf, both ways round, with the kernels k and fold (addMixed on the
// float32 side and the bfloat16 bytes, returning how many pairs it read in
// place), and checks that the metrics are addF32's and that at least least
// pairs were read in place.
func checkMixedInPlace(t *testing.T, k kernels, f32, bf []float32, least int, fold func(c *acc, v []float32, raw []byte, mode ulpMode) int) {
	t.Helper()
	n := len(f32)
	for _, m := range ulpCases[1:] {
		a, b := f32, bf
		if m.swap {
			a, b = bf, f32
		}
		want := metricsOf(k, loaders.BFloat16, n, func(c *acc) { c.addF32(a, b, m.mode) })
		v, raw, _ := mixedPair(a, b, m.mode)
		inPlace := 0
		got := metricsOf(k, loaders.BFloat16, n, func(c *acc) { inPlace = fold(c, v, raw, m.mode) })
		if !sameMetrics(&got, &want) {
			t.Errorf("%s:\naddF32   %#v\nin place %#v", m.name, want, got)
		}
		if inPlace < least {
			t.Errorf("%s: %d pairs of %d read in place, want at least %d", m.name, inPlace, n, least)
		}
	}
}

// ulpCases are the ways the float32 kernel measures ULP distances of
// float32 data: in float32 units, and in bfloat16 units with either side
// float32 (the other bfloat16).
var ulpCases = []struct {
	name  string
	dtype loaders.DType
	mode  ulpMode
	swap  bool // b is the float32 side
}{
	{"float32", loaders.Float32, ulpFloat32, false},
	{"float32 vs bfloat16", loaders.BFloat16, ulpBFloat16 | ulpRoundA, false},
	{"bfloat16 vs float32", loaders.BFloat16, ulpBFloat16 | ulpRoundB, true},
}

// widen64 returns a and b as float64, for the general loop.
func widen64(a, b []float32) (wa, wb []float64) {
	wa, wb = make([]float64, len(a)), make([]float64, len(b))
	for i := range a {
		wa[i], wb[i] = float64(a[i]), float64(b[i])
	}
	return wa, wb
}

// lowBits are low halves of float32 values that round a bfloat16 key up,
// down, to even, and not at all.
var lowBits = []uint32{0x7FFF, 0x8000, 0x8001, 0xC000, 0x1234}

// unitPair returns x and a value k units above x's key, in the units of
// dtype: float32 values k bit patterns apart or, for bfloat16, x with the
// low bits lo and the bfloat16 k units above x rounded to nearest-even.
func unitPair(dtype loaders.DType, base float32, k, lo uint32) (float32, float32) {
	bits := math.Float32bits(base)
	if dtype != loaders.BFloat16 {
		return base, math.Float32frombits(bits + k)
	}
	x := bits&^0xFFFF | lo
	key := (x + 0x7FFF + x>>16&1) >> 16
	return math.Float32frombits(x), math.Float32frombits((key + k) << 16)
}

// TestEventsInEveryLane puts each event that stops or steers the slow
// path's bulk on each of 32 consecutive positions of a run whose pairs
// all differ by one or two units, so that it falls in every lane of four,
// eight and sixteen: a new largest |a−b|, a new largest |a−b|/|a|, the
// smallest |a−b| of the run, the largest ULP distance, a pair beyond the
// tolerance, an equal pair, NaN and +Inf. For the events that must be no
// new maximum, two pairs in the first group set the maxima high with ULP
// distances of one unit. The kernels must give the general loop's metrics
// and histogram: the same counts in the same bucket range.
func TestEventsInEveryLane(t *testing.T) {
	t.Parallel()
	eachKernelSet(t, func(t *testing.T, k kernels) {
		for _, m := range ulpCases {
			testEventsInEveryLane(t, k, m.name, m.dtype, m.mode, m.swap)
		}
	})
}

func testEventsInEveryLane(t *testing.T, k kernels, name string, dtype loaders.DType, mode ulpMode, swap bool) {
	pair := func(base float32, k uint32) (float32, float32) { return unitPair(dtype, base, k, 0) }
	// the least subnormal; units a pair is beyond the tolerance by at 1.5
	// (1e-5 + 1.3e-6·|a| for float32, 1e-5 + 1.6e-2·|a| for bfloat16); the
	// most units the run's pairs differ by, which for bfloat16 keeps them
	// inside it
	tiny, beyond, most := float32(0x1p-149), uint32(128), 2
	if dtype == loaders.BFloat16 {
		tiny, beyond, most = 0x1p-133, 4, 1
	}
	ceilings := func(m *Metrics) bool { return m.MaxAbs.Index[0] == 0 && m.MaxRel.Index[0] == 1 }
	type event struct {
		name     string
		a, b     float32
		ceilings bool                           // plant the maxima at 0 and 1
		aim      func(m *Metrics, pos int) bool // the general loop's metrics show it
	}
	events := []event{
		{"largest |a−b|", 0, 0, true, func(m *Metrics, pos int) bool { return m.MaxAbs.Index[0] == pos }},
		{"largest |a−b|/|a|", 3 * tiny, 5 * tiny, true, func(m *Metrics, pos int) bool { return m.MaxRel.Index[0] == pos }},
		{"smallest |a−b|", 0, 0, false, func(m *Metrics, pos int) bool { return m.MaxAbs.Index[0] != pos && m.MaxRel.Index[0] != pos }},
		{"largest ULP distance", 0, 0, true, func(m *Metrics, pos int) bool { return ceilings(m) && m.MaxULP == 5 }},
		{"beyond the tolerance", 0, 0, true, func(m *Metrics, pos int) bool {
			return ceilings(m) && m.Mismatched == 1 && m.FirstMismatch[0] == pos
		}},
		{"equal", 1.25, 1.25, true, func(m *Metrics, pos int) bool { return ceilings(m) && m.Mismatched == 0 }},
		{"NaN", float32(math.NaN()), 1, true, func(m *Metrics, pos int) bool { return ceilings(m) && m.NaNA+m.NaNB == 1 }},
		{"+Inf", 1, float32(math.Inf(1)), true, func(m *Metrics, pos int) bool { return ceilings(m) && m.InfA+m.InfB == 1 }},
	}
	events[0].a, events[0].b = pair(1<<21, 1)
	events[2].a, events[2].b = pair(0x1p-20, 1)
	events[3].a, events[3].b = pair(1.9, 5)
	events[4].a, events[4].b = pair(1.5, beyond)
	for _, ev := range events {
		for pos := 1000; pos < 1032; pos++ {
			const n = 2048
			rng := rand.New(rand.NewPCG(uint64(pos), 9))
			a, b := make([]float32, n), make([]float32, n)
			for i := range a {
				a[i], b[i] = unitPair(dtype, 1+rng.Float32(), 1+uint32(rng.IntN(most)), lowBits[rng.IntN(len(lowBits))])
			}
			if ev.ceilings {
				a[0], b[0] = pair(1<<20, 1) // |a−b| of 2²⁰ units
				a[1], b[1] = 3*tiny, 4*tiny // |a−b|/|a| = 1/3
			}
			a[pos], b[pos] = ev.a, ev.b
			if swap {
				a, b = b, a
			}
			wa, wb := widen64(a, b)
			var hw errorHistogram
			want := foldedMetrics(k, dtype, n, &hw, func(c *acc) { c.addReal(wa, wb) })
			if !ev.aim(&want, pos) {
				t.Fatalf("%s, %s at %d: data misses its aim: %#v", name, ev.name, pos, want)
			}
			type namedFold struct {
				name string
				fold func(c *acc)
			}
			folds := []namedFold{{"kernel", func(c *acc) { c.addF32(a, b, mode) }}}
			if v, raw, ok := mixedPair(a, b, mode); ok {
				folds = append(folds, namedFold{"in place", func(c *acc) { addMixedOnce(c, v, raw, mode) }})
			}
			for _, f := range folds {
				var hg errorHistogram
				got := foldedMetrics(k, dtype, n, &hg, f.fold)
				wlo, whi := hw.span()
				glo, ghi := hg.span()
				if !sameMetrics(&got, &want) || glo != wlo || ghi != whi || hg.total() != hw.total() {
					t.Errorf("%s, %s at %d:\ngeneric %#v\n         histogram [%d, %d], %d counts\n%-8s %#v\n         histogram [%d, %d], %d counts",
						name, ev.name, pos, want, wlo, whi, hw.total(), f.name, got, glo, ghi, hg.total())
				}
			}
		}
	}
}
