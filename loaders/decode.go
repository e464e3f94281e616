package loaders

import (
	"encoding/binary"
	"math"
	"sync"
	"unsafe"

	"github.com/x448/float16"
)

// Decoding turns raw element bytes into float64 values, a whole buffer per
// call with one typed loop per dtype: no reflection and no per-element
// interface calls (npyio decodes one element at a time through reflection,
// which is why graphdiff does not use it on this path).
//
// Every source type converts to float64 exactly, except int64 and uint64
// beyond ±2^53, which round to the nearest float64.
//
// The narrow float formats go through lookup tables built once:
//   - float16: all 65,536 patterns, converted by x448/float16 (exact,
//     subnormals, ±Inf and NaN payloads kept);
//   - bfloat16: the upper half of a float32, so a shift is exact;
//   - float8_e4m3fn (bias 7, no Inf, S.1111.111 is NaN, max 448) and
//     float8_e5m2 (bias 15, IEEE-like with ±Inf) from their definitions:
//     normal (1 + m/2^M)·2^(e−bias), subnormal m·2^(1−bias−M).

var (
	f16Once  sync.Once
	f16Table *[1 << 16]float32
)

func float16Table() *[1 << 16]float32 {
	f16Once.Do(func() {
		var t [1 << 16]float32
		for i := range t {
			t[i] = float16.Frombits(uint16(i)).Float32()
		}
		f16Table = &t
	})
	return f16Table
}

var (
	e4m3Table = float8Table(4, 3, false)
	e5m2Table = float8Table(5, 2, true)
)

// float8Table returns the value of each of the 256 bit patterns of a float8
// format with the given exponent and mantissa widths. hasInf selects the IEEE
// convention (all-ones exponent is Inf or NaN, e5m2); without it only the
// all-ones pattern is NaN and the rest of the top binade is finite (e4m3fn).
func float8Table(expBits, manBits uint, hasInf bool) [256]float64 {
	var t [256]float64
	bias := 1<<(expBits-1) - 1
	maxExp := 1<<expBits - 1
	maxMan := 1<<manBits - 1
	for i := range t {
		sign := 1.0
		if i&0x80 != 0 {
			sign = -1
		}
		e := (i >> manBits) & maxExp
		m := i & maxMan
		var v float64
		switch {
		case hasInf && e == maxExp && m == 0:
			v = math.Inf(1)
		case hasInf && e == maxExp, !hasInf && e == maxExp && m == maxMan:
			v = math.NaN()
		case e == 0:
			v = math.Ldexp(float64(m), 1-bias-int(manBits))
		default:
			v = math.Ldexp(float64(m+(1<<manBits)), e-bias-int(manBits))
		}
		t[i] = sign * v
	}
	return t
}

// decode converts the raw bytes of len(dst)/dt.Components() elements into
// dst. bigEndian selects the byte order of multi-byte types.
func decode(dst []float64, src []byte, dt DType, bigEndian bool) {
	var bo binary.ByteOrder = binary.LittleEndian
	if bigEndian {
		bo = binary.BigEndian
	}
	switch dt {
	case Bool:
		for i := range dst {
			if src[i] != 0 {
				dst[i] = 1
			} else {
				dst[i] = 0
			}
		}
	case Int8:
		for i := range dst {
			dst[i] = float64(int8(src[i]))
		}
	case Uint8:
		for i := range dst {
			dst[i] = float64(src[i])
		}
	case Float8E4M3FN:
		for i := range dst {
			dst[i] = e4m3Table[src[i]]
		}
	case Float8E5M2:
		for i := range dst {
			dst[i] = e5m2Table[src[i]]
		}
	case Int16:
		for i := range dst {
			dst[i] = float64(int16(bo.Uint16(src[2*i:])))
		}
	case Uint16:
		for i := range dst {
			dst[i] = float64(bo.Uint16(src[2*i:]))
		}
	case Float16:
		t := float16Table()
		for i := range dst {
			dst[i] = float64(t[bo.Uint16(src[2*i:])])
		}
	case BFloat16:
		for i := range dst {
			dst[i] = float64(math.Float32frombits(uint32(bo.Uint16(src[2*i:])) << 16))
		}
	case Int32:
		for i := range dst {
			dst[i] = float64(int32(bo.Uint32(src[4*i:])))
		}
	case Uint32:
		for i := range dst {
			dst[i] = float64(bo.Uint32(src[4*i:]))
		}
	case Float32, Complex64:
		for i := range dst {
			dst[i] = float64(math.Float32frombits(bo.Uint32(src[4*i:])))
		}
	case Int64:
		for i := range dst {
			dst[i] = float64(int64(bo.Uint64(src[8*i:])))
		}
	case Uint64:
		for i := range dst {
			dst[i] = float64(bo.Uint64(src[8*i:]))
		}
	case Float64, Complex128:
		for i := range dst {
			dst[i] = math.Float64frombits(bo.Uint64(src[8*i:]))
		}
	default:
		panic("loaders: decode of " + dt.String())
	}
}

