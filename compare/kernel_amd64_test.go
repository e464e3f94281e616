//go:build amd64 && !purego

package compare

import (
	"math"
	"testing"
	"unsafe"

	"github.com/graphdiff/graphdiff/loaders"
	"github.com/graphdiff/graphdiff/tolerances"
)

// TestDifferStateLayout checks differState's offsets against those the
// assembly uses (ST_* in kernel_amd64.s).
func TestDifferStateLayout(t *testing.T) {
	t.Parallel()
	var st differState
	got := map[string]uintptr{
		"sums": unsafe.Offsetof(st.sums), "counts": unsafe.Offsetof(st.counts),
		"differ": unsafe.Offsetof(st.differ), "beyond": unsafe.Offsetof(st.beyond),
		"first": unsafe.Offsetof(st.first), "minAd": unsafe.Offsetof(st.minAd),
		"maxULP": unsafe.Offsetof(st.maxULP),
		"atol":   unsafe.Offsetof(st.atol), "rtol": unsafe.Offsetof(st.rtol),
		"maxAbs": unsafe.Offsetof(st.maxAbs), "maxRel": unsafe.Offsetof(st.maxRel),
	}
	want := map[string]uintptr{"sums": 0, "counts": 8, "differ": 16, "beyond": 24, "first": 32, "minAd": 48,
		"maxULP": 80, "atol": 96, "rtol": 128, "maxAbs": 160, "maxRel": 192}
	for f, off := range want {
		if got[f] != off {
			t.Errorf("differState.%s at %d, the assembly reads it at %d", f, got[f], off)
		}
	}
	var s laneSums
	if unsafe.Offsetof(s.sqA) != 32 || unsafe.Offsetof(s.sqB) != 64 || unsafe.Offsetof(s.ab) != 96 || unsafe.Offsetof(s.eq) != 128 {
		t.Error("laneSums is not laid out as the assembly reads it (sqD, sqA, sqB, ab, eq)")
	}
}

// TestFoldStateLayout checks foldState's offsets against those the
// assembly uses (FS_* in kernel_amd64.s).
func TestFoldStateLayout(t *testing.T) {
	t.Parallel()
	var st foldState
	got := map[string]uintptr{
		"sums": unsafe.Offsetof(st.sums), "counts": unsafe.Offsetof(st.counts),
		"differ": unsafe.Offsetof(st.differ), "beyond": unsafe.Offsetof(st.beyond),
		"first": unsafe.Offsetof(st.first), "pack16": unsafe.Offsetof(st.pack16), "maxULP": unsafe.Offsetof(st.maxULP),
		"minBucket": unsafe.Offsetof(st.minBucket),
		"maxAbs":    unsafe.Offsetof(st.maxAbs), "maxRel": unsafe.Offsetof(st.maxRel),
		"atol": unsafe.Offsetof(st.atol), "rtol": unsafe.Offsetof(st.rtol),
		"maxAbs32": unsafe.Offsetof(st.maxAbs32), "relThr32": unsafe.Offsetof(st.relThr32),
		"atol32": unsafe.Offsetof(st.atol32), "rtol32": unsafe.Offsetof(st.rtol32),
	}
	want := map[string]uintptr{"sums": 0, "counts": 8, "differ": 16, "beyond": 24, "first": 32, "pack16": 40, "maxULP": 48,
		"minBucket": 112, "maxAbs": 144, "maxRel": 152, "atol": 160, "rtol": 168,
		"maxAbs32": 176, "relThr32": 180, "atol32": 184, "rtol32": 188}
	for f, off := range want {
		if got[f] != off {
			t.Errorf("foldState.%s at %d, the assembly reads it at %d", f, got[f], off)
		}
	}
}

