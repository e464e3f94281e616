// The digits of appendShortest are computed by the Dragonbox algorithm as
// the Go standard library's strconv computes them (internal/strconv,
// ftoadbox.go), whose code this file follows:
//
// Copyright 2025 The Go Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file of the Go source tree.

package report

import (
	"encoding/binary"
	"math"
	"math/big"
	"math/bits"
	"slices"
)

// appendShortest appends finite v as strconv.AppendFloat(dst, v, 'g', -1,
// 64) does, byte for byte: the shortest decimal that reads back as v, in
// the exponent form (d.ddde±dd) when its decimal exponent is below -4 or
// 6 and above, else plainly. It computes the same digits, by the same
// algorithm (Dragonbox, Junekey Jeon 2020), and writes them straight into
// their place, eight at a time: in about half the time, which is most of
// what a long curve's JSON form takes (bench/README.md).
func appendShortest(dst []byte, v float64) []byte {
	b := math.Float64bits(v)
	exp := int(b>>52) & 0x7ff
	mant := b & (1<<52 - 1)
	denorm := false
	switch {
	case exp == 0 && mant == 0:
		if b>>63 != 0 {
			return append(dst, '-', '0')
		}
		return append(dst, '0')
	case exp == 0:
		exp++
		denorm = true
	default:
		mant |= 1 << 52
	}
	digits, e10 := shortestDigits(mant, exp-1023-52, denorm)
	n := len(dst)
	dst = slices.Grow(dst, shortestRoom)
	out := dst[n : n+shortestRoom]
	i := 0
	if b>>63 != 0 {
		out[0] = '-'
		i = 1
	}
	return dst[:n+layOutG(out, i, digits, e10)]
}

// shortestRoom is the room appendShortest writes in: the longest text
// ("-2.2250738585072014e-308", 24 bytes) and the eight-byte stores that
// may reach past its end.
const shortestRoom = 24 + 8

// layOutG writes digits·10^e10 into out from i, as strconv's 'g' format
// with the shortest precision lays out the digits it has (nd of them,
// with the decimal point dp digits from their start: the exponent form
// when dp−1 < −4 or dp−1 ≥ 6), and returns where the text ends. The
// digits go where most of them belong, then the few before the point
// move one place left to make room for it.
func layOutG(out []byte, i int, digits uint64, e10 int) int {
	nd := decimalLength(digits)
	dp := nd + e10
	if x := dp - 1; x < -4 || x >= 6 {
		putDigits(out[i+1:], digits, nd)
		out[i] = out[i+1]
		end := i + 1
		if nd > 1 {
			out[i+1] = '.'
			end += nd
		}
		if x < 0 {
			out[end], out[end+1] = 'e', '-'
			x = -x
		} else {
			out[end], out[end+1] = 'e', '+'
		}
		if x >= 100 {
			out[end+2] = byte(x/100) + '0'
			x %= 100
			end++
		}
		out[end+2], out[end+3] = smallDigits[2*x], smallDigits[2*x+1]
		return end + 4
	}
	switch {
	case dp <= 0: // 0.000ddd
		binary.LittleEndian.PutUint64(out[i:], zeroPoint)
		putDigits(out[i+2-dp:], digits, nd)
		return i + 2 - dp + nd
	case dp >= nd: // ddd000
		putDigits(out[i:], digits, nd)
		binary.LittleEndian.PutUint64(out[i+nd:], eightZeros)
		return i + dp
	default: // dd.ddd
		putDigits(out[i+1:], digits, nd)
		for k := range dp {
			out[i+k] = out[i+k+1]
		}
		out[i+dp] = '.'
		return i + 1 + nd
	}
}

// eightZeros and zeroPoint are "00000000" and "0.000000" as the words
// binary.LittleEndian stores.
const (
	eightZeros = 0x3030303030303030
	zeroPoint  = 0x3030303030302e30
)

// smallDigits are the two digits of each number below 100.
const smallDigits = "00010203040506070809" +
	"10111213141516171819" +
	"20212223242526272829" +
	"30313233343536373839" +
	"40414243444546474849" +
	"50515253545556575859" +
	"60616263646566676869" +
	"70717273747576777879" +
	"80818283848586878889" +
	"90919293949596979899"

// putDigits writes the nd ≤ 17 decimal digits of u to the start of out, in
// eight-byte stores that may write up to seven bytes past them (out must
// have room for nd rounded up to eight). Eight digits at a time are
// worked out side by side in the lanes of one 64-bit word (eightDigits),
// not one division by ten after another; the zeros that lead the first
// word are shifted out of it.
func putDigits(out []byte, u uint64, nd int) {
	switch {
	case nd <= 8:
		binary.LittleEndian.PutUint64(out, eightDigits(uint32(u))>>(8*(8-nd)))
	case nd <= 16:
		binary.LittleEndian.PutUint64(out, eightDigits(uint32(u/1e8))>>(8*(16-nd)))
		binary.LittleEndian.PutUint64(out[nd-8:], eightDigits(uint32(u%1e8)))
	default: // 17, the most a float64's shortest digits take, and the most common
		out[0] = byte(u/1e16) + '0'
		binary.LittleEndian.PutUint64(out[1:], eightDigits(uint32(u/1e8%1e8)))
		binary.LittleEndian.PutUint64(out[9:], eightDigits(uint32(u%1e8)))
	}
}

