package npyfile

import (
	"encoding/binary"
	"math"
	"strconv"
)

// The element decoders below are the tests' reference: written from the
// formats' definitions, apart from loaders' decoders and tables, so that a
// test of loaders does not check loaders against itself.

// Size returns the size in bytes of one element of dtype descr ("<f4",
// "|b1", ">c16", "<V2"), 0 for a descr this package does not know.
func Size(descr string) int {
	_, code := split(descr)
	switch code {
	case "b1", "i1", "u1", "V1", "f1":
		return 1
	case "i2", "u2", "f2", "V2":
		return 2
	case "i4", "u4", "f4":
		return 4
	case "i8", "u8", "f8", "c8":
		return 8
	case "c16":
		return 16
	}
	return 0
}

// split returns whether descr is big-endian and its type code.
func split(descr string) (big bool, code string) {
	if descr == "" {
		return false, ""
	}
	switch descr[0] {
	case '>':
		return true, descr[1:]
	case '<', '|', '=':
		return false, descr[1:]
	}
	return false, descr
}

// orderOf returns the byte order of descr's elements and its type code.
func orderOf(descr string) (binary.ByteOrder, string) {
	big, code := split(descr)
	if big {
		return binary.BigEndian, code
	}
	return binary.LittleEndian, code
}

// Value returns the value of elem, one element of dtype descr in the
// byte order descr says: its real and imaginary parts (im is 0 for a real
// dtype). '<V2' is bfloat16 and '|V1' float8_e4m3fn, as ml_dtypes saves
// them; '<f1' is float8_e5m2. Floats are exact (±0, subnormals, ±Inf,
// NaN); integers are exact up to 2^53 in magnitude (Integer is exact
// beyond).
func Value(descr string, elem []byte) (re, im float64) {
	bo, code := orderOf(descr)
	switch code {
	case "b1":
		if elem[0] != 0 {
			return 1, 0
		}
		return 0, 0
	case "i1":
		return float64(int8(elem[0])), 0
	case "u1":
		return float64(elem[0]), 0
	case "i2":
		return float64(int16(bo.Uint16(elem))), 0
	case "u2":
		return float64(bo.Uint16(elem)), 0
	case "i4":
		return float64(int32(bo.Uint32(elem))), 0
	case "u4":
		return float64(bo.Uint32(elem)), 0
	case "i8":
		return float64(int64(bo.Uint64(elem))), 0
	case "u8":
		return float64(bo.Uint64(elem)), 0
	case "f2":
		return minifloat(uint(bo.Uint16(elem)), 5, 10, true), 0
	case "V2":
		return float64(math.Float32frombits(uint32(bo.Uint16(elem)) << 16)), 0
	case "V1":
		return minifloat(uint(elem[0]), 4, 3, false), 0
	case "f1":
		return minifloat(uint(elem[0]), 5, 2, true), 0
	case "f4":
		return float64(math.Float32frombits(bo.Uint32(elem))), 0
	case "f8":
		return math.Float64frombits(bo.Uint64(elem)), 0
	case "c8":
		return float64(math.Float32frombits(bo.Uint32(elem))), float64(math.Float32frombits(bo.Uint32(elem[4:])))
	case "c16":
		return math.Float64frombits(bo.Uint64(elem)), math.Float64frombits(bo.Uint64(elem[8:]))
	}
	panic("npyfile: no decoder for " + descr)
}

// Integer returns the exact value of elem, one element of a bool or
// integer dtype descr, in decimal ("-3", "18446744073709551615"); false
// for other dtypes.
func Integer(descr string, elem []byte) (string, bool) {
	bo, code := orderOf(descr)
	switch code {
	case "i8":
		return strconv.FormatInt(int64(bo.Uint64(elem)), 10), true
	case "u8":
		return strconv.FormatUint(bo.Uint64(elem), 10), true
	case "b1", "i1", "u1", "i2", "u2", "i4", "u4":
		re, _ := Value(descr, elem) // exact: at most 32 bits
		return strconv.FormatInt(int64(re), 10), true
	}
	return "", false
}

// minifloat returns the value of the bit pattern bits of a binary float
// format with one sign bit, expBits exponent bits (bias 2^(expBits−1) − 1)
// and manBits mantissa bits: normal (1 + m/2^manBits)·2^(e−bias),
// subnormal m·2^(1−bias−manBits). With ieee, an all-ones exponent is ±Inf
// (m = 0) or NaN; without (float8_e4m3fn), only the all-ones pattern is
// NaN and the rest of the top binade is finite.
func minifloat(bits uint, expBits, manBits int, ieee bool) float64 {
	sign := 1.0
	if bits>>(expBits+manBits)&1 != 0 {
		sign = -1
	}
	e := int(bits>>manBits) & (1<<expBits - 1)
	m := int(bits) & (1<<manBits - 1)
	bias := 1<<(expBits-1) - 1
	switch {
	case ieee && e == 1<<expBits-1 && m == 0:
		return math.Inf(int(sign))
	case ieee && e == 1<<expBits-1, !ieee && e == 1<<expBits-1 && m == 1<<manBits-1:
		return math.NaN()
	case e == 0:
		return sign * math.Ldexp(float64(m), 1-bias-manBits)
	}
	return sign * math.Ldexp(1+float64(m)/float64(int(1)<<manBits), e-bias)
}