// TestMixedReadsInPlace checks that addMixed reads the bfloat16 side in
// place wherever it can, with AVX-512: on a run whose pairs all differ
// (both ways round), from an accumulator off lane 0, with one equal pair
// among them (which the sixteen-pair loop takes too), every pair goes in
// place but for the first window (which reaches lane 0), at most one
// window more and a tail shorter than sixteen. The metrics are addF32's.
func TestMixedReadsInPlace(t *testing.T) {
	t.Parallel()
	if cpuKernels()&kernMixed512 == 0 {
		t.Skip("no AVX-512 on this machine")
	}
	const n, head, equal = 20000, 3, 5003
	f32, bf := make([]float32, n), make([]float32, n)
	for i := range f32 {
		f32[i], bf[i] = unitPair(loaders.BFloat16, 1+float32(i%1000)/1000, 1, lowBits[i%len(lowBits)])
	}
	f32[0], bf[0] = unitPair(loaders.BFloat16, 1<<20, 1, 0x1234) // the maxima, first
	f32[1], bf[1] = 0x1p-133, 0x1p-132
	f32[equal], bf[equal] = 1.5, 1.5
	least := n - head - (minWindow - head) - minWindow - 15
	checkMixedInPlace(t, avx512Kernels, f32, bf, least, func(c *acc, v []float32, raw []byte, mode ulpMode) int {
		addMixedOnce(c, v[:head], raw[:2*head], mode) // too short for the loop
		return c.addMixed(v[head:], raw[2*head:], &loaders.Tensor{DType: loaders.BFloat16}, mode, make([]float32, maxWindow))
	})
}

// TestSpreadCountsStayBelow16Bits folds 2 Mi pairs that all differ by the
// same amount, so that every one counts in one bucket of each lane's
// spread table, 131,072 times: past what 16 bits hold, which the tables
// must add to the histogram before. The histogram and metrics are the
// general loop's, whether the pairs come whole or in 64 Ki pieces.
func TestSpreadCountsStayBelow16Bits(t *testing.T) {
	t.Parallel()
	if cpuKernels()&kernDiffer512 == 0 {
		t.Skip("no AVX-512 on this machine")
	}
	const n = 1 << 21
	a, b := make([]float32, n), make([]float32, n)
	for i := range a {
		a[i], b[i] = 1.5, math.Nextafter32(1.5, 2)
	}
	wa, wb := widen64(a, b)
	var hw errorHistogram
	want := foldedMetrics(goKernels, loaders.Float32, n, &hw, func(c *acc) { c.addReal(wa, wb) })
	for _, piece := range []int{n, pairBufElems} {
		var h errorHistogram
		got := foldedMetrics(avx512Kernels, loaders.Float32, n, &h, func(c *acc) {
			for lo := 0; lo < n; lo += piece {
				c.addF32(a[lo:lo+piece], b[lo:lo+piece], ulpFloat32)
			}
		})
		lo, hi := h.span()
		if wlo, whi := hw.span(); !sameMetrics(&got, &want) || lo != wlo || hi != whi || h.counts[lo] != hw.counts[lo] {
			t.Errorf("pieces of %d: histogram [%d, %d] with %d in %d, want [%d, %d] with %d\ngeneric %#v\nkernel  %#v",
				piece, lo, hi, h.counts[lo], lo, wlo, whi, hw.counts[wlo], want, got)
		}
	}
}

// TestTiesStayInTheLoop checks that pairs that tie both maxima, as every
// pair does where equal values differ by one unit (weights set to one
// value, one step apart), go through the sixteen-pair loop: a tie is no
// new maximum, so after the first sixteen it takes every pair.
func TestTiesStayInTheLoop(t *testing.T) {
	t.Parallel()
	if cpuKernels()&kernDiffer512 == 0 {
		t.Skip("no AVX-512 on this machine")
	}
	const n = 4096
	a, b := make([]float32, n), make([]float32, n)
	for i := range a {
		a[i], b[i] = 1.5, math.Nextafter32(1.5, 2)
	}
	var h errorHistogram
	c := newAcc(avx512Kernels, tolerances.For(loaders.Float32), ulpKeyFor(loaders.Float32), false, true, &h, 0)
	c.block(a[:4*lanes], b[:4*lanes], 0, ulpFloat32)
	c.n += 4 * lanes
	if k := c.fold32(a[4*lanes:], b[4*lanes:], 0, ulpFloat32); k != n-4*lanes {
		t.Errorf("the loop took %d pairs of %d", k, n-4*lanes)
	}
}
