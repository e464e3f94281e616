package compare

import (
	"encoding/binary"
	"math"

	"github.com/graphdiff/graphdiff/loaders"
)

// The float32 kernels: the hot loops of every comparison whose values are
// all float32 (float32, bfloat16, float16, float8, small integers). They
// compute the same metrics as addReal, with the same float64 additions in
// the same order (sums.go), so results do not depend on which loop ran;
// they only avoid the per-element work addReal does in general:
//
//   - elements go four at a time, one per lane of the partial sums; a group
//     of four finite pairs with a = b (the common case when a graph replays
//     the eager kernels) costs one square and one addition per element,
//     and for 16-bit data one 8-byte comparison per side finds it;
//   - NaN and ±Inf are found from the exponent bits, and go to the slow
//     path (special) together;
//   - the squares and products a², b², a·b of float32 values are exact in
//     float64, and so is b − a unless the exponents are more than 29
//     apart; every product is rounded before it is added (no fused
//     multiply-add on any GOAMD64 level);
//   - the largest relative error is tested by multiplication (|d| ≥ m·|a|),
//     dividing only for a new maximum;
//   - the ULP distance comes from the bit patterns with integer arithmetic,
//     in float32 units or, for bfloat16 data (the top half of a float32),
//     in bfloat16 units; other dtypes use their key function;
//   - on amd64 with AVX2, runs of equal groups and groups that differ but
//     hold no special value and no new maximum go through assembly
//     (kernel_amd64.go), which does these same operations in this order;
//     with AVX-512, sixteen pairs at a time, equal or not (fold32), so
//     that pairs that differ at random among equal ones cost no switch
//     between loops;
//   - a float32 side against a bfloat16 side in place (addMixed) reads
//     the bfloat16 words themselves in runs of equal pairs (assembly with
//     AVX2) and, with AVX-512, sixteen pairs at a time, equal or not
//     (foldMixed); only the windows between runs are widened to float32
//     first.

// kernels is a set of the assembly kernels (kernel_amd64.s), one bit
// each: where a kernel's bit is clear, or without assembly (another
// architecture, or -tags purego), its Go loop runs instead, with the same
// results. An accumulator runs the set it was made with: Pairs gives it
// the machine's (machineKernels), and the tests give it each set the
// machine can run, to check every kernel against the Go loops.
type kernels uint8

const (
	kernEqual32    kernels = 1 << iota // runs of equal float32 pairs (equalRun32AVX2)
	kernEqual16                        // runs of equal 16-bit pairs (equalRunBF16AVX2, equalRunF16AVX2)
	kernEqualMixed                     // runs of equal float32 and bfloat16 pairs (equalRunMixedAVX2)
	kernDiffer32                       // the slow path's bulk, four pairs at a time (differRun32AVX2)
	kernDiffer512                      // sixteen pairs at a time, equal or not (fold32AVX512)
	kernMixed512                       // float32 against bfloat16 in place, sixteen at a time (foldBF16AVX512)
	kernPack16                         // within these, pairs that differ packed by VPCOMPRESSW (AVX512_VBMI2)
	kernUpdate512                      // update sums of float32 parameters, sixteen elements at a time (addUpdatesAVX512)

	// avx2Kernels are the kernels that need AVX2; avx512Kernels those
	// and the three that need AVX-512 (F, DQ, VL, BW) and BMI1; vbmi2Kernels
	// all of them.
	avx2Kernels   = kernEqual32 | kernEqual16 | kernEqualMixed | kernDiffer32
	avx512Kernels = avx2Kernels | kernDiffer512 | kernMixed512 | kernUpdate512
	vbmi2Kernels  = avx512Kernels | kernPack16
)

// ulpMode says how the float32 kernel measures ULP distances: in float32
// units, in bfloat16 units (bit patterns rounded to bfloat16, to nearest,
// ties to even), or by the comparison dtype's key function. For bfloat16
// units, ulpRoundA and ulpRoundB say which sides hold float32 data: the
// assembly rounds only those, since rounding a bfloat16 changes nothing
// (block rounds both, to the same result).
type ulpMode uint8

const (
	ulpFloat32  ulpMode = 0
	ulpKeyFunc  ulpMode = 1
	ulpBFloat16 ulpMode = 2
	ulpRoundA   ulpMode = 4 // with ulpBFloat16: a is float32 data
	ulpRoundB   ulpMode = 8 // with ulpBFloat16: b is float32 data
)