// eightDigits returns the eight decimal digits of x < 10^8, leading zeros
// included, as ASCII bytes, the first in the lowest byte: x is split into
// two halves of four digits in 32-bit lanes, each into two pairs in
// 16-bit lanes, each into two digits in bytes, by multiplications that
// divide every lane at once (⌊y·10486/2^20⌋ = ⌊y/100⌋ for y < 10^4,
// ⌊y·103/2^10⌋ = ⌊y/10⌋ for y < 100) and never carry into the next lane.
func eightDigits(x uint32) uint64 {
	halves := uint64(x/10000) | uint64(x%10000)<<32
	hundreds := (halves * 10486 >> 20) & (0x7f<<32 | 0x7f)
	pairs := (halves-100*hundreds)<<16 | hundreds
	tens := (pairs * 103 >> 10) & (0xf<<48 | 0xf<<32 | 0xf<<16 | 0xf)
	return tens | (pairs-10*tens)<<8 | eightZeros
}

// decimalLength returns how many decimal digits u > 0 has.
func decimalLength(u uint64) int {
	if u >= 1e16 && u < 1e17 {
		return 17 // as most of a float64's shortest digits number
	}
	t := bits.Len64(u) * 1233 >> 12 // ⌊log10 2^len⌋, the length or one less
	if u < pow10Uint64[t] {
		return t
	}
	return t + 1
}

// pow10Uint64 are the powers of ten a uint64 holds.
var pow10Uint64 = [...]uint64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19}

// shortestDigits returns the shortest decimal digits·10^e10 that rounds
// to mant·2^exp (mant with its implicit bit, denorm for a subnormal), the
// nearest of them, ties to even: strconv's dboxFtoa64.
func shortestDigits(mant uint64, exp int, denorm bool) (digits uint64, e10 int) {
	if mant == 1<<52 && !denorm {
		// Algorithm 5.6 (page 24): the interval is narrower below.
		k0 := -mulLog10_2MinusLog10_4Over3(exp)
		φ, β := dboxPow64(k0, exp)
		xi, zi := dboxRange64(φ, β)
		if exp != 2 && exp != 3 {
			xi++
		}
		q := zi / 10
		if xi <= q*10 {
			q, zeros := trimZeros(q)
			return q, -k0 + 1 + zeros
		}
		yru := dboxRoundUp64(φ, β)
		if exp == -77 && yru%2 != 0 {
			yru--
		} else if yru < xi {
			yru++
		}
		return yru, -k0
	}

	// κ = 2 for float64 (section 5.1.3)
	const (
		κ     = 2
		p10κ  = 100       // 10**κ
		p10κ1 = p10κ * 10 // 10**(κ+1)
	)

	// Algorithm 5.2 (page 15).
	k0 := -mulLog10_2(exp)
	φ, β := dboxPow64(κ+k0, exp)
	zi, exact := dboxMulPow64(uint64(mant*2+1)<<β, φ)
	s, r := zi/p10κ1, uint32(zi%p10κ1)
	δi := uint32(φ.hi >> (64 - 1 - β))

	if r < δi {
		if r != 0 || !exact || mant%2 == 0 {
			s, zeros := trimZeros(s)
			return s, -k0 + 1 + zeros
		}
		s--
		r = p10κ * 10
	} else if r == δi {
		parity, exact := dboxParity64(uint64(mant*2-1), φ, β)
		if parity || (exact && mant%2 == 0) {
			s, zeros := trimZeros(s)
			return s, -k0 + 1 + zeros
		}
	}

	// Algorithm 5.4 (page 18).
	D := r + p10κ/2 - δi/2
	t, ρ := D/p10κ, D%p10κ
	yru := 10*s + uint64(t)
	if ρ == 0 {
		parity, exact := dboxParity64(mant*2, φ, β)
		if parity != ((D-p10κ/2)%2 != 0) || exact && yru%2 != 0 {
			yru--
		}
	}
	return yru, -k0
}

// uint128 is a 128-bit unsigned integer.
type uint128 struct{ hi, lo uint64 }

// dboxMulPow64 returns the integer part of u·φ/2^128 and whether it has
// no fractional part (section 5.2.1).
func dboxMulPow64(u uint64, φ uint128) (intPart uint64, isInt bool) {
	hi, lo := bits.Mul64(u, φ.hi)
	mid, _ := bits.Mul64(u, φ.lo)
	lo, carry := bits.Add64(lo, mid, 0)
	return hi + carry, lo == 0
}

// dboxParity64 returns the parity of the integer part of mant2·φ/2^(128-β)
// and whether it has no fractional part (section 5.2.1).
func dboxParity64(mant2 uint64, φ uint128, β int) (parity bool, isInt bool) {
	hiLo, lo := bits.Mul64(mant2, φ.lo)
	hi := mant2*φ.hi + hiLo
	parity = (hi>>(64-β))&1 != 0
	isInt = (hi<<β)|(lo>>(64-β)) == 0
	return parity, isInt
}