// Float8Value returns the value of a float8 bit pattern in format d
// (Float8E4M3FN or Float8E5M2).
func Float8Value(d DType, code uint8) float64 {
	if d == Float8E5M2 {
		return e5m2Table[code]
	}
	return e4m3Table[code]
}

// nativeLittleEndian is true on machines that store numbers little-endian
// (all that Go supports for graphdiff's targets but a few).
var nativeLittleEndian = func() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}()

// decode32 converts the raw bytes of len(dst) elements of a Float32Exact
// dtype into float32 values.
func decode32(dst []float32, src []byte, dt DType, bigEndian bool) {
	if len(dst) == 0 {
		return // an empty tensor: src may hold no byte to point at
	}
	var bo binary.ByteOrder = binary.LittleEndian
	if bigEndian {
		bo = binary.BigEndian
	}
	switch dt {
	case Float32:
		if !bigEndian && nativeLittleEndian {
			copy(dst, unsafe.Slice((*float32)(unsafe.Pointer(&src[0])), len(dst)))
			return
		}
		for i := range dst {
			dst[i] = math.Float32frombits(bo.Uint32(src[4*i:]))
		}
	case BFloat16:
		if u, ok := native16(src, len(dst), bigEndian); ok {
			widenBF16(dst, u)
			return
		}
		for i := range dst {
			dst[i] = math.Float32frombits(uint32(bo.Uint16(src[2*i:])) << 16)
		}
	case Float16:
		t := float16Table()
		if u, ok := native16(src, len(dst), bigEndian); ok {
			for i, v := range u {
				dst[i] = t[v]
			}
			return
		}
		for i := range dst {
			dst[i] = t[bo.Uint16(src[2*i:])]
		}
	case Float8E4M3FN, Float8E5M2:
		t := &e4m3Table32
		if dt == Float8E5M2 {
			t = &e5m2Table32
		}
		for i := range dst {
			dst[i] = t[src[i]]
		}
	case Bool:
		for i := range dst {
			dst[i] = 0
			if src[i] != 0 {
				dst[i] = 1
			}
		}
	case Int8:
		for i := range dst {
			dst[i] = float32(int8(src[i]))
		}
	case Uint8:
		for i := range dst {
			dst[i] = float32(src[i])
		}
	case Int16:
		for i := range dst {
			dst[i] = float32(int16(bo.Uint16(src[2*i:])))
		}
	case Uint16:
		for i := range dst {
			dst[i] = float32(bo.Uint16(src[2*i:]))
		}
	default:
		panic("loaders: decode32 of " + dt.String())
	}
}

// widenBF16 sets dst[i] to the float32 whose top half is src[i] (a
// bfloat16 is the top half of a float32). An AVX2 version of this loop
// gained nothing measurable end to end, so there is none
// (bench/README.md).
func widenBF16(dst []float32, src []uint16) {
	src = src[:len(dst)]
	for i, v := range src {
		dst[i] = math.Float32frombits(uint32(v) << 16)
	}
}

// native32 returns the little-endian float32 values of src as a slice in
// place, when this machine reads them so and src is aligned for it.
func native32(src []byte, bigEndian bool) ([]float32, bool) {
	if bigEndian || !nativeLittleEndian || len(src) < 4 || uintptr(unsafe.Pointer(&src[0]))%4 != 0 {
		return nil, false
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&src[0])), len(src)/4), true
}

// native16 returns n little-endian uint16 values of src as a slice in
// place, when this machine reads them so and src is aligned for it.
func native16(src []byte, n int, bigEndian bool) ([]uint16, bool) {
	if bigEndian || !nativeLittleEndian || n == 0 || uintptr(unsafe.Pointer(&src[0]))%2 != 0 {
		return nil, false
	}
	return unsafe.Slice((*uint16)(unsafe.Pointer(&src[0])), n), true
}

var e4m3Table32, e5m2Table32 = to32(e4m3Table), to32(e5m2Table)

func to32(t [256]float64) (out [256]float32) {
	for i, v := range t {
		out[i] = float32(v)
	}
	return out
}