// mixedSides orders the float32 values v and the bfloat16 values h of a
// mixed pair as a and b: h is side a where the mode rounds b (ulpRoundB:
// b holds the float32 data), else side b.
func (m ulpMode) mixedSides(v, h []float32) (a, b []float32) {
	if m&ulpRoundB != 0 {
		return h, v
	}
	return v, h
}

// orderedKey maps a float32 bit pattern, rounded to nearest-even at bit
// round (0 for float32 itself, 16 for bfloat16) and shifted down by it,
// to an integer that orders like the value, with −0 and +0 both 0. The
// rounding is bfloat16Bits' and is exact for values that are bfloat16.
func orderedKey(bits uint32, round uint) int64 {
	m := bits & 0x7FFFFFFF
	if round > 0 {
		m = (m + (1<<(round-1) - 1) + (m>>round)&1) >> round
	}
	s := int64(bits >> 31) // 1 for negative
	return (int64(m) ^ -s) + s
}

// maxBlock is the most elements the slow path takes at once: enough to
// amortise its setup, few enough to decode 16-bit data on the stack.
const maxBlock = 256

// block is the slow path: it folds every pair of va, vb (any length; va[0]
// is the i-th next element of the accumulator) lane by lane. Within a lane
// the pairs go in storage order, so the partial sums add as sums.go says;
// everything else it records is independent of order: counts, the first
// position beyond the tolerance (the smallest), and maxima whose ties go
// to the smaller position, as a pass in storage order keeps the first.
func (c *acc) block(va, vb []float32, i int, mode ulpMode) {
	vb = vb[:len(va)]
	h := c.hist
	counts := h.buckets()
	lo, hi := h.lo, h.hi
	tol := c.tol
	var finite, zeros, beyond int64
	first := c.first
	maxULP := c.maxULP
	// the maxima's thresholds, refreshed by peak
	maxAbs, maxRel := c.maxAbs.Value, c.maxRel.Value*(1-1e-12)
	start := c.base + c.n + int64(i) // storage position of va[0]
	for l := range lanes {
		sqD, sqA, sqB, ab, eq := c.sums.sqD[l], c.sums.sqA[l], c.sums.sqB[l], c.sums.ab[l], c.sums.eq[l]
		for j := (l - c.lane(i) + lanes) % lanes; j < len(va); j += lanes {
			x, y := va[j], vb[j]
			bx, by := math.Float32bits(x), math.Float32bits(y)
			pos := start + int64(j)
			if bx&0x7F800000 == 0x7F800000 || by&0x7F800000 == 0x7F800000 {
				c.special(float64(x), float64(y), pos)
				continue
			}
			a, b := float64(x), float64(y)
			finite++
			if x == y {
				eq += float64(a * a)
				zeros++
				if maxAbs <= 0 {
					c.peak(0, 0, a, b, pos)
					maxAbs, maxRel = c.maxAbs.Value, c.maxRel.Value*(1-1e-12)
				}
				continue
			}
			d := b - a
			// float64(·) rounds each product: no fused multiply-add, as in
			// the assembly (kernel_amd64.s) and on every GOAMD64 level
			sqD, sqA, sqB, ab = sqD+float64(d*d), sqA+float64(a*a), sqB+float64(b*b), ab+float64(a*b)
			ad, aa := math.Abs(d), math.Abs(a)
			k := int(math.Float64bits(ad) >> 48)
			counts[k]++
			lo, hi = min(lo, k), max(hi, k)
			if tol.Beyond(ad, aa) {
				beyond++
				if first < 0 || pos < first {
					first = pos
				}
			}
			// The relative test is |d| ≥ m·|a| with a margin for the
			// product's rounding, so that no element whose quotient
			// reaches m is missed; peak divides.
			if ad >= maxAbs || aa == 0 || ad >= maxRel*aa {
				c.peak(ad, aa, a, b, pos)
				maxAbs, maxRel = c.maxAbs.Value, c.maxRel.Value*(1-1e-12)
			}
			var u uint64
			switch { // constant shifts: cheaper than by a variable
			case mode == ulpFloat32:
				ka, kb := orderedKey(bx, 0), orderedKey(by, 0)
				u = uint64(max(ka-kb, kb-ka))
			case mode&ulpBFloat16 != 0:
				ka, kb := orderedKey(bx, 16), orderedKey(by, 16)
				u = uint64(max(ka-kb, kb-ka))
			default:
				u = ulpDistance(c.key, a, b)
			}
			maxULP = max(maxULP, u)
		}
		c.sums.sqD[l], c.sums.sqA[l], c.sums.sqB[l], c.sums.ab[l], c.sums.eq[l] = sqD, sqA, sqB, ab, eq
	}
	h.lo, h.hi, h.zeros = lo, hi, h.zeros+zeros
	c.finite += finite
	c.beyond += beyond
	if first >= 0 { // special() may have set c.first
		c.firstBeyond(first)
	}
	c.maxULP = maxULP
}

