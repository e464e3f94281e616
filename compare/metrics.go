package compare

import (
	"math"

	"github.com/graphdiff/graphdiff/tolerances"
)

// Metrics describe how one tensor of the second run (b) differs from the
// same tensor of the reference run (a). All sums are accumulated in
// float64, in one pass, in an order fixed by the data (lanes of partial
// sums within fixed chunks that are merged in order; see sums.go), so the
// result is the same whatever the parallelism.
//
// An element pair is "finite" when both values are finite; the aggregate
// statistics below are over finite pairs. NaN and ±Inf are counted per
// side; a position where the two sides differ in NaN-ness, or where one is
// ±Inf and the other is not the same infinity, is a special mismatch and
// counts as an element beyond the tolerance.
//
// For complex tensors a and b are complex numbers: |a−b| and |a| are moduli,
// a·b is Re(a·conj(b)), and the values reported at the maxima are moduli.
type Metrics struct {
	// Count is the number of elements compared.
	Count int64
	// Mismatched counts elements outside the tolerance:
	// |a−b| > atol + rtol·|a|, plus special mismatches.
	Mismatched int64
	// FirstMismatch is the C-order index of the first element beyond the
	// tolerance, nil when none is.
	FirstMismatch []int
	// MaxAbs is the largest |a−b| over finite pairs; MaxRel the largest
	// |a−b|/|a| (+Inf where a = 0 ≠ b, 0 where a = b = 0). Ties keep the
	// first element in storage order.
	MaxAbs Extreme
	MaxRel Extreme
	// RelL2 is ‖a−b‖₂/‖a‖₂ over finite pairs: 0 when both are zero
	// vectors, +Inf when only a is.
	RelL2 float64
	// NormA is ‖a‖₂ and NormDiff ‖a−b‖₂, over finite pairs: the sums a
	// run-level verdict pools over the tensors of a step (judge.Steps).
	NormA, NormDiff float64
	// Cosine is a·b/(‖a‖₂‖b‖₂) over finite pairs: 1 when both are zero
	// vectors, NaN when exactly one is.
	Cosine float64
	// P50, P90, P99 are nearest-rank quantiles of |a−b| over finite pairs,
	// from a logarithmic histogram: within 3.1% of the exact quantile (see
	// errorHistogram). NaN when there is no finite pair.
	P50, P90, P99 float64
	// MaxULP is the largest distance in units in the last place of the
	// comparison dtype (the coarser of the two); for integer and bool
	// tensors it is the largest |a−b|.
	MaxULP uint64
	// NaN and Inf counts per side, and special mismatches.
	NaNA, NaNB, InfA, InfB int64
	SpecialMismatches      int64
	// finite-pair sums, kept for merging and noise floors
	finite int64
}

// MismatchFraction returns Mismatched/Count, or 0 for an empty tensor.
func (m *Metrics) MismatchFraction() float64 {
	if m.Count == 0 {
		return 0
	}
	return float64(m.Mismatched) / float64(m.Count)
}

// SpecialsAgree reports whether NaN and ±Inf sit at the same positions on
// both sides.
func (m *Metrics) SpecialsAgree() bool { return m.SpecialMismatches == 0 }

// Identical reports whether the pair holds the same values: every finite
// pair equal (MaxAbs 0, exact: the difference of two floats is computed in
// float64), NaN and ±Inf in the same places. It reads MaxAbs, not MaxULP,
// which counts units of the comparison dtype and may round a difference
// below them away.
func (m *Metrics) Identical() bool { return m.MaxAbs.Value == 0 && m.SpecialsAgree() }

// Extreme is an element where a metric peaks: its value, the element's
// C-order index and the two values there.
type Extreme struct {
	Value float64
	Index []int // nil when there is no finite pair
	A, B  float64
	pos   int64 // storage position, -1 when none
}

// acc accumulates the metrics of one chunk of a tensor pair.
type acc struct {
	kernels  kernels // the assembly kernels its float32 loops run
	tol      tolerances.Tolerance
	key      ulpKey
	complex  bool
	useULP   bool
	hist     *errorHistogram
	base     int64 // storage position of the chunk's first element
	n        int64 // elements so far
	beyond   int64
	first    int64 // storage position of the first element beyond, -1
	sums     laneSums
	finite   int64
	maxAbs   Extreme
	maxRel   Extreme
	maxULP   uint64
	nanA     int64
	nanB     int64
	infA     int64
	infB     int64
	specials int64
}

func newAcc(k kernels, tol tolerances.Tolerance, key ulpKey, complex, useULP bool, hist *errorHistogram, base int64) *acc {
	c := new(acc)
	c.init(k, tol, key, complex, useULP, hist, base)
	return c
}

// init sets up a zero accumulator for elements from storage position base,
// running the kernels k.
func (c *acc) init(k kernels, tol tolerances.Tolerance, key ulpKey, complex, useULP bool, hist *errorHistogram, base int64) {
	*c = acc{kernels: k, tol: tol, key: key, complex: complex, useULP: useULP, hist: hist, base: base, first: -1,
		maxAbs: Extreme{pos: -1, Value: math.Inf(-1)}, maxRel: Extreme{pos: -1, Value: math.Inf(-1)}}
}

