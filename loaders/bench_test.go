package loaders

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
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

// smallRun writes a run of steps x perStep copies of a small numpy-written
// fixture (step_NNNNNN/grads/layer_NNNN.weight.npy) under dir, the shape
// of a run that dumps every tensor to a file of its own.
func smallRun(b *testing.B, dir string, steps, perStep int) {
	data, err := os.ReadFile(fixture("npy", "f4.npy"))
	if err != nil {
		b.Fatal(err)
	}
	for s := range steps {
		d := filepath.Join(dir, fmt.Sprintf("step_%06d", s), "grads")
		if err := os.MkdirAll(d, 0o755); err != nil {
			b.Fatal(err)
		}
		for t := range perStep {
			if err := os.WriteFile(filepath.Join(d, fmt.Sprintf("layer_%04d.weight.npy", t)), data, 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkListSmallFiles lists a run of 8 steps x 2,000 small files by
// path (LoadDeferred): the part of comparing many small files that comes
// before any file is opened.
func BenchmarkListSmallFiles(b *testing.B) {
	dir := b.TempDir()
	smallRun(b, dir, 8, 2000)
	for b.Loop() {
		r, err := LoadDeferred(dir, Options{})
		if err != nil || len(r.Entries) != 16000 {
			b.Fatalf("%v, %d entries", err, len(r.Entries))
		}
	}
}

// BenchmarkResolveSmallFiles reads one step of 2,000 small files listed by
// path, each opened once (Resolve), and releases them.
func BenchmarkResolveSmallFiles(b *testing.B) {
	dir := b.TempDir()
	smallRun(b, dir, 1, 2000)
	r, err := LoadDeferred(dir, Options{})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		es := make([]*Entry, len(r.Entries))
		for i, e := range r.Entries {
			c := *e
			t := *e.Tensor
			c.Tensor = &t
			es[i] = &c
		}
		for _, err := range Resolve(es) {
			if err != nil {
				b.Fatal(err)
			}
		}
		for _, e := range es {
			e.Release()
		}
	}
}
