package report

import (
	"encoding/binary"
	"math"
	"math/bits"
	"slices"
	"strconv"
)

// appendShortFloat appends strconv.AppendFloat(dst, v, 'g', -1, 64): the
// fewest significant digits that read back as v, of those the ones
// nearest to v, as %g lays them out (an exponent below -4 or from 6 up in
// the form d.ddde±XX, else plain decimal), "-" before a negative v, "0"
// and "-0" for the zeros.
//
// It finds the digits by exact integer arithmetic where that fits in 128
// bits, and leaves the rest to strconv: v = m·2^e with m the 53-bit
// significand, and the numbers that read back as v are those of
// [v − 2^(e−1), v + 2^(e−1)] (the gap below halved where m is a power of
// two above the smallest normal exponent), both ends included when m is
// even, as parsing rounds half to even. Scaled by 10^q, q = 17 −
// ⌊log10 2^(e+52)⌋, v and the interval's ends are x·5^q/2^s with x =
// 4m, 4m−2 (or 4m−1) and 4m+2, s = 2 − e − q: for q from 0 to 27 and s
// from 1 to 63 (|v| from about 1e-10 to 5e15) the product x·5^q is below
// 2^119 and a shift gives the integer part and the fraction exactly. The
// scaled v then lies in [10^17, 2·10^18), so that the interval spans
// more than eight integers. The digits are the multiple D·10^J of the
// largest power of ten in the scaled interval, D the scaled v over 10^J
// rounded to nearest and clamped to the interval's multiples. Zero is
// written directly; subnormals, ±Inf, NaN, magnitudes outside that
// range, and a scaled v exactly halfway between two candidates go to
// strconv.AppendFloat.
func appendShortFloat(dst []byte, v float64) []byte {
	b := math.Float64bits(v)
	switch b {
	case 0:
		return append(dst, '0')
	case 1 << 63:
		return append(dst, "-0"...)
	}
	d, nd, exp, ok := shortest(b)
	if !ok {
		return strconv.AppendFloat(dst, v, 'g', -1, 64)
	}
	if b>>63 != 0 {
		dst = append(dst, '-')
	}
	return appendDigits(dst, d, nd, exp)
}

// shortest returns the shortest digits of the finite, nonzero float64
// with bits b as appendShortFloat finds them: d of nd digits, the value
// ±d·10^exp; ok false where strconv must write it (subnormals, ±Inf,
// NaN, magnitudes outside the exact range, a tie).
func shortest(b uint64) (d uint64, nd, exp int, ok bool) {
	be := int(b>>52) & 0x7ff // the biased exponent
	if be == 0 || be == 0x7ff {
		return 0, 0, 0, false
	}
	frac := b & (1<<52 - 1)
	m := frac | 1<<52
	e := be - 1075 // |v| = m·2^e
	q := 17 - (e+52)*78913>>18
	if q < 0 || q >= len(pow5) {
		return 0, 0, 0, false
	}
	// In units of 2^(e−2): v is 4m, the ends of its interval 4m±2, or
	// 4m−1 below where the gap below is half the gap above.
	lowGap := uint64(2)
	if frac == 0 && be > 1 {
		lowGap = 1
	}
	// v, and its interval's ends, times 10^q: x·5^q / 2^s for the x
	// above, s = 2 − e − q; the integer parts and the fractions' bits
	// (from the top)
	s := uint(2 - e - q)
	if s-1 >= 63 { // s outside [1, 63]
		return 0, 0, 0, false
	}
	p5 := pow5[q]
	ph, pl := bits.Mul64(4*m, p5)
	if ph>>s != 0 {
		return 0, 0, 0, false
	}
	c, cRest := ph<<(64-s)|pl>>s, pl<<(64-s)
	if c < 1<<56 || c >= 1<<63 {
		return 0, 0, 0, false
	}
	ll, borrow := bits.Sub64(pl, lowGap*p5, 0)
	lo, loRest := (ph-borrow)<<(64-s)|ll>>s, ll<<(64-s)
	hl, carry := bits.Add64(pl, 2*p5, 0)
	hi, hiRest := (ph+carry)<<(64-s)|hl>>s, hl<<(64-s)
	inclusive := m&1 == 0
	// the integers of the scaled interval: [first, last]
	first, last := lo, hi
	if loRest != 0 || !inclusive {
		first++
	}
	if hiRest == 0 && !inclusive {
		last--
	}
	// the largest J with a multiple of 10^J in [first, last]; first and
	// last become the range of those multiples divided by 10^J. Most
	// numbers take 16 or 17 digits, J of 1 or 2: the tests for 10, 100
	// and 1000 are made at once, and only a multiple of 1000 starts the
	// search over every power
	j, cd := 0, c // cd: c/10^J rounded down
	// a multiple of 10^k lies in [first, last] when the largest one up
	// to last, (last/10^k)·10^k, is first or more
	l1, l2 := last/10, last/100
	switch {
	case last/1000*1000 >= first:
		if f, l := (first+1e16-1)/1e16, last/1e16; f <= l {
			first, last, cd, j = f, l, cd/1e16, j+16
		}
		if f, l := (first+1e8-1)/1e8, last/1e8; f <= l {
			first, last, cd, j = f, l, cd/1e8, j+8
		}
		if f, l := (first+1e4-1)/1e4, last/1e4; f <= l {
			first, last, cd, j = f, l, cd/1e4, j+4
		}
		if f, l := (first+99)/100, last/100; f <= l {
			first, last, cd, j = f, l, cd/100, j+2
		}
		if f, l := (first+9)/10, last/10; f <= l {
			first, last, cd, j = f, l, cd/10, j+1
		}
	case l2*100 >= first:
		first, last, cd, j = (first+99)/100, l2, c/100, 2
	case l1*10 >= first:
		first, last, cd, j = (first+9)/10, l1, c/10, 1
	}
	// D: the scaled v over 10^J rounded to nearest, clamped to the range
	var above int // the remainder of scaled v / 10^J against half of 10^J
	if j == 0 {
		d = c
		switch {
		case cRest > 1<<63:
			above = 1
		case cRest == 1<<63:
			above = 0
		default:
			above = -1
		}
	} else {
		p := pow10[j]
		var r uint64
		d, r = cd, c-cd*p
		switch half := p / 2; {
		case r > half || r == half && cRest != 0:
			above = 1
		case r == half:
			above = 0
		default:
			above = -1
		}
	}
	switch {
	case above > 0:
		d++
	case above == 0 && d >= first && d+1 <= last:
		return 0, 0, 0, false // a tie
	}
	d = min(max(d, first), last)
	// d has as many digits as c/10^J, or is 1 where that is below 1:
	// rounding carries it to no other power of ten, which would be a
	// multiple of a larger one in the interval
	nd = 17 - j
	if c >= 1e17 {
		nd++
	}
	if c >= 1e18 {
		nd++
	}
	nd = max(nd, 1)
	if nd > 17 { // more than the 17 digits that tell float64s apart
		return 0, 0, 0, false
	}
	return d, nd, j - q, true
}