// addReal folds a buffer of paired real values into the accumulator.
func (c *acc) addReal(va, vb []float64) {
	for i, a := range va {
		b := vb[i]
		pos := c.base + c.n + int64(i)
		lane := int((c.n + int64(i)) % lanes)
		if !isFinite(a) || !isFinite(b) {
			c.special(a, b, pos)
			continue
		}
		d := a - b
		if d == 0 {
			c.sums.eq[lane] += a * a
		} else {
			c.sums.differ(lane, d*d, a*a, b*b, a*b)
		}
		c.pair(math.Abs(d), math.Abs(a), a, b, pos)
		if c.useULP && a != b {
			if u := ulpDistance(c.key, a, b); u > c.maxULP {
				c.maxULP = u
			}
		}
	}
	c.n += int64(len(va))
}

// addInts folds a buffer of paired integers, held as 64 bits as sides
// says, into the accumulator, exactly: two integers beyond 2^53 that
// float64 rounds to one value still differ, and so do a uint64 2^64 − 1
// and an int64 −1 of the same bits, by |a−b| computed in integer
// arithmetic (rounded to float64 only then). The sums and maxima take the
// values as float64, as for every other dtype.
func (c *acc) addInts(ia, ib []uint64, sides intSides) {
	for i, x := range ia {
		y := ib[i]
		pos := c.base + c.n + int64(i)
		lane := int((c.n + int64(i)) % lanes)
		a, b := intValue(x, sides.unsignedA), intValue(y, sides.unsignedB)
		if x == y && (sides.unsignedA == sides.unsignedB || int64(x) >= 0) {
			c.sums.eq[lane] += a * a
			c.pair(0, math.Abs(a), a, b, pos)
			continue
		}
		d := intDistance(x, y, sides)
		c.sums.differ(lane, d*d, a*a, b*b, a*b)
		c.pair(d, math.Abs(a), a, b, pos)
		if c.useULP {
			if u := ulpDistance(c.key, a, b); u > c.maxULP {
				c.maxULP = u
			}
		}
	}
	c.n += int64(len(ia))
}

// intValue is the value of the 64 bits x, unsigned or two's complement.
func intValue(x uint64, unsigned bool) float64 {
	if unsigned {
		return float64(x)
	}
	return float64(int64(x))
}

// intDistance returns |x−y| of two 64-bit integers held as sides says, as
// a float64, computed exactly first where it fits in 64 bits (one
// negative and one at least 2^63 apart do not: their sum of magnitudes
// is rounded): at least 1 for different values, however close float64
// would put them.
func intDistance(x, y uint64, sides intSides) float64 {
	negX, negY := !sides.unsignedA && int64(x) < 0, !sides.unsignedB && int64(y) < 0
	switch {
	case negX && !negY:
		return float64(y) + float64(-x) // -x: the magnitude, MinInt64's too
	case negY && !negX:
		return float64(x) + float64(-y)
	}
	if x < y { // of one sign, two's complement orders as unsigned does
		x, y = y, x
	}
	return float64(x - y)
}

// addComplex folds a buffer of paired complex values (re, im interleaved).
func (c *acc) addComplex(va, vb []float64) {
	for i := 0; i+1 < len(va); i += 2 {
		ar, ai, br, bi := va[i], va[i+1], vb[i], vb[i+1]
		pos := c.base + c.n + int64(i/2)
		fa, fb := isFinite(ar) && isFinite(ai), isFinite(br) && isFinite(bi)
		if !fa || !fb {
			c.specialComplex(ar, ai, br, bi, pos)
			continue
		}
		absA, absB := math.Hypot(ar, ai), math.Hypot(br, bi)
		d := math.Hypot(ar-br, ai-bi)
		c.sums.differ(int((c.n+int64(i/2))%lanes), d*d, float64(ar*ar)+float64(ai*ai), float64(br*br)+float64(bi*bi), float64(ar*br)+float64(ai*bi))
		c.pair(d, absA, absA, absB, pos)
		if c.useULP {
			u := max(ulpDistance(c.key, ar, br), ulpDistance(c.key, ai, bi))
			c.maxULP = max(c.maxULP, u)
		}
	}
	c.n += int64(len(va) / 2)
}

// pair folds one finite element pair, its sums aside: d = |a−b|,
// scale = |a|, and the values to report at the maxima.
func (c *acc) pair(d, scale, showA, showB float64, pos int64) {
	c.finite++
	c.hist.add(d)
	if d > c.maxAbs.Value {
		c.maxAbs = Extreme{Value: d, A: showA, B: showB, pos: pos}
	}
	var rel float64
	switch {
	case d == 0:
		rel = 0
	case scale == 0:
		rel = math.Inf(1)
	default:
		rel = d / scale
	}
	if rel > c.maxRel.Value {
		c.maxRel = Extreme{Value: rel, A: showA, B: showB, pos: pos}
	}
	if c.tol.Beyond(d, scale) {
		c.markBeyond(pos)
	}
}

