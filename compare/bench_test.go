package compare

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/x448/float16"

	"github.com/graphdiff/graphdiff/loaders"
	"github.com/graphdiff/graphdiff/tolerances"
)

// benchPair returns n float32 values and a copy with every 1000th changed
// by 1e-3, as the reference benchmark's generator makes them.
func benchPair(n int) ([]float32, []float32) {
	rng := rand.New(rand.NewPCG(1, 2))
	a, b := make([]float32, n), make([]float32, n)
	for i := range a {
		a[i] = float32(rng.NormFloat64())
		b[i] = a[i]
		if i%1000 == 0 {
			b[i] += 1e-3
		}
	}
	return a, b
}

// BenchmarkKernelFloat32 measures the float32 kernel on a cache-sized
// buffer, in bytes of both inputs per second.
func BenchmarkKernelFloat32(b *testing.B) {
	va, vb := benchPair(pairBufElems)
	var h errorHistogram
	b.SetBytes(int64(8 * len(va)))
	for b.Loop() {
		c := newAcc(tolerances.For(loaders.Float32), ulpKeyFor(loaders.Float32), false, true, &h, 0)
		c.addF32(va, vb, ulpFloat32)
	}
}

// halfBytes returns v rounded to bfloat16 or (f16) float16, as the
// little-endian bytes a file holds.
func halfBytes(v []float32, f16 bool) []byte {
	out := make([]byte, 2*len(v))
	for i, x := range v {
		h := bfloat16Bits(float64(x))
		if f16 {
			h = float16.Fromfloat32(x).Bits()
		}
		binary.LittleEndian.PutUint16(out[2*i:], h)
	}
	return out
}

func benchmarkKernel16(b *testing.B, d loaders.DType) {
	f16 := d == loaders.Float16
	a32, b32 := benchPair(pairBufElems)
	ra, rb := halfBytes(a32, f16), halfBytes(b32, f16)
	mode := ulpBFloat16
	if f16 {
		mode = ulpKeyFunc
	}
	var h errorHistogram
	b.SetBytes(int64(len(ra) + len(rb)))
	for b.Loop() {
		c := newAcc(tolerances.For(d), ulpKeyFor(d), false, true, &h, 0)
		c.add16(ra, rb, f16, mode)
	}
}

// BenchmarkKernelBFloat16 and BenchmarkKernelFloat16 measure add16 on the
// same values rounded to 16 bits (every 1000th pair differs), in bytes of
// both inputs per second.
func BenchmarkKernelBFloat16(b *testing.B) { benchmarkKernel16(b, loaders.BFloat16) }
func BenchmarkKernelFloat16(b *testing.B)  { benchmarkKernel16(b, loaders.Float16) }

// BenchmarkKernelMixed measures the float32 kernel on float32 values
// against their bfloat16 roundings: nearly every pair differs, so this is
// the cost of the slow path. Bytes are those of the two files (4 + 2 per
// element).
func BenchmarkKernelMixed(b *testing.B) {
	va, _ := benchPair(pairBufElems)
	vb := make([]float32, len(va))
	for i, x := range va {
		vb[i] = math.Float32frombits(uint32(bfloat16Bits(float64(x))) << 16)
	}
	var h errorHistogram
	b.SetBytes(int64(6 * len(va)))
	for b.Loop() {
		c := newAcc(tolerances.For(loaders.BFloat16), ulpKeyFor(loaders.BFloat16), false, true, &h, 0)
		c.addF32(va, vb, ulpBFloat16)
	}
}

// BenchmarkGenericFloat64 measures the general loop on the same values,
// decoded to float64.
func BenchmarkGenericFloat64(b *testing.B) {
	a32, b32 := benchPair(pairBufElems)
	va, vb := make([]float64, len(a32)), make([]float64, len(b32))
	for i := range a32 {
		va[i], vb[i] = float64(a32[i]), float64(b32[i])
	}
	var h errorHistogram
	b.SetBytes(int64(8 * len(va)))
	for b.Loop() {
		c := newAcc(tolerances.For(loaders.Float32), ulpKeyFor(loaders.Float32), false, true, &h, 0)
		c.addReal(va, vb)
	}
}
