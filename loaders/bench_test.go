package loaders

import (
	"errors"
	"io"
	"testing"
)

// benchElems is how many elements the decoding benchmarks decode: a
// buffer that stays in cache.
const benchElems = 1 << 16

// benchSource returns benchElems elements of dt as raw bytes.
func benchSource(b *testing.B, dt DType) []byte {
	src := make([]byte, benchElems*dt.Size())
	for i := range src {
		src[i] = byte(i * 7)
	}
	b.SetBytes(int64(len(src)))
	return src
}

// benchmarkDecode measures decoding throughput of one dtype, in bytes of
// raw input per second.
func benchmarkDecode(b *testing.B, dt DType) {
	src := benchSource(b, dt)
	dst := make([]float64, benchElems)
	for b.Loop() {
		decode(dst, src, dt, false)
	}
}

// benchmarkDecode32 is benchmarkDecode for the float32 decoders, which
// the comparison kernels read from.
func benchmarkDecode32(b *testing.B, dt DType) {
	src := benchSource(b, dt)
	dst := make([]float32, benchElems)
	for b.Loop() {
		decode32(dst, src, dt, false)
	}
}

func BenchmarkDecode32BFloat16(b *testing.B) { benchmarkDecode32(b, BFloat16) }
func BenchmarkDecode32Float16(b *testing.B)  { benchmarkDecode32(b, Float16) }

func BenchmarkDecodeFloat32(b *testing.B)  { benchmarkDecode(b, Float32) }
func BenchmarkDecodeBFloat16(b *testing.B) { benchmarkDecode(b, BFloat16) }
func BenchmarkDecodeFloat16(b *testing.B)  { benchmarkDecode(b, Float16) }
func BenchmarkDecodeFloat8(b *testing.B)   { benchmarkDecode(b, Float8E4M3FN) }
func BenchmarkDecodeInt64(b *testing.B)    { benchmarkDecode(b, Int64) }

// BenchmarkReadNPY reads a 1.2 MB float32 .npy file from the page cache
// through a Reader, as inspect does.
func BenchmarkReadNPY(b *testing.B) {
	ts, _, err := OpenFile(fixture("npy", "f4_big.npy"), Options{})
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]float64, 1<<17)
	b.SetBytes(ts[0].Size())
	for b.Loop() {
		r, err := ts[0].Open()
		if err != nil {
			b.Fatal(err)
		}
		for {
			_, err := r.Read(buf)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		r.Close()
	}
}
