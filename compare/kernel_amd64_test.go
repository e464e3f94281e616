//go:build amd64 && !purego

package compare

import (
	"testing"
	"unsafe"

	"github.com/graphdiff/graphdiff/loaders"
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
		"first": unsafe.Offsetof(st.first), "maxULP": unsafe.Offsetof(st.maxULP),
		"minBucket": unsafe.Offsetof(st.minBucket),
		"maxAbs":    unsafe.Offsetof(st.maxAbs), "relThr": unsafe.Offsetof(st.relThr),
		"atol": unsafe.Offsetof(st.atol), "rtol": unsafe.Offsetof(st.rtol),
		"maxAbs32": unsafe.Offsetof(st.maxAbs32), "relThr32": unsafe.Offsetof(st.relThr32),
		"atol32": unsafe.Offsetof(st.atol32), "rtol32": unsafe.Offsetof(st.rtol32),
	}
	want := map[string]uintptr{"sums": 0, "counts": 8, "differ": 16, "beyond": 24, "first": 32, "maxULP": 48,
		"minBucket": 112, "maxAbs": 144, "relThr": 152, "atol": 160, "rtol": 168,
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
