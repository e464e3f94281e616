package report

import (
	"bytes"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// checkShortest fails t when appendShortest and strconv write v, if
// finite, apart.
func checkShortest(t testing.TB, v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return
	}
	got, want := appendShortest([]byte("x"), v), strconv.AppendFloat([]byte("x"), v, 'g', -1, 64)
	if !bytes.Equal(got, want) {
		t.Fatalf("%#016x: appendShortest %s, strconv %s", math.Float64bits(v), got[1:], want[1:])
	}
}

// TestAppendShortestIsStrconv checks appendShortest against strconv's
// 'g' format with the shortest precision, on numbers drawn to reach every
// branch: every binary exponent (the powers of two take their own path,
// subnormals another), the float32 values losses are, integers and round
// decimals at the edges of the plain and exponent forms, and random bits.
func TestAppendShortestIsStrconv(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for e := range uint64(2047) { // all but Inf and NaN
		for _, m := range []uint64{0, 1, 2, 3, 1<<52 - 1, 1<<51 + 1, rng.Uint64N(1 << 52), rng.Uint64N(1 << 52)} {
			checkShortest(t, math.Float64frombits(e<<52|m))
			checkShortest(t, -math.Float64frombits(e<<52|m))
		}
	}
	for k := -330; k <= 310; k++ {
		for _, d := range []float64{1, 2, 5, 9.999999999999999, 1.5, 123456789012345678} {
			checkShortest(t, d*math.Pow(10, float64(k)))
			checkShortest(t, math.Nextafter(d*math.Pow(10, float64(k)), 0))
			checkShortest(t, math.Nextafter(d*math.Pow(10, float64(k)), math.Inf(1)))
		}
	}
	for i := range 1 << 20 {
		checkShortest(t, float64(int64(i)*int64(i)*977))
		checkShortest(t, float64(math.Float32frombits(rng.Uint32())))
		checkShortest(t, math.Float64frombits(rng.Uint64()))
	}
}

// FuzzAppendShortest checks appendShortest against strconv on any
// float64's bits.
func FuzzAppendShortest(f *testing.F) {
	for _, v := range edgeNumbers {
		f.Add(math.Float64bits(v))
	}
	f.Fuzz(func(t *testing.T, bits uint64) { checkShortest(t, math.Float64frombits(bits)) })
}

// BenchmarkAppendShortest formats float32 losses widened to float64,
// as a curve's values are, with appendShortest and with strconv.
func BenchmarkAppendShortest(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	vs := make([]float64, 1<<16)
	for i := range vs {
		vs[i] = float64(float32(2*math.Exp(-float64(i)/2e5) + 0.1 + 0.05*rng.Float64()))
	}
	for _, bc := range []struct {
		name   string
		format func([]byte, float64) []byte
	}{
		{"appendShortest", appendShortest},
		{"strconv", func(dst []byte, v float64) []byte { return strconv.AppendFloat(dst, v, 'g', -1, 64) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var buf []byte
			i := 0
			for b.Loop() {
				buf = bc.format(buf[:0], vs[i%len(vs)])
				i++
			}
		})
	}
}