// appendDigits appends d·10^exp, d of nd digits (not a multiple of 10,
// so its digits are all significant; at most 17, as a float64 needs) as %g
// with the shortest precision writes it. The digits are d padded with
// zeros to 17, a first digit and two words of eight, so that each part
// of the text is stored at a place known from the layout alone, into
// the room past dst's end, and the text cut to its length.
func appendDigits(dst []byte, d uint64, nd, exp int) []byte {
	d *= pow10[17-nd]
	first, hi := d/1e16, d/1e8 // hi: the first nine digits
	head := byte('0' + first)
	wa, wb := digits8(uint32(hi-first*1e8)), digits8(uint32(d-hi*1e8))
	n := len(dst)
	dst = slices.Grow(dst, 32)
	out := dst[n : n+32]
	put := func(at int, x uint64) { binary.LittleEndian.PutUint64(out[at:], x) }
	point := nd + exp // the value is 0.digits × 10^point
	if x := point - 1; x < -4 || x >= 6 {
		out[0] = head
		k := 1
		if nd > 1 {
			out[1] = '.'
			put(2, wa)
			put(10, wb)
			k = nd + 1
		}
		out[k] = 'e'
		out[k+1] = '+'
		if x < 0 {
			out[k+1] = '-'
			x = -x
		}
		if x < 100 {
			out[k+2], out[k+3] = digitPairs[2*x], digitPairs[2*x+1]
			return dst[:n+k+4]
		}
		return strconv.AppendInt(dst[:n+k+2], int64(x), 10)
	}
	switch {
	case point <= 0:
		put(0, 0x30303030_30302e30) // "0.000000"
		at := 2 - point
		out[at] = head
		put(at+1, wa)
		put(at+9, wb)
		return dst[:n+at+nd]
	case point < nd:
		out[0] = head
		put(1, wa)
		put(point+1, wa>>(8*(point-1))) // wa's digits after the point
		out[point] = '.'
		put(10, wb)
		return dst[:n+nd+1]
	}
	out[0] = head // the digits, then the zeros that pad them
	put(1, wa)
	put(9, wb)
	return dst[:n+point]
}

// digits8 returns x < 10^8 as eight decimal digits, zeros leading, in
// the bytes of a word, the most significant digit in the lowest byte. The
// digits are worked out in the word's lanes: x's two halves of four
// digits in 32-bit lanes, each split into two of two digits in 16-bit
// lanes, each of those into two digits in bytes. Dividing a lane by 100
// (below 10^4) or by 10 (below 100) multiplies by 10486/2^20 or
// 103/2^10, which is exact in those ranges and carries nothing across
// lanes.
func digits8(x uint32) uint64 {
	w := uint64(x/1e4) | uint64(x%1e4)<<32
	h := (w * 10486 >> 20) & 0x0000007f_0000007f
	w = h | (w-100*h)<<16
	h = (w * 103 >> 10) & 0x000f000f_000f000f
	w = h | (w-10*h)<<8
	return w + 0x30303030_30303030
}

// digitPairs is "00" to "99", two bytes a number.
const digitPairs = "00010203040506070809" +
	"10111213141516171819" +
	"20212223242526272829" +
	"30313233343536373839" +
	"40414243444546474849" +
	"50515253545556575859" +
	"60616263646566676869" +
	"70717273747576777879" +
	"80818283848586878889" +
	"90919293949596979899"

// pow5 holds 5^q for the q appendShortFloat scales by: all that fit in
// 64 bits.
var pow5 = func() (p [28]uint64) {
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = p[i-1] * 5
	}
	return p
}()

// pow10 holds 10^j for the powers of ten a scaled number below 2^63
// holds.
var pow10 = func() (p [19]uint64) {
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = p[i-1] * 10
	}
	return p
}()
