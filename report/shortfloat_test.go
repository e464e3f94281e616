package report

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// checkShortFloat fails t where appendShortFloat's text of the float64
// with bits b is not strconv.AppendFloat's ('g', -1, 64).
func checkShortFloat(t testing.TB, b uint64) {
	t.Helper()
	v := math.Float64frombits(b)
	got := appendShortFloat([]byte("x"), v)
	want := strconv.AppendFloat([]byte("x"), v, 'g', -1, 64)
	if string(got) != string(want) {
		t.Fatalf("%#016x: %s, strconv %s", b, got[1:], want[1:])
	}
}

// shortFloatCases are the numbers whose text is checked one by one: the
// special values, the ends of the range appendShortFloat works out itself
// and around them, the switches between plain and exponent form (1e-4,
// 1e-5, 1e5, 1e6), significands that are powers of two (a narrower gap
// below), integers, halves and numbers whose interval ends or midpoints
// are short decimals.
func shortFloatCases() []float64 {
	vs := append([]float64{}, edgeNumbers...)
	vs = append(vs, math.SmallestNonzeroFloat64, math.Nextafter(0, 1)*3, 1e-10, 1e-11, 9.99e-11, 1e17, 1e16, 9.999999999999999e16,
		2e17, 1e-5, 1e-4, 0.00010000000000000002, 99999.99999999999, 100000, 999999.9999999999, 1e6, 123456.5, 0.5, 0.25, 1.5,
		2.5, 9007199254740992, 9007199254740993, 4503599627370496.5, 1<<60, 0.3, 0.7, 5e-5, 123456789, 1.7976931348623157e308)
	for x := -400; x <= 400; x++ {
		p := math.Pow(10, float64(x))
		vs = append(vs, p, math.Nextafter(p, 0), math.Nextafter(p, math.Inf(1)), 2*p, 5*p, 9.5*p)
	}
	for x := -1074; x <= 1023; x++ {
		p := math.Ldexp(1, x)
		vs = append(vs, p, math.Nextafter(p, 0), math.Nextafter(p, math.Inf(1)), 3*p)
	}
	for i := range 2000 {
		vs = append(vs, float64(i), float64(i)+0.5, float64(i)/1000, float64(i)*1e-7)
	}
	return vs
}

// TestShortFloatIsStrconv checks appendShortFloat against
// strconv.AppendFloat on the special cases, float32 values widened (as
// float32 losses are), and random bit patterns: over every exponent, and
// more of them in the range it works out itself.
func TestShortFloatIsStrconv(t *testing.T) {
	for _, v := range shortFloatCases() {
		checkShortFloat(t, math.Float64bits(v))
		checkShortFloat(t, math.Float64bits(-v))
	}
	rng := rand.New(rand.NewPCG(38, 3))
	n := 2_000_000
	if testing.Short() {
		n = 200_000
	}
	for range n {
		checkShortFloat(t, rng.Uint64())
		// |v| from about 1e-12 to 1e18
		checkShortFloat(t, uint64(rng.IntN(200)+983)<<52|rng.Uint64()&(1<<52-1)|rng.Uint64()&(1<<63))
		checkShortFloat(t, math.Float64bits(float64(math.Float32frombits(rng.Uint32()))))
		// few significant bits: short decimals, ties, ends of intervals
		checkShortFloat(t, uint64(rng.IntN(200)+983)<<52|rng.Uint64()&(1<<52-1)&^(1<<uint(rng.IntN(52))-1))
	}
}

// FuzzShortFloat checks appendShortFloat against strconv.AppendFloat on
// any bit pattern.
func FuzzShortFloat(f *testing.F) {
	for _, v := range edgeNumbers {
		f.Add(math.Float64bits(v))
	}
	f.Add(math.Float64bits(0.1))
	f.Add(math.Float64bits(123456.5))
	f.Fuzz(func(t *testing.T, b uint64) {
		checkShortFloat(t, b)
	})
}

// BenchmarkShortFloat formats float32 losses widened to float64, as the
// curve's a_values and b_values are, by appendShortFloat and by
// strconv.AppendFloat.
func BenchmarkShortFloat(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	vs := make([]float64, 4096)
	for i := range vs {
		vs[i] = float64(float32(0.1 + 2*rng.Float64()))
	}
	buf := make([]byte, 0, 64)
	b.Run("appendShortFloat", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			buf = appendShortFloat(buf[:0], vs[i%len(vs)])
		}
	})
	b.Run("strconv", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			buf = strconv.AppendFloat(buf[:0], vs[i%len(vs)], 'g', -1, 64)
		}
	})
}

// TestDigits8 checks digits8 on every number below 10^8 (every 97th
// with -short) against its digits worked out one at a time.
func TestDigits8(t *testing.T) {
	step := uint32(1)
	if testing.Short() {
		step = 97
	}
	var b [8]byte
	want := []byte("00000000")
	for x := uint32(0); x < 1e8; x += step {
		binary.LittleEndian.PutUint64(b[:], digits8(x))
		for i, n := 7, x; i >= 0; i-- {
			want[i] = byte('0' + n%10)
			n /= 10
		}
		if string(b[:]) != string(want) {
			t.Fatalf("digits8(%d) = %q", x, b[:])
		}
	}
}