// peak offers a finite pair (|a−b| = ad, |a| = aa) to the two maxima; ties
// go to the smaller position. The relative error is ad/aa, +Inf for aa = 0
// < ad, and 0 for ad = 0.
func (c *acc) peak(ad, aa, a, b float64, pos int64) {
	if ad > c.maxAbs.Value || ad == c.maxAbs.Value && pos < c.maxAbs.pos {
		c.maxAbs = Extreme{Value: ad, A: a, B: b, pos: pos}
	}
	rel := 0.0
	switch {
	case ad == 0:
	case aa == 0:
		rel = math.Inf(1)
	default:
		rel = ad / aa
	}
	if rel > c.maxRel.Value || rel == c.maxRel.Value && pos < c.maxRel.pos {
		c.maxRel = Extreme{Value: rel, A: a, B: b, pos: pos}
	}
}

// addF32 folds paired float32 values into the accumulator.
func (c *acc) addF32(va, vb []float32, mode ulpMode) {
	vb = vb[:len(va)]
	foldAt := 0 // fold32 may take the pairs from here on
	for i := 0; i < len(va); {
		end := len(va)
		if c.lane(i) == 0 && c.maxAbs.pos >= 0 {
			if i >= foldAt {
				if i += c.fold32(va[i:], vb[i:], i, mode); i == len(va) {
					break
				}
				// The sixteen at i hold ±Inf, NaN or a new maximum, or
				// fewer are left: the loops below take them.
				foldAt = i + 4*lanes
			}
			// Equal groups need no bookkeeping once a finite pair has
			// been seen (a zero difference cannot be a new maximum then).
			if va[i] == vb[i] {
				k, eq := c.kernels.equalRun32(va[i:], vb[i:], c.sums.eq)
				c.foldEqual(k, eq)
				if i += k; k > 0 {
					continue
				}
			}
			k, ran := c.differRun32(va[i:], vb[i:], i, mode)
			if i += k; k > 0 {
				continue
			}
			if ran {
				end = i + lanes // block takes the group differRun32 stopped at
			}
		}
		end = min(end, c.slowEnd(i, len(va), func(g int) bool {
			x, y := va[g:g+lanes:g+lanes], vb[g:g+lanes:g+lanes]
			return x[0] == y[0] && x[1] == y[1] && x[2] == y[2] && x[3] == y[3]
		}))
		c.block(va[i:end], vb[i:end], i, mode)
		i = end
	}
	c.n += int64(len(va))
}

// Windows of addMixed, in elements: where neither equalRunMixed nor
// foldMixed takes the next pairs, the next window of the bfloat16 side is
// widened and goes through addF32. A window doubles from minWindow up to
// maxWindow while the runs keep stopping early (pairs equal and differing
// at random), and starts again at minWindow after a run at least as long
// as the window, of either kind.
const (
	minWindow = 64
	maxWindow = 8192
)

// addMixed folds pairs of which one side is float32 values (v) and the
// other little-endian bfloat16 bytes (raw, of dtype half): side a where
// mode has ulpRoundB, else side b; mode is ulpBFloat16 with ulpRoundA or
// ulpRoundB. foldMixed (pairs equal or not, with AVX-512) or else
// equalRunMixed (pairs that are equal, as when a bfloat16 run was saved as
// float32) read the bfloat16 side in place; the windows between their
// runs are widened into buf (at least maxWindow long). The result is
// addF32's on the widened values, bit for bit. It returns how many pairs
// the runs took.
func (c *acc) addMixed(v []float32, raw []byte, half *loaders.Tensor, mode ulpMode, buf []float32) (inPlace int) {
	raw = raw[:2*len(v)]
	window := minWindow
	for i := 0; i < len(v); {
		k, equal := 0, false
		switch {
		case c.kernels&kernMixed512 != 0:
			k = c.foldMixed(v[i:], raw[2*i:], mode)
		case c.lane(0) == 0 && c.maxAbs.pos >= 0 && math.Float32bits(v[i]) == uint32(binary.LittleEndian.Uint16(raw[2*i:]))<<16:
			var eq [lanes]float64
			k, eq = c.kernels.equalRunMixed(v[i:], raw[2*i:], c.sums.eq)
			c.foldEqual(k, eq)
			equal = k > 0
		}
		c.n += int64(k)
		inPlace += k
		if i += k; i == len(v) {
			break
		}
		if k >= window {
			window = minWindow
		}
		if equal {
			continue // pairs that all differ may follow
		}
		end := min(len(v), i+window-c.lane(0)) // the next window starts in lane 0
		w := buf[:end-i]
		half.DecodeFloat32(w, raw[2*i:2*end])
		a, b := mode.mixedSides(v[i:end], w)
		c.addF32(a, b, mode)
		i = end
		window = min(2*window, maxWindow)
	}
	return inPlace
}

