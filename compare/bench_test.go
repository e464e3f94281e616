package compare

import (
	"math"
	"math/rand/v2"
	"testing"

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

// TestKernelMatchesGeneric checks that the float32 kernel and the general
// loop give identical metrics on values with NaN, ±Inf, zeros, signed
// zeros, subnormals and ties.
func TestKernelMatchesGeneric(t *testing.T) {
	a32, b32 := benchPair(10_000)
	specials := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 0, float32(math.Copysign(0, -1)), 1e-45, -1e-45, 3e38}
	for i, v := range specials {
		a32[100*i] = v
		b32[100*i+37] = v
		b32[100*i+50] = -v
	}
	bf := func(v []float32) []float32 {
		out := make([]float32, len(v))
		for i := range v {
			out[i] = math.Float32frombits(math.Float32bits(v[i]) &^ 0xFFFF)
		}
		return out
	}
	cases := []struct {
		name string
		d    loaders.DType
		x, y []float32
		mode ulpMode
	}{
		{"float32", loaders.Float32, a32, b32, ulpFloat32},
		{"bfloat16", loaders.BFloat16, bf(a32), bf(b32), ulpBFloat16},
		{"float32 vs bfloat16", loaders.BFloat16, a32, bf(b32), ulpBFloat16},
	}
	for _, tc := range cases {
		d, x, y, mode := tc.d, tc.x, tc.y, tc.mode
		va, vb := make([]float64, len(x)), make([]float64, len(y))
		for i := range x {
			va[i], vb[i] = float64(x[i]), float64(y[i])
		}
		var h1, h2 errorHistogram
		k := newAcc(tolerances.For(d), ulpKeyFor(d), false, true, &h1, 0)
		k.addF32(x, y, mode)
		g := newAcc(tolerances.For(d), ulpKeyFor(d), false, true, &h2, 0)
		g.addReal(va, vb)
		tn := &loaders.Tensor{Shape: []int{len(x)}}
		mk, mg := k.metrics(&h1, tn.Index), g.metrics(&h2, tn.Index)
		if !sameMetrics(&mk, &mg) {
			t.Errorf("%s:\nkernel  %#v\ngeneric %#v", tc.name, mk, mg)
		}
	}
}
