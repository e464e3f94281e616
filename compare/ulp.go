package compare

import (
	"math"
	"sort"

	"github.com/x448/float16"

	"github.com/graphdiff/graphdiff/loaders"
)

// ULP distance: how many representable values of a dtype lie between two
// values, plus one (0 for equal values, 1 for neighbours). Each value is
// mapped to an integer that counts representable values in order: its bit
// pattern for positives, and the pattern's magnitude negated for negatives,
// so that −0 and +0 are both 0. Values not representable in the dtype
// (from a finer dtype in a mixed pair) are first rounded to nearest, ties
// to even. NaN and ±Inf have no ULP distance and are left out.

// ulpKey returns the ordered integer of a value in one dtype.
type ulpKey func(v float64) int64

// ulpKeyFor returns the ordered-integer mapping of dtype d. For integers and
// bool the integer is the value itself, so their "ULP" distance is |a−b|.
func ulpKeyFor(d loaders.DType) ulpKey {
	switch d {
	case loaders.Float64, loaders.Complex128:
		return func(v float64) int64 { return signMagnitude(math.Float64bits(v), 63) }
	case loaders.Float32, loaders.Complex64:
		return func(v float64) int64 { return signMagnitude(uint64(math.Float32bits(float32(v))), 31) }
	case loaders.Float16:
		return func(v float64) int64 {
			return signMagnitude(uint64(float16.Fromfloat32(float32(v)).Bits()), 15)
		}
	case loaders.BFloat16:
		return func(v float64) int64 { return signMagnitude(uint64(bfloat16Bits(v)), 15) }
	case loaders.Float8E4M3FN:
		return float8Key(loaders.Float8E4M3FN)
	case loaders.Float8E5M2:
		return float8Key(loaders.Float8E5M2)
	}
	return func(v float64) int64 { return int64(v) } // integers and bool: the value itself
}

// signMagnitude maps a sign-magnitude bit pattern with its sign at bit
// signBit to an integer that orders like the value.
func signMagnitude(bits uint64, signBit uint) int64 {
	mag := int64(bits &^ (1 << signBit))
	if bits>>signBit&1 != 0 {
		return -mag
	}
	return mag
}

// bfloat16Bits rounds v to bfloat16 (to nearest, ties to even) and returns
// its bit pattern.
func bfloat16Bits(v float64) uint16 {
	b := math.Float32bits(float32(v))
	b += 0x7FFF + (b>>16)&1
	return uint16(b >> 16)
}

// float8Key returns the ordered index of a value among the finite values of
// a float8 format: the position of the nearest one, by binary search in
// the format's sorted non-negative values.
func float8Key(d loaders.DType) ulpKey {
	var pos []float64 // non-negative finite values, ascending; index = magnitude code
	for code := 0; code < 128; code++ {
		v := loaders.Float8Value(d, uint8(code))
		if math.IsNaN(v) || math.IsInf(v, 0) {
			break
		}
		pos = append(pos, v)
	}
	return func(v float64) int64 {
		a := math.Abs(v)
		i := sort.SearchFloat64s(pos, a)
		switch {
		case i == len(pos):
			i = len(pos) - 1
		case i > 0 && a-pos[i-1] <= pos[i]-a:
			if a-pos[i-1] < pos[i]-a || (i-1)%2 == 0 { // ties to the even code
				i--
			}
		}
		if v < 0 {
			return -int64(i)
		}
		return int64(i)
	}
}

// ulpDistance returns |key(a) − key(b)|.
func ulpDistance(key ulpKey, a, b float64) uint64 {
	ka, kb := key(a), key(b)
	if ka > kb {
		return uint64(ka - kb)
	}
	return uint64(kb - ka)
}