// slowEnd returns where the slow path that starts at the i-th next element
// of n stops: past the next lane 0, then at the next group of lanes that
// equal says is equal, at n, or after at most maxBlock elements.
func (c *acc) slowEnd(i, n int, equal func(g int) bool) int {
	end := i + lanes - c.lane(i)
	for end+lanes <= n && end-i+lanes <= maxBlock && !equal(end) {
		end += lanes
	}
	if end+lanes > n && n-i <= maxBlock { // and the tail, shorter than a group
		end = n
	}
	return min(end, n)
}

// lane returns the lane of the i-th next element.
func (c *acc) lane(i int) int { return int((c.n + int64(i)) % lanes) }

// foldEqual records k equal finite pairs whose squares made the partials eq.
func (c *acc) foldEqual(k int, eq [lanes]float64) {
	c.sums.eq = eq
	c.finite += int64(k)
	c.hist.zeros += int64(k)
}

// equalRun32Go is the fast path: it folds the leading groups of lanes pairs
// that are equal and finite into the partials e (a² each) and returns how
// many elements it took, a multiple of lanes, and the new partials.
// kernels.equalRun32 runs it, or its assembly version where there is
// one.
func equalRun32Go(va, vb []float32, e [lanes]float64) (int, [lanes]float64) {
	e0, e1, e2, e3 := e[0], e[1], e[2], e[3]
	vb = vb[:len(va)]
	i := 0
	for ; i+lanes <= len(va); i += lanes {
		x, y := va[i:i+lanes:i+lanes], vb[i:i+lanes:i+lanes]
		if x[0] != y[0] || x[1] != y[1] || x[2] != y[2] || x[3] != y[3] { // NaN too
			break
		}
		a0, a1, a2, a3 := float64(x[0]), float64(x[1]), float64(x[2]), float64(x[3])
		s0, s1, s2, s3 := a0*a0, a1*a1, a2*a2, a3*a3
		if s0+s1+s2+s3 > math.MaxFloat64 { // ±Inf among them
			break
		}
		e0, e1, e2, e3 = e0+s0, e1+s1, e2+s2, e3+s3
	}
	return i, [lanes]float64{e0, e1, e2, e3}
}

// equalRunMixedGo is equalRun32Go for float32 values v against
// little-endian bfloat16 bytes raw: a group is equal when each float32 has
// the bit pattern of its bfloat16 widened (so +0 against −0 ends a run, as
// in the 16-bit loops) and none is ±Inf or NaN.
func equalRunMixedGo(v []float32, raw []byte, e [lanes]float64) (int, [lanes]float64) {
	e0, e1, e2, e3 := e[0], e[1], e[2], e[3]
	raw = raw[:2*len(v)]
	i := 0
	for ; i+lanes <= len(v); i += lanes {
		x := v[i : i+lanes : i+lanes]
		w := binary.LittleEndian.Uint64(raw[2*i:])
		if specials16(w, 0x7F80_7F80_7F80_7F80) ||
			math.Float32bits(x[0]) != uint32(w)<<16 || math.Float32bits(x[1]) != uint32(w)&^0xFFFF ||
			math.Float32bits(x[2]) != uint32(w>>32)<<16 || math.Float32bits(x[3]) != uint32(w>>32)&^0xFFFF {
			break
		}
		a0, a1, a2, a3 := float64(x[0]), float64(x[1]), float64(x[2]), float64(x[3])
		e0, e1, e2, e3 = e0+a0*a0, e1+a1*a1, e2+a2*a2, e3+a3*a3
	}
	return i, [lanes]float64{e0, e1, e2, e3}
}

