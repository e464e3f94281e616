package compare

import "math"

// errorHistogram counts absolute errors |a−b| in logarithmic buckets, for
// quantiles in one pass with fixed memory. A positive float64's bit pattern
// grows with its value, so its top 16 bits (sign, 11 exponent bits and the
// 4 leading mantissa bits) index a bucket: 16 buckets per power of two.
// Reporting a bucket's midpoint is within 1/32 (3.1%) of any value in it.
// Exact zeros are counted apart, and quantiles that fall on them are 0.
type errorHistogram struct {
	zeros  int64
	counts []uint32 // indexed by bits>>48; allocated on first use
	lo, hi int      // touched range of counts, for a cheap reset and walk
	// spread holds counts that the sixteen-pair loops (kernel_amd64.s)
	// keep apart, one per lane of sixteen: spreadStride buckets from
	// spreadBase, each with its sixteen lanes' counts side by side (those
	// of bucket k from spread[16·(k − spreadBase)]); spreadLo and spreadHi
	// are the buckets they may hold (none where spreadLo > spreadHi). span
	// adds them to counts before anything reads counts. A lane's count
	// takes at most one a sixteen, and spreadSixteens counts the sixteens
	// since they were last added, which must stay below 1<<16.
	spread             []uint16
	spreadLo, spreadHi int
	spreadSixteens     int
}

const histBuckets = 1 << 15 // positive finite float64s: bits>>48 < 0x7FF0

// The spread tables hold the buckets of float32 differences, 2⁻¹⁴⁹ ≤
// |a−b| < 2¹²⁹: spreadBase (0x3600) is below the least, 0x36A0, and
// spreadBase + spreadStride above the largest, 0x4810. The assembly's
// spreadBase must agree.
const (
	spreadBase   = 0x3600
	spreadStride = 0x1240
)

// add counts one finite, non-negative error.
func (h *errorHistogram) add(e float64) {
	if e == 0 {
		h.zeros++
		return
	}
	k := int(math.Float64bits(e) >> 48)
	h.buckets()[k]++
	if k < h.lo {
		h.lo = k
	}
	if k > h.hi {
		h.hi = k
	}
}

// buckets returns counts, allocated on first use.
func (h *errorHistogram) buckets() []uint32 {
	if h.counts == nil {
		h.counts = make([]uint32, histBuckets)
		h.lo, h.hi = histBuckets, -1
	}
	return h.counts[:histBuckets]
}

// span returns the touched bucket range, empty (0, -1) when nothing
// non-zero was counted. Every reading of counts starts here, so it first
// adds the spread tables' counts to them.
func (h *errorHistogram) span() (lo, hi int) {
	if h.counts == nil {
		return 0, -1
	}
	h.addSpread()
	return h.lo, h.hi
}

// addSpread adds the spread tables' counts to counts and empties them.
func (h *errorHistogram) addSpread() {
	if lo, hi := h.spreadLo, h.spreadHi; h.spread != nil && lo <= hi {
		addSpread(h.counts[lo:hi+1], h.spread[16*(lo-spreadBase):])
	}
	h.spreadLo, h.spreadHi, h.spreadSixteens = histBuckets, -1, 0
}

// addSpreadRows adds the sixteen spread counts of each bucket of counts
// (spread: those of its first bucket first) to counts and zeroes them.
func addSpreadRows(counts []uint32, spread []uint16) {
	for k := range counts {
		row := (*[16]uint16)(spread[16*k:])
		n := uint32(0)
		for _, c := range row {
			n += uint32(c)
		}
		counts[k] += n
		*row = [16]uint16{}
	}
}

// total returns how many errors were counted.
func (h *errorHistogram) total() int64 {
	n := h.zeros
	lo, hi := h.span()
	for k := lo; k <= hi; k++ {
		n += int64(h.counts[k])
	}
	return n
}

// merge adds the counts of o into h. Addition of counts is exact and
// commutative, so partial histograms merge in any order.
func (h *errorHistogram) merge(o *errorHistogram) {
	h.zeros += o.zeros
	olo, ohi := o.span()
	if ohi < olo {
		return
	}
	if h.counts == nil {
		h.counts = make([]uint32, histBuckets)
		h.lo, h.hi = histBuckets, -1
	}
	for k := olo; k <= ohi; k++ {
		h.counts[k] += o.counts[k]
	}
	h.lo, h.hi = min(h.lo, olo), max(h.hi, ohi)
}

// reset empties h, keeping its memory.
func (h *errorHistogram) reset() {
	if lo, hi := h.span(); hi >= lo {
		clear(h.counts[lo : hi+1])
	}
	h.zeros = 0
	h.lo, h.hi = histBuckets, -1
}

// quantiles returns the nearest-rank p-quantile for each p in ps: the
// smallest counted error x such that at least ⌈p·n⌉ errors are ≤ x, as the
// midpoint of its bucket (0 for zeros). maxErr, the exact largest error,
// caps the result so that no quantile exceeds it. With no errors counted,
// every quantile is NaN.
func (h *errorHistogram) quantiles(maxErr float64, ps ...float64) []float64 {
	out := make([]float64, len(ps))
	n := h.total()
	for i, p := range ps {
		if n == 0 {
			out[i] = math.NaN()
			continue
		}
		rank := int64(math.Ceil(p * float64(n)))
		rank = max(rank, 1)
		seen := h.zeros
		if seen >= rank {
			out[i] = 0
			continue
		}
		lo, hi := h.span()
		for k := lo; k <= hi; k++ {
			seen += int64(h.counts[k])
			if seen >= rank {
				lo := math.Float64frombits(uint64(k) << 48)
				hi := math.Float64frombits(uint64(k+1) << 48)
				out[i] = math.Min((lo+hi)/2, maxErr)
				break
			}
		}
	}
	return out
}
