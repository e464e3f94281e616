//go:build amd64 && !purego

package compare

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/graphdiff/graphdiff/loaders"
)

// TestAddSpread checks addSpread (sixteen buckets a step in assembly, the
// rest in Go) against the sum of each bucket's sixteen lane counts, up to
// 1<<16 − 1 each, for runs of buckets of every length around a step's,
// and that it leaves the counts zero and those past them alone.
func TestAddSpread(t *testing.T) {
	t.Parallel()
	if cpuKernels()&kernDiffer512 == 0 {
		t.Skip("no AVX-512 on this machine")
	}
	rng := rand.New(rand.NewPCG(3, 9))
	for _, n := range []int{0, 1, 15, 16, 17, 31, 32, 33, 47, 100, 257} {
		spread := make([]uint16, 4*lanes*(n+1))
		for i := range spread[:4*lanes*n] {
			spread[i] = uint16(rng.Uint32())
			if i%5 == 0 {
				spread[i] = math.MaxUint16
			}
		}
		spread[4*lanes*n] = 1 // the next bucket's: left as it is
		counts, want := make([]uint32, n), make([]uint32, n)
		for k := range counts {
			counts[k] = rng.Uint32() >> 4
			want[k] = counts[k]
			for _, c := range spread[4*lanes*k:][:4*lanes] {
				want[k] += uint32(c)
			}
		}
		addSpread(counts, spread[:4*lanes*n])
		if !slices.Equal(counts, want) {
			t.Errorf("%d buckets: counts %v, want %v", n, counts, want)
		}
		if i := slices.IndexFunc(spread[:4*lanes*n], func(c uint16) bool { return c != 0 }); i >= 0 || spread[4*lanes*n] != 1 {
			t.Errorf("%d buckets: spread count %d left %d, the next %d", n, i, spread[max(i, 0)], spread[4*lanes*n])
		}
	}
}

// TestSignsDifferAboveMaxRelOne checks the sixteen-pair loops where the
// largest relative difference is already above 1, so that pairs whose
// signs differ, within the tolerance's atol, fall below both maxima: the
// loops must still send them to the exact tests, which alone tell them
// apart for the ULP distances. It
// folds a float32 pair and a float32 side against bfloat16 words, with
// other pairs one ulp apart, and compares every metric and the histogram
// with the general loop's.
func TestSignsDifferAboveMaxRelOne(t *testing.T) {
	t.Parallel()
	if cpuKernels()&kernDiffer512 == 0 {
		t.Skip("no AVX-512 on this machine")
	}
	const n = 4096
	for _, tc := range []struct {
		dtype loaders.DType
		mode  ulpMode
	}{{loaders.Float32, ulpFloat32}, {loaders.BFloat16, ulpBFloat16 | ulpRoundA}} {
		rng := rand.New(rand.NewPCG(5, 6))
		a, b := make([]float32, n), make([]float32, n)
		for i := range a {
			a[i] = float32(rng.NormFloat64())
			b[i] = math.Float32frombits(math.Float32bits(a[i]) + 1)
			if tc.mode != ulpFloat32 {
				b[i] = math.Float32frombits(math.Float32bits(b[i]) &^ 0xFFFF)
			}
			if i%37 == 5 { // signs that differ, |b − a| = 3·|a|/2: below both maxima and atol
				a[i], b[i] = 0x1p-19, -0x1p-20
			}
		}
		a[0], b[0] = 1, 9 // the maxima first: |b − a| 8, 8 times |a|
		var hg, hk errorHistogram
		want := foldedMetrics(goKernels, tc.dtype, n, &hg, func(c *acc) { c.addF32(a, b, tc.mode) })
		got := foldedMetrics(avx512Kernels, tc.dtype, n, &hk, func(c *acc) {
			c.addF32(a[:16], b[:16], tc.mode)
			if st := c.foldState(); st.relThr32 >= 1 || st.noFMA() != 0 {
				t.Errorf("%v: relThr32 %g, noFMA %#x: want below 1, and 0", tc.dtype, st.relThr32, st.noFMA())
			}
			c.addF32(a[16:], b[16:], tc.mode)
		})
		glo, ghi := hg.span()
		klo, khi := hk.span()
		if !sameMetrics(&got, &want) || glo != klo || ghi != khi || !slices.Equal(hg.counts, hk.counts) {
			t.Errorf("%v: histogram [%d, %d], want [%d, %d]\ngeneric %#v\nkernel  %#v", tc.dtype, klo, khi, glo, ghi, want, got)
		}
		if got.MaxULP < 1<<14 {
			t.Errorf("%v: largest ULP distance %d, want that of 2⁻¹⁹ and −2⁻²⁰", tc.dtype, got.MaxULP)
		}
	}
}