// add16 folds paired 16-bit floats given as little-endian bytes, both of
// the dtype of half (bfloat16 or float16), which decodes them.
func (c *acc) add16(ra, rb []byte, half *loaders.Tensor, mode ulpMode) {
	n := len(ra) / 2
	rb = rb[:2*n]
	equalRun := kernels.equalRunBF16
	if half.DType == loaders.Float16 {
		equalRun = kernels.equalRunF16
	}
	var x, y [maxBlock]float32
	for i := 0; i < n; {
		if c.lane(i) == 0 && c.maxAbs.pos >= 0 && ra[2*i] == rb[2*i] && ra[2*i+1] == rb[2*i+1] {
			k, eq := equalRun(c.kernels, ra[2*i:], rb[2*i:], c.sums.eq)
			c.foldEqual(k, eq)
			if i += k; k > 0 {
				continue
			}
		}
		end := c.slowEnd(i, n, func(g int) bool {
			return binary.LittleEndian.Uint64(ra[2*g:]) == binary.LittleEndian.Uint64(rb[2*g:])
		})
		half.DecodeFloat32(x[:end-i], ra[2*i:2*end])
		half.DecodeFloat32(y[:end-i], rb[2*i:2*end])
		c.block(x[:end-i], y[:end-i], i, mode)
		i = end
	}
	c.n += int64(n)
}

// The 16-bit fast paths compare four elements as one 8-byte word per side
// and take the squares from the bit patterns: a bfloat16 is the top half
// of a float32; a float16's magnitude bits shifted left by 13 are a
// float32 (possibly subnormal) of 2⁻¹¹² times its magnitude, so its square
// is that float32's square (exact in float64) times 2²²⁴.

// specials16 reports whether any of the four 16-bit elements of w has all
// the exponent bits of mask set (±Inf or NaN): z has a zero element there,
// and the expression is the usual test for one.
func specials16(w, mask uint64) bool {
	z := w&mask ^ mask
	return (z-0x0001_0001_0001_0001)&^z&0x8000_8000_8000_8000 != 0
}

// equalRunBF16Go is equalRun32Go for little-endian bfloat16 bytes.
func equalRunBF16Go(ra, rb []byte, e [lanes]float64) (int, [lanes]float64) {
	e0, e1, e2, e3 := e[0], e[1], e[2], e[3]
	rb = rb[:len(ra)]
	i := 0
	for ; i+8 <= len(ra); i += 8 {
		w := binary.LittleEndian.Uint64(ra[i:])
		if w != binary.LittleEndian.Uint64(rb[i:]) || specials16(w, 0x7F80_7F80_7F80_7F80) {
			break
		}
		lo, hi := uint32(w), uint32(w>>32)
		a0 := float64(math.Float32frombits(lo << 16))
		a1 := float64(math.Float32frombits(lo &^ 0xFFFF))
		a2 := float64(math.Float32frombits(hi << 16))
		a3 := float64(math.Float32frombits(hi &^ 0xFFFF))
		e0, e1, e2, e3 = e0+a0*a0, e1+a1*a1, e2+a2*a2, e3+a3*a3
	}
	return i / 2, [lanes]float64{e0, e1, e2, e3}
}

// equalRunF16Go is equalRun32Go for little-endian float16 bytes.
func equalRunF16Go(ra, rb []byte, e [lanes]float64) (int, [lanes]float64) {
	e0, e1, e2, e3 := e[0], e[1], e[2], e[3]
	rb = rb[:len(ra)]
	i := 0
	for ; i+8 <= len(ra); i += 8 {
		w := binary.LittleEndian.Uint64(ra[i:])
		if w != binary.LittleEndian.Uint64(rb[i:]) || specials16(w, 0x7C00_7C00_7C00_7C00) {
			break
		}
		lo, hi := uint32(w), uint32(w>>32)
		f0 := float64(math.Float32frombits(lo & 0x7FFF << 13))
		f1 := float64(math.Float32frombits(lo >> 3 & (0x7FFF << 13)))
		f2 := float64(math.Float32frombits(hi & 0x7FFF << 13))
		f3 := float64(math.Float32frombits(hi >> 3 & (0x7FFF << 13)))
		e0, e1, e2, e3 = e0+f0*f0*0x1p224, e1+f1*f1*0x1p224, e2+f2*f2*0x1p224, e3+f3*f3*0x1p224
	}
	return i / 2, [lanes]float64{e0, e1, e2, e3}
}
