//go:build amd64 && !purego

package compare

import (
	"math"
	"os"
	"slices"
	"strings"
	"unsafe"

	"golang.org/x/sys/cpu"
)

// On amd64 with AVX2 the fast paths (eight pairs per iteration) and the
// bulk of the slow path (differRun32, four) run in assembly
// (kernel_amd64.s), with the Go loops' float64 operations in the Go loops'
// order; with AVX-512 (F, DQ, VL, BW) as well, float32 pairs go sixteen at
// a time whether they are equal or not (fold32AVX512, and foldBF16AVX512
// with one side bfloat16 words read in place), leaving to the loops above
// only sixteen that hold ±Inf, NaN or a new maximum. What they compute is
// bit for bit the same, which the kernel tests check with each set: Go,
// AVX2, AVX2 with AVX-512. Build with -tags purego to use the Go loops
// only.

// cpuKernels returns the kernels this processor can run: none without
// AVX2, avx2Kernels with it, avx512Kernels with AVX-512 (F, DQ, VL, BW)
// and BMI1 as well (the sixteen-pair loops split bucket indices with
// BEXTR), and all of them with AVX512_VBMI2 too.
func cpuKernels() kernels {
	x := cpu.X86
	switch {
	case !x.HasAVX2:
		return 0
	case x.HasAVX512F && x.HasAVX512DQ && x.HasAVX512VL && x.HasAVX512BW && x.HasBMI1 && x.HasAVX512VBMI2:
		return vbmi2Kernels
	case x.HasAVX512F && x.HasAVX512DQ && x.HasAVX512VL && x.HasAVX512BW && x.HasBMI1:
		return avx512Kernels
	}
	return avx2Kernels
}

// machineKernels returns the kernels Pairs runs: those the processor can
// run, less those GRAPHDIFF_NOASM turns off, for measuring what each gains
// (bench/kernels.sh): a comma-separated list of equal32, equal16,
// equalmixed, differ32, differ512, mixed512, pack16 and update512. The Go loops then
// run, with the same results. Unknown names are ignored.
func machineKernels() kernels {
	k := cpuKernels()
	off := strings.Split(os.Getenv("GRAPHDIFF_NOASM"), ",")
	for _, n := range [...]struct {
		name   string
		kernel kernels
	}{{"equal32", kernEqual32}, {"equal16", kernEqual16}, {"equalmixed", kernEqualMixed},
		{"differ32", kernDiffer32}, {"differ512", kernDiffer512}, {"mixed512", kernMixed512},
		{"pack16", kernPack16}, {"update512", kernUpdate512}} {
		if slices.Contains(off, n.name) {
			k &^= n.kernel
		}
	}
	return k
}

//go:noescape
func equalRun32AVX2(a, b *float32, n int, e *[lanes]float64) int

//go:noescape
func equalRunBF16AVX2(a, b *byte, n int, e *[lanes]float64) int

//go:noescape
func equalRunF16AVX2(a, b *byte, n int, e *[lanes]float64) int

func (k kernels) equalRun32(va, vb []float32, e [lanes]float64) (int, [lanes]float64) {
	if k&kernEqual32 == 0 || len(va) < lanes {
		return equalRun32Go(va, vb, e)
	}
	vb = vb[:len(va)]
	return equalRun32AVX2(unsafe.SliceData(va), unsafe.SliceData(vb), len(va), &e), e
}

func (k kernels) equalRunBF16(ra, rb []byte, e [lanes]float64) (int, [lanes]float64) {
	if k&kernEqual16 == 0 || len(ra) < 2*lanes {
		return equalRunBF16Go(ra, rb, e)
	}
	rb = rb[:len(ra)]
	return equalRunBF16AVX2(unsafe.SliceData(ra), unsafe.SliceData(rb), len(ra)/2, &e), e
}