// special handles a pair where either side is NaN or ±Inf.
func (c *acc) special(a, b float64, pos int64) { c.specialOf(a, b, a == b, pos) }

// specialComplex is special for complex elements (ar, ai) and (br, bi):
// each side counts as NaN or Inf by its complexClass, and two elements
// agree when both are NaN, or when they are equal part by part (+0 = −0),
// as numpy's isclose (equal_nan) has them: an infinite part agrees with
// the same infinity in the same part only, as a real one does, so that
// (+Inf, 0) against (−Inf, 0), or (+Inf, 1) against (+Inf, 5), differ.
func (c *acc) specialComplex(ar, ai, br, bi float64, pos int64) {
	c.specialOf(complexClass(ar, ai), complexClass(br, bi), ar == br && ai == bi, pos)
}

// specialOf is special for the classes a and b (the values, for real
// elements) of elements that are equal when equal says so.
func (c *acc) specialOf(a, b float64, equal bool, pos int64) {
	aNaN, bNaN := a != a, b != b
	if aNaN {
		c.nanA++
	} else if math.IsInf(a, 0) {
		c.infA++
	}
	if bNaN {
		c.nanB++
	} else if math.IsInf(b, 0) {
		c.infB++
	}
	if aNaN && bNaN || !aNaN && !bNaN && equal {
		return // both NaN, or the same infinities
	}
	c.specials++
	c.markBeyond(pos)
}

// markBeyond counts an element beyond the tolerance at pos; the first is
// the smallest position, as the slow path of the kernels goes lane by
// lane.
func (c *acc) markBeyond(pos int64) {
	c.beyond++
	c.firstBeyond(pos)
}

// firstBeyond records pos as the first element beyond the tolerance if no
// element before it is recorded.
func (c *acc) firstBeyond(pos int64) {
	if c.first < 0 || pos < c.first {
		c.first = pos
	}
}

// complexClass reduces a complex value to how specialComplex counts it:
// NaN if either part is NaN, +Inf if either part is infinite, else 0
// (finite).
func complexClass(re, im float64) float64 {
	switch {
	case re != re || im != im:
		return math.NaN()
	case math.IsInf(re, 0) || math.IsInf(im, 0):
		return math.Inf(1)
	}
	return 0
}

func isFinite(v float64) bool { return v-v == 0 }

// merge adds a later chunk's accumulator into c (chunks must be merged in
// storage order for ties and sums to be reproducible).
func (c *acc) merge(o *acc) {
	c.n += o.n
	c.beyond += o.beyond
	if c.first < 0 {
		c.first = o.first
	}
	c.sums.merge(&o.sums)
	c.finite += o.finite
	if o.maxAbs.Value > c.maxAbs.Value {
		c.maxAbs = o.maxAbs
	}
	if o.maxRel.Value > c.maxRel.Value {
		c.maxRel = o.maxRel
	}
	c.maxULP = max(c.maxULP, o.maxULP)
	c.nanA += o.nanA
	c.nanB += o.nanB
	c.infA += o.infA
	c.infB += o.infB
	c.specials += o.specials
}

// metrics finishes the accumulated sums; index maps a storage position to
// a C-order index.
func (c *acc) metrics(hist *errorHistogram, index func(int64) []int) Metrics {
	m := Metrics{
		Count: c.n, Mismatched: c.beyond, MaxULP: c.maxULP,
		NaNA: c.nanA, NaNB: c.nanB, InfA: c.infA, InfB: c.infB,
		SpecialMismatches: c.specials, finite: c.finite,
	}
	if c.first >= 0 {
		m.FirstMismatch = index(c.first)
	}
	for _, e := range []struct{ in, out *Extreme }{{&c.maxAbs, &m.MaxAbs}, {&c.maxRel, &m.MaxRel}} {
		*e.out = *e.in
		switch {
		case e.in.pos >= 0 && e.in.Value == 0:
			e.out.A, e.out.B = math.NaN(), math.NaN() // no difference: no place to point at
		case e.in.pos >= 0:
			e.out.Index = index(e.in.pos)
		default:
			e.out.Value, e.out.A, e.out.B = math.NaN(), math.NaN(), math.NaN()
		}
	}
	sqD, sqA, sqB, ab := c.sums.totals()
	normD, normA, normB := math.Sqrt(sqD), math.Sqrt(sqA), math.Sqrt(sqB)
	m.NormA, m.NormDiff = normA, normD
	switch {
	case normA == 0 && normD == 0:
		m.RelL2 = 0
	case normA == 0:
		m.RelL2 = math.Inf(1)
	default:
		m.RelL2 = normD / normA
	}
	switch {
	case normA == 0 && normB == 0:
		m.Cosine = 1
	case normA == 0 || normB == 0:
		m.Cosine = math.NaN()
	default:
		m.Cosine = ab / (normA * normB)
	}
	q := hist.quantiles(c.maxAbs.Value, 0.5, 0.9, 0.99)
	m.P50, m.P90, m.P99 = q[0], q[1], q[2]
	return m
}