// dboxRange64 returns the left and right endpoints of the interval of a
// power of two.
func dboxRange64(φ uint128, β int) (left, right uint64) {
	left = (φ.hi - (φ.hi >> (52 + 2))) >> (64 - 52 - 1 - β)
	right = (φ.hi + (φ.hi >> (52 + 1))) >> (64 - 52 - 1 - β)
	return left, right
}

// dboxRoundUp64 returns y rounded up (y^(ru)).
func dboxRoundUp64(φ uint128, β int) uint64 {
	return (φ.hi>>(128/2-52-2-β) + 1) / 2
}

// dboxPow64 returns φ̃k, 10^k's 128-bit mantissa rounded up where it is
// inexact, and β.
func dboxPow64(k, e int) (φ uint128, β int) {
	φ = pow10Mantissas[k-pow10Min]
	if k < 0 || k > 55 {
		φ.lo++
	}
	return φ, e + 1 + mulLog2_10(k) - 1
}

// The powers of ten shortestDigits looks up: 10^k for every k that a
// float64's exponent calls for.
const (
	pow10Min = -292
	pow10Max = 326
)

// pow10Mantissas are the 128-bit mantissas of 10^k for k in [pow10Min,
// pow10Max], ⌊10^k·2^(128−1−⌊log2 10^k⌋)⌋ (the top bit set), worked out
// exactly when the program starts (in about 0.1 ms).
var pow10Mantissas = pow10Table()

// pow10Table returns pow10Mantissas.
func pow10Table() *[pow10Max - pow10Min + 1]uint128 {
	out := new([pow10Max - pow10Min + 1]uint128)
	mask := new(big.Int).SetUint64(math.MaxUint64)
	split := func(m *big.Int) uint128 {
		lo := new(big.Int).And(m, mask).Uint64()
		return uint128{new(big.Int).Rsh(m, 64).Uint64(), lo}
	}
	ten := big.NewInt(10)
	p := big.NewInt(1) // 10^k
	for k := 0; k <= pow10Max; k++ {
		m := new(big.Int)
		if n := p.BitLen(); n > 128 {
			m.Rsh(p, uint(n-128))
		} else {
			m.Lsh(p, uint(128-n))
		}
		out[k-pow10Min] = split(m)
		p.Mul(p, ten)
	}
	p.SetInt64(10) // 10^-k
	for k := -1; k >= pow10Min; k-- {
		// 2^(n+127)/10^-k lies in [2^127, 2^128): 10^-k is no power of two
		m := new(big.Int).Lsh(big.NewInt(1), uint(p.BitLen()+127))
		out[k-pow10Min] = split(m.Quo(m, p))
		p.Mul(p, ten)
	}
	return out
}

// mulLog10_2 returns ⌊x·log10 2⌋ for -1600 ≤ x ≤ 1600.
func mulLog10_2(x int) int {
	return (x * 78913) >> 18
}

// mulLog2_10 returns ⌊x·log2 10⌋ for -500 ≤ x ≤ 500.
func mulLog2_10(x int) int {
	return (x * 108853) >> 15
}

// mulLog10_2MinusLog10_4Over3 returns ⌊x·log10 2 − log10(4/3)⌋ (section
// 6.3).
func mulLog10_2MinusLog10_4Over3(e int) int {
	return (e*631305 - 261663) >> 21
}

// trimZeros returns x without its trailing decimal zeros and how many
// there were, dividing by multiplicative inverses: y·m mod 2^64, rotated
// right by N bits, is y/10^N when that is an integer and greater than
// ⌊(2^64−1)/10^N⌋ when not (m the inverse of 5^N).
func trimZeros(x uint64) (uint64, int) {
	const (
		div1e8m  = 0xc767074b22e90e21
		div1e8le = math.MaxUint64 / 100000000
		div1e4m  = 0xd288ce703afb7e91
		div1e4le = math.MaxUint64 / 10000
		div1e2m  = 0x8f5c28f5c28f5c29
		div1e2le = math.MaxUint64 / 100
		div1e1m  = 0xcccccccccccccccd
		div1e1le = math.MaxUint64 / 10
	)
	if d := bits.RotateLeft64(x*div1e1m, -1); d > div1e1le {
		return x, 0 // as nine in ten are
	}
	p := 0
	for d := bits.RotateLeft64(x*div1e8m, -8); d <= div1e8le; d = bits.RotateLeft64(x*div1e8m, -8) {
		x = d
		p += 8
	}
	if d := bits.RotateLeft64(x*div1e4m, -4); d <= div1e4le {
		x = d
		p += 4
	}
	if d := bits.RotateLeft64(x*div1e2m, -2); d <= div1e2le {
		x = d
		p += 2
	}
	if d := bits.RotateLeft64(x*div1e1m, -1); d <= div1e1le {
		x = d
		p++
	}
	return x, p
}