func (k kernels) equalRunF16(ra, rb []byte, e [lanes]float64) (int, [lanes]float64) {
	if k&kernEqual16 == 0 || len(ra) < 2*lanes {
		return equalRunF16Go(ra, rb, e)
	}
	rb = rb[:len(ra)]
	return equalRunF16AVX2(unsafe.SliceData(ra), unsafe.SliceData(rb), len(ra)/2, &e), e
}

//go:noescape
func equalRunMixedAVX2(v *float32, raw *byte, n int, e *[lanes]float64) int

func (k kernels) equalRunMixed(v []float32, raw []byte, e [lanes]float64) (int, [lanes]float64) {
	if k&kernEqualMixed == 0 || len(v) < lanes {
		return equalRunMixedGo(v, raw, e)
	}
	raw = raw[:2*len(v)]
	return equalRunMixedAVX2(unsafe.SliceData(v), unsafe.SliceData(raw), len(v), &e), e
}

// differState is what differRun32AVX2 reads and writes. Its layout is the
// assembly's (ST_* offsets; TestDifferStateLayout checks them).
type differState struct {
	sums   *laneSums
	counts *uint32 // the histogram's buckets
	differ int64   // pairs with a ≠ b
	beyond int64   // pairs beyond the tolerance
	first  int64   // index of the first of these, −1 if none
	_      int64
	minAd  [lanes]float64 // least |a−b| of pairs that differ, per lane
	maxULP [lanes]uint32
	// read only, one copy per lane
	atol, rtol, maxAbs, maxRel [lanes]float64
}

//go:noescape
func differRun32AVX2(a, b *float32, from, to int, st *differState, mode ulpMode) int

// differRun32 folds the leading groups of lanes finite pairs of va and vb
// (va[0] is the i-th next element and in lane 0) that offer no new maximum,
// as block would, and returns how many elements it took: a multiple of
// lanes, stopping before a group with ±Inf or NaN, one with a new maximum
// (left to block, which keeps ties and positions), or an equal group after
// others (left to the fast path). ran is false when it could not look at
// the first group: without the assembly, for ULP distances by key
// function, before the first finite pair, or with fewer than lanes pairs.
func (c *acc) differRun32(va, vb []float32, i int, mode ulpMode) (k int, ran bool) {
	if c.kernels&kernDiffer32 == 0 || mode == ulpKeyFunc || c.maxAbs.pos < 0 || len(va) < lanes {
		return 0, false
	}
	st := c.differState()
	k = differRun32AVX2(&va[0], &vb[:len(va)][0], 0, len(va), &st, mode)
	c.takeDiffer(&st, k, i)
	return k, true
}

// foldState is what fold32AVX512 and foldBF16AVX512 read and write. Its
// layout is the assembly's (FS_* offsets; TestFoldStateLayout checks
// them).
type foldState struct {
	sums      *laneSums
	counts    *uint16           // the spread counts (errorHistogram.spread)
	differ    int64             // pairs with a ≠ b
	beyond    int64             // pairs beyond the tolerance
	first     int64             // index of the first of these, −1 if none
	pack16    int64             // 1 where VPCOMPRESSW may run (kernPack16)
	maxULP    [4 * lanes]uint32 // largest ULP distance, per lane of sixteen
	minBucket [4 * lanes]uint16 // least bucket of pairs that differ, per lane
	// read only: the maxima and the tolerance, and below them the float32
	// thresholds of the first tests (kernel_amd64.s says how they are
	// rounded)
	maxAbs, maxRel, atol, rtol         float64
	maxAbs32, relThr32, atol32, rtol32 float32
}

//go:noescape
func fold32AVX512(a, b unsafe.Pointer, from, to int, st *foldState, mode ulpMode) int

//go:noescape
func foldBF16AVX512(a, b unsafe.Pointer, from, to int, st *foldState, mode ulpMode) int

//go:noescape
func addSpreadAVX512(counts *uint32, spread *uint16, n int)

