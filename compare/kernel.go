package compare

import (
	"math"
)

// The float32 kernel: the hot loop of every comparison whose values are
// all float32 (float32, bfloat16, float16, float8, small integers). It
// computes the same metrics as addReal, for the same elements in the same
// order and with the same float64 sums, so results do not depend on which
// loop ran; it only avoids the per-element work addReal does in general:
//
//   - NaN and ±Inf are found from the exponent bits, and go to the slow
//     path (special) together;
//   - b − a of two float32 values is exact in float64, as are the squares
//     and products of the sums;
//   - the largest relative error is tested by multiplication (|d| > m·|a|),
//     dividing only for a new maximum;
//   - the ULP distance comes from the bit patterns with integer arithmetic,
//     in float32 units or, for bfloat16 data (the top half of a float32),
//     in bfloat16 units; other dtypes use their key function.

// ulpMode says how the float32 kernel measures ULP distances.
type ulpMode int

const (
	ulpFloat32  ulpMode = iota // float32 bit patterns
	ulpBFloat16                // float32 bit patterns rounded to bfloat16 (to nearest, ties to even)
	ulpKeyFunc                 // the comparison dtype's key function
)

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

// addF32 folds paired float32 values into the accumulator.
func (c *acc) addF32(va, vb []float32, mode ulpMode) {
	vb = vb[:len(va)]
	var round uint // bits rounded away for the ULP unit
	if mode == ulpBFloat16 {
		round = 16
	}
	atol, rtol := c.tol.ATol, c.tol.RTol
	sumSqD, sumSqA, sumSqB, sumAB := c.sumSqD, c.sumSqA, c.sumSqB, c.sumAB
	finite, maxULP := c.finite, c.maxULP
	maxAbs, maxRel := c.maxAbs.Value, c.maxRel.Value
	h := c.hist
	if h.counts == nil {
		h.counts = make([]uint32, histBuckets)
		h.lo, h.hi = histBuckets, -1
	}
	counts := h.counts[:histBuckets]
	lo, hi, zeros := h.lo, h.hi, h.zeros
	base := c.base + c.n
	firstFinite := int64(-1)
	for i, x := range va {
		y := vb[i]
		bx, by := math.Float32bits(x), math.Float32bits(y)
		if bx&0x7F800000 == 0x7F800000 || by&0x7F800000 == 0x7F800000 {
			c.special(float64(x), float64(y), base+int64(i))
			continue
		}
		a, b := float64(x), float64(y)
		d := b - a
		sumSqD += d * d
		sumSqA += a * a
		sumSqB += b * b
		sumAB += a * b
		finite++
		if firstFinite < 0 {
			firstFinite = base + int64(i)
		}
		ad := math.Abs(d)
		if ad == 0 {
			zeros++
			continue // equal: no error, no ULP, no new maximum
		}
		k := int(math.Float64bits(ad) >> 48)
		counts[k]++
		lo, hi = min(lo, k), max(hi, k)
		aa := math.Abs(a)
		if ad > atol+rtol*aa {
			c.markBeyond(base + int64(i))
		}
		if ad > maxAbs {
			maxAbs = ad
			c.maxAbs = Extreme{Value: ad, A: a, B: b, pos: base + int64(i)}
		}
		// The filter is |d| > m·|a| with a margin for the product's
		// rounding, so that no element whose quotient beats m is missed.
		if aa == 0 || ad > maxRel*aa*(1-1e-12) {
			rel := math.Inf(1)
			if aa != 0 {
				rel = ad / aa
			}
			if rel > maxRel {
				maxRel = rel
				c.maxRel = Extreme{Value: rel, A: a, B: b, pos: base + int64(i)}
			}
		}
		var u uint64
		switch mode {
		case ulpKeyFunc:
			u = ulpDistance(c.key, a, b)
		default:
			ka, kb := orderedKey(bx, round), orderedKey(by, round)
			if ka > kb {
				u = uint64(ka - kb)
			} else {
				u = uint64(kb - ka)
			}
		}
		if u > maxULP {
			maxULP = u
		}
	}
	// addReal records a zero difference as the maximum when nothing larger
	// came first; so must this loop, for identical results.
	if firstFinite >= 0 && c.maxAbs.pos < 0 {
		c.maxAbs = Extreme{Value: 0, A: float64(va[firstFinite-base]), B: float64(vb[firstFinite-base]), pos: firstFinite}
	}
	if firstFinite >= 0 && c.maxRel.pos < 0 {
		c.maxRel = Extreme{Value: 0, A: float64(va[firstFinite-base]), B: float64(vb[firstFinite-base]), pos: firstFinite}
	}
	c.sumSqD, c.sumSqA, c.sumSqB, c.sumAB = sumSqD, sumSqA, sumSqB, sumAB
	c.finite, c.maxULP = finite, maxULP
	h.lo, h.hi, h.zeros = lo, hi, zeros
	c.n += int64(len(va))
}
