package compare

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/graphdiff/graphdiff/loaders"
)

// mixedFromBytes makes a float32 side and a bfloat16 side from data, five
// bytes a pair: the top and low halves of the float32 bit pattern and a
// control byte. Bit 0 of the control keeps the low half (else the float32
// holds a bfloat16 value); bit 1 flips the bfloat16's low bits by the
// control's top six (else it is the float32's top half). Most pairs of
// arbitrary data are then equal or one rounding apart, in runs, with
// every kind of bit pattern: ±0, subnormals, ±Inf, NaN payloads.
func mixedFromBytes(data []byte) (f32 []float32, bf []byte) {
	n := len(data) / 5
	f32, bf = make([]float32, n), make([]byte, 2*n)
	for i := range n {
		p := data[5*i : 5*i+5]
		hi, lo, ctl := binary.LittleEndian.Uint16(p), binary.LittleEndian.Uint16(p[2:]), p[4]
		bits := uint32(hi) << 16
		if ctl&1 != 0 {
			bits |= uint32(lo)
		}
		f32[i] = math.Float32frombits(bits)
		h := hi
		if ctl&2 != 0 {
			h ^= uint16(ctl >> 2)
		}
		binary.LittleEndian.PutUint16(bf[2*i:], h)
	}
	return f32, bf
}

// FuzzMixedKernel checks addMixed, a float32 side against bfloat16 words
// read in place, against the general float64 loop on the same values,
// both ways round, whole and in pieces, with every kernel set the machine
// has: the metrics must be the same, bit for bit.
func FuzzMixedKernel(f *testing.F) {
	seed := func(n int, ctl func(i int) byte) []byte {
		data := make([]byte, 5*n)
		for i := range n {
			binary.LittleEndian.PutUint16(data[5*i:], uint16(0x3F80+i%97)) // 1.0 and up
			binary.LittleEndian.PutUint16(data[5*i+2:], uint16(i*7919))
			data[5*i+4] = ctl(i)
		}
		return data
	}
	f.Add(seed(300, func(i int) byte { return 0 }))                      // all equal
	f.Add(seed(300, func(i int) byte { return 1 }))                      // all differ by rounding
	f.Add(seed(300, func(i int) byte { return byte(i % 5 / 4 * 0x0A) })) // every 5th differs in the bfloat16
	f.Add(seed(100, func(i int) byte { return byte(i) }))
	// ±Inf, NaN, −0 and a subnormal inside runs of equal pairs, past the
	// first window (which is widened before any finite pair is seen)
	specials := seed(200, func(i int) byte { return 0 })
	for i, h := range []uint16{0x7F80, 0xFF80, 0x7FC1, 0x8000, 0x0001} {
		binary.LittleEndian.PutUint16(specials[5*(100+16*i):], h)
	}
	f.Add(specials)
	f.Fuzz(func(t *testing.T, data []byte) {
		f32, raw := mixedFromBytes(data)
		n := len(f32)
		if n == 0 {
			return
		}
		bf := make([]float32, n)
		(&loaders.Tensor{DType: loaders.BFloat16}).DecodeFloat32(bf, raw)
		for _, m := range ulpCases[1:] {
			a, b := f32, bf
			if m.swap {
				a, b = bf, f32
			}
			va, vb := make([]float64, n), make([]float64, n)
			for i := range a {
				va[i], vb[i] = float64(a[i]), float64(b[i])
			}
			want := metricsOf(goKernels, loaders.BFloat16, n, func(c *acc) { c.addReal(va, vb) })
			eachKernelSet(t, func(t *testing.T, k kernels) {
				whole := metricsOf(k, loaders.BFloat16, n, func(c *acc) { addMixedOnce(c, f32, raw, m.mode) })
				split := metricsOf(k, loaders.BFloat16, n, func(c *acc) {
					pieces(n, func(lo, hi int) { addMixedOnce(c, f32[lo:hi], raw[2*lo:2*hi], m.mode) })
				})
				if !sameMetrics(&whole, &want) || !sameMetrics(&split, &want) {
					t.Fatalf("%s:\ngeneric %#v\nwhole   %#v\npieces  %#v", m.name, want, whole, split)
				}
			})
		}
	})
}

// roundingFromBytes makes two float32 sides from data, five bytes a pair:
// the bit pattern of a (four bytes) and a control byte whose low three
// bits say how b relates to a: equal (three ways in eight, so that runs of
// equal pairs form), one unit in the last place up or down, a rounded to
// bfloat16, a with low bits flipped by the control's top five, or −a.
// Arbitrary data then gives runs of equal pairs broken by pairs that differ
// by rounding, with every kind of bit pattern: ±0, subnormals, ±Inf, NaN.
func roundingFromBytes(data []byte) (a, b []float32) {
	n := len(data) / 5
	a, b = make([]float32, n), make([]float32, n)
	for i := range n {
		p := data[5*i : 5*i+5]
		bits, ctl := binary.LittleEndian.Uint32(p), p[4]
		other := bits
		switch ctl & 7 {
		case 3:
			other++
		case 4:
			other--
		case 5:
			other = uint32(bfloat16Bits(float64(math.Float32frombits(bits)))) << 16
		case 6:
			other ^= uint32(ctl >> 3)
		case 7:
			other ^= 1 << 31
		}
		a[i], b[i] = math.Float32frombits(bits), math.Float32frombits(other)
	}
	return a, b
}