// fold32 folds the pairs of va and vb (va[0] is the i-th next element and
// in lane 0, after the first finite pair) sixteen at a time, as block
// would, and returns how many it took: a multiple of sixteen, stopping
// before sixteen that hold ±Inf, NaN or a new maximum, or with fewer than
// sixteen left. It takes none without the assembly or for ULP distances
// by key function.
func (c *acc) fold32(va, vb []float32, i int, mode ulpMode) int {
	if c.kernels&kernDiffer512 == 0 || mode == ulpKeyFunc || len(va) < 4*lanes {
		return 0
	}
	n := c.foldable(len(va))
	vb = vb[:n]
	st := c.foldState()
	k := fold32AVX512(unsafe.Pointer(&va[0]), unsafe.Pointer(&vb[0]), 0, n, &st, mode|st.noFMA())
	c.takeFold(&st, k, i)
	return k
}

// foldMixed is fold32 for a pair of which one side is float32 (v) and the
// other little-endian bfloat16 read in place (raw: side a with ulpRoundB
// in mode, side b with ulpRoundA), v[0] being the next element. It takes
// none without the assembly, before the first finite pair, off lane 0, or
// for another mode.
func (c *acc) foldMixed(v []float32, raw []byte, mode ulpMode) int {
	if c.kernels&kernMixed512 == 0 || c.maxAbs.pos < 0 || c.lane(0) != 0 || len(v) < 4*lanes ||
		mode != ulpBFloat16|ulpRoundA && mode != ulpBFloat16|ulpRoundB {
		return 0
	}
	n := c.foldable(len(v))
	raw = raw[:2*n]
	a, b := unsafe.Pointer(&v[0]), unsafe.Pointer(&raw[0])
	if mode&ulpRoundB != 0 {
		a, b = b, a
	}
	st := c.foldState()
	k := foldBF16AVX512(a, b, 0, n, &st, mode|st.noFMA())
	c.takeFold(&st, k, 0)
	return k
}

// foldSixteens is the most sixteens one run takes: with the one it counts
// at its end, it keeps a spread table's counts below 1<<16.
const foldSixteens = 1<<16 - 2

// foldable returns how many of n pairs the next sixteen-pair run may
// take, first adding the spread tables' counts to the histogram where
// they could come near 1<<16 in the run.
func (c *acc) foldable(n int) int {
	h := c.hist
	n = min(n, 4*lanes*foldSixteens)
	if h.spreadSixteens+n/(4*lanes) >= foldSixteens {
		h.addSpread()
	}
	h.spreadSixteens += n/(4*lanes) + 1
	return n
}

// foldState returns the state of a sixteen-pair run from the accumulator.
func (c *acc) foldState() foldState {
	h := c.hist
	h.buckets() // block's range, which takeFold widens
	st := foldState{sums: &c.sums, counts: &h.spreadTables()[0], first: -1,
		maxAbs: c.maxAbs.Value, maxRel: c.maxRel.Value, atol: c.tol.ATol, rtol: c.tol.RTol}
	if c.kernels&kernPack16 != 0 {
		st.pack16 = 1
	}
	// With maxAbs 0 every pair that differs is a new maximum: the least
	// float32 |b − a| that is not 0 passes.
	st.maxAbs32 = max(float32Below(st.maxAbs), math.SmallestNonzeroFloat32)
	// Below 1, so that every pair whose signs differ goes to the exact
	// test, which alone tests signs (kernel_amd64.s).
	st.relThr32 = min(float32Below(st.maxRel*(1-0x1p-40)), 0x1.fffffep-1)
	// Tolerances the float32 test cannot bound leave it 0, which passes
	// every pair that differs to the exact test.
	if st.atol >= 0 && st.rtol >= 0 && st.atol < math.Inf(1) && st.rtol < math.Inf(1) {
		st.atol32 = float32Below(st.atol * (1 - 0x1p-30))
		st.rtol32 = float32Below(st.rtol * (1 - 0x1p-30))
	}
	return st
}

// foldNoFMA, in the mode of a sixteen-pair run, says that its float32
// tolerance threshold, atol32 + rtol32·|a| rounded down, is never below
// its relative one, relThr32·|a| rounded down, which then alone bounds
// them: rounding down is monotonic, and relThr32·|a| ≤ rtol32·|a| ≤
// atol32 + rtol32·|a| where relThr32 ≤ rtol32 and atol32 ≥ 0.
const foldNoFMA ulpMode = 0x80

