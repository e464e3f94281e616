package compare

import (
	"encoding/binary"
	"math"
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