// truncateBF16 returns v with each value's low sixteen bits cleared: a
// bfloat16 value, as a bfloat16 side holds.
func truncateBF16(v []float32) []float32 {
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = math.Float32frombits(math.Float32bits(x) &^ 0xFFFF)
	}
	return out
}

// bucketRange returns the buckets h counted in, (0, −1) for none.
func bucketRange(h *errorHistogram) (lo, hi int) {
	if lo, hi = h.span(); hi < lo {
		return 0, -1
	}
	return lo, hi
}

// FuzzFloat32Kernel checks addF32 on pairs that differ by rounding among
// equal ones against the general float64 loop, with every kernel set the
// machine has, whole and in pieces, in every ULP mode of float32 data
// (float32 units, and bfloat16 units with either side, both or neither
// float32): the metrics and the histogram's range and total must be the
// same, bit for bit.
func FuzzFloat32Kernel(f *testing.F) {
	seed := func(n int, ctl func(i int) byte) []byte {
		data := make([]byte, 5*n)
		rng := rand.New(rand.NewPCG(uint64(n), 3))
		for i := range n {
			binary.LittleEndian.PutUint32(data[5*i:], math.Float32bits(float32(rng.NormFloat64())))
			data[5*i+4] = ctl(i)
		}
		return data
	}
	f.Add(seed(400, func(i int) byte { return 0 }))                      // all equal
	f.Add(seed(400, func(i int) byte { return 3 }))                      // all one unit apart
	f.Add(seed(400, func(i int) byte { return 5 }))                      // all rounded to bfloat16
	f.Add(seed(400, func(i int) byte { return byte(3 * (i % 10 / 9)) })) // every tenth one unit apart
	f.Add(seed(400, func(i int) byte { return byte(i*7919) % 6 }))       // mixed at random
	f.Add(seed(300, func(i int) byte { return byte(4 + i%4) }))          // down, rounded, flipped, negated
	specials := seed(300, func(i int) byte { return 3 })
	for i, bits := range []uint32{0x7F800000, 0xFF800000, 0x7FC00001, 0x80000000, 0x00000001, 0x7F7FFFFF} {
		binary.LittleEndian.PutUint32(specials[5*(60+37*i):], bits)
	}
	f.Add(specials)
	f.Fuzz(func(t *testing.T, data []byte) {
		a32, b32 := roundingFromBytes(data)
		n := len(a32)
		if n == 0 {
			return
		}
		for _, m := range []struct {
			name   string
			dtype  loaders.DType
			mode   ulpMode
			aF, bF bool // the side holds float32 values, else bfloat16
		}{
			{"float32", loaders.Float32, ulpFloat32, true, true},
			{"float32 vs bfloat16", loaders.BFloat16, ulpBFloat16 | ulpRoundA, true, false},
			{"bfloat16 vs float32", loaders.BFloat16, ulpBFloat16 | ulpRoundB, false, true},
			{"float32 vs float32 at bfloat16", loaders.BFloat16, ulpBFloat16 | ulpRoundA | ulpRoundB, true, true},
			{"bfloat16", loaders.BFloat16, ulpBFloat16, false, false},
		} {
			a, b := a32, b32
			if !m.aF {
				a = truncateBF16(a)
			}
			if !m.bF {
				b = truncateBF16(b)
			}
			wa, wb := widen64(a, b)
			var hw errorHistogram
			want := foldedMetrics(goKernels, m.dtype, n, &hw, func(c *acc) { c.addReal(wa, wb) })
			wlo, whi := bucketRange(&hw)
			eachKernelSet(t, func(t *testing.T, k kernels) {
				for _, split := range []bool{false, true} {
					var h errorHistogram
					got := foldedMetrics(k, m.dtype, n, &h, func(c *acc) {
						if !split {
							c.addF32(a, b, m.mode)
							return
						}
						pieces(n, func(lo, hi int) { c.addF32(a[lo:hi], b[lo:hi], m.mode) })
					})
					lo, hi := bucketRange(&h)
					if !sameMetrics(&got, &want) || lo != wlo || hi != whi || h.total() != hw.total() {
						t.Fatalf("%s, in pieces %v:\ngeneric %#v\n        histogram [%d, %d], %d counts\nkernel  %#v\n        histogram [%d, %d], %d counts",
							m.name, split, want, wlo, whi, hw.total(), got, lo, hi, h.total())
					}
				}
			})
		}
	})
}