// noFMA returns foldNoFMA where st's thresholds allow it, else 0.
func (st *foldState) noFMA() ulpMode {
	if st.atol32 >= 0 && st.relThr32 <= st.rtol32 {
		return foldNoFMA
	}
	return 0
}

// float32Below returns the largest float32 at most x, for x ≥ 0 or +Inf
// (math.MaxFloat32 for x beyond it), and 0 for NaN.
func float32Below(x float64) float32 {
	if !(x >= 0) {
		return 0
	}
	f := float32(x)
	if float64(f) > x {
		f = math.Nextafter32(f, 0)
	}
	return f
}

// takeFold records the k pairs a sixteen-pair run took from the i-th next
// element, as st says. Their buckets are in the spread tables, whose
// range it widens: up to maxAbs's, which block counted.
func (c *acc) takeFold(st *foldState, k, i int) {
	h := c.hist
	c.finite += int64(k)
	h.zeros += int64(k) - st.differ
	if st.differ > 0 {
		lo := int(slices.Min(st.minBucket[:]))
		h.lo = min(h.lo, lo)
		h.spreadLo = min(h.spreadLo, lo)
		h.spreadHi = max(h.spreadHi, int(math.Float64bits(st.maxAbs)>>48))
	}
	c.beyond += st.beyond
	if st.first >= 0 {
		c.firstBeyond(c.base + c.n + int64(i) + st.first)
	}
	c.maxULP = max(c.maxULP, uint64(slices.Max(st.maxULP[:])))
}

// spreadTables returns the histogram's spread tables, allocated on first
// use.
func (h *errorHistogram) spreadTables() []uint16 {
	if h.spread == nil {
		h.spread = make([]uint16, 4*lanes*spreadStride)
		h.spreadLo, h.spreadHi = histBuckets, -1
	}
	return h.spread
}

// addSpread adds the sixteen lanes' spread counts of each bucket of counts
// (spread: those of its first bucket first) to counts and zeroes them.
// Only the sixteen-pair loops, which need AVX-512, fill them.
func addSpread(counts []uint32, spread []uint16) {
	n := len(counts) &^ 15
	if n > 0 {
		_ = spread[4*lanes*n-1]
		addSpreadAVX512(&counts[0], &spread[0], n)
	}
	addSpreadRows(counts[n:], spread[4*lanes*n:])
}

// differState returns the state of a slow-path run from the accumulator.
func (c *acc) differState() differState {
	st := differState{sums: &c.sums, counts: &c.hist.buckets()[0], first: -1}
	for l := range lanes {
		st.minAd[l] = math.Inf(1)
		st.atol[l], st.rtol[l] = c.tol.ATol, c.tol.RTol
		st.maxAbs[l], st.maxRel[l] = c.maxAbs.Value, c.maxRel.Value*(1-1e-12) // block's thresholds
	}
	return st
}

// takeDiffer records the k pairs a slow-path run took from the i-th next
// element, as st says.
func (c *acc) takeDiffer(st *differState, k, i int) {
	h := c.hist
	zeros := int64(k) - st.differ
	c.finite += int64(k)
	h.zeros += zeros
	h.counts[0] -= uint32(zeros) // the assembly counted equal pairs in bucket 0
	if st.differ > 0 {
		// the top of the range needs no update: every |a−b| taken is below
		// maxAbs, whose bucket block counted
		lo := int(math.Float64bits(min(st.minAd[0], st.minAd[1], st.minAd[2], st.minAd[3])) >> 48)
		h.lo = min(h.lo, lo)
	}
	c.beyond += st.beyond
	if st.first >= 0 {
		c.firstBeyond(c.base + c.n + int64(i) + st.first)
	}
	c.maxULP = max(c.maxULP, uint64(max(st.maxULP[0], st.maxULP[1], st.maxULP[2], st.maxULP[3])))
}
