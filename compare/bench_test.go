package compare

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
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
	kern := machineKernels() // the kernels Pairs runs
	for b.Loop() {
		c := newAcc(kern, tolerances.For(loaders.Float32), ulpKeyFor(loaders.Float32), false, true, &h, 0)
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
	kern := machineKernels() // the kernels Pairs runs
	for b.Loop() {
		c := newAcc(kern, tolerances.For(d), ulpKeyFor(d), false, true, &h, 0)
		c.add16(ra, rb, &loaders.Tensor{DType: d}, mode)
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
	kern := machineKernels() // the kernels Pairs runs
	for b.Loop() {
		c := newAcc(kern, tolerances.For(loaders.BFloat16), ulpKeyFor(loaders.BFloat16), false, true, &h, 0)
		c.addF32(va, vb, ulpBFloat16|ulpRoundA)
	}
}

// BenchmarkKernelMixedInPlace is BenchmarkKernelMixed with the bfloat16
// side read in place (addMixed), as a comparison of mapped files does.
func BenchmarkKernelMixedInPlace(b *testing.B) {
	va, _ := benchPair(pairBufElems)
	benchmarkMixedInPlace(b, va, halfBytes(va, false))
}

// BenchmarkKernelMixedEqualInPlace is BenchmarkKernelMixedInPlace on
// float32 values that are bfloat16 (a bfloat16 run saved as float32)
// against bfloat16 words, every 1000th pair different: the fast path
// reading the bfloat16 side in place.
func BenchmarkKernelMixedEqualInPlace(b *testing.B) {
	a32, b32 := benchPair(pairBufElems)
	va := make([]float32, len(a32))
	(&loaders.Tensor{DType: loaders.BFloat16}).DecodeFloat32(va, halfBytes(a32, false))
	benchmarkMixedInPlace(b, va, halfBytes(b32, false))
}

// benchmarkMixedInPlace measures addMixed on float32 values v against
// bfloat16 bytes raw, in bytes of both inputs per second.
func benchmarkMixedInPlace(b *testing.B, v []float32, raw []byte) {
	half, buf := &loaders.Tensor{DType: loaders.BFloat16}, make([]float32, maxWindow)
	var h errorHistogram
	b.SetBytes(int64(6 * len(v)))
	kern := machineKernels() // the kernels Pairs runs
	for b.Loop() {
		c := newAcc(kern, tolerances.For(loaders.BFloat16), ulpKeyFor(loaders.BFloat16), false, true, &h, 0)
		c.addMixed(v, raw, half, ulpBFloat16|ulpRoundA, buf)
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
	kern := machineKernels() // the kernels Pairs runs
	for b.Loop() {
		c := newAcc(kern, tolerances.For(loaders.Float32), ulpKeyFor(loaders.Float32), false, true, &h, 0)
		c.addReal(va, vb)
	}
}

// benchmarkRuns measures loading two runs and comparing every pair they
// both hold (what `graphdiff compare` does before judging, diagnosis and
// reports), in bytes of tensor data of both runs per second.
func benchmarkRuns(b *testing.B, pathA, pathB string) {
	var size int64
	for b.Loop() {
		ra, rb := loadFiles(b, pathA, pathB)
		r := compareRuns(b, newEngine(), ra, rb, 0, 0)
		if size == 0 {
			for _, p := range r {
				if p.Metrics == nil {
					b.Fatalf("%s: not compared (%v)", p.Name, p.Err)
				}
				size += p.A.Size() + p.B.Size()
			}
		}
	}
	b.SetBytes(size)
}

// BenchmarkRunsFixture compares the committed eager and graphed MLP runs
// (61 small tensors in 4 steps).
func BenchmarkRunsFixture(b *testing.B) {
	benchmarkRuns(b, fixture("runs", "mlp_fp32", "eager"), fixture("runs", "mlp_fp32", "graph"))
}

// benchDir returns the directory of bench/make_files.py's inputs, named by
// GRAPHDIFF_BENCH_DIR, or skips the benchmark.
func benchDir(b *testing.B, parts ...string) string {
	dir := os.Getenv("GRAPHDIFF_BENCH_DIR")
	if dir == "" {
		b.Skip("GRAPHDIFF_BENCH_DIR not set: /usr/bin/python3 bench/make_files.py DIR [MiB] writes the inputs")
	}
	p := filepath.Join(append([]string{dir}, parts...)...)
	if _, err := os.Stat(p); err != nil {
		b.Skip(err)
	}
	return p
}

// benchMiB is the size of the large inputs (bench/make_files.py's MiB).
func benchMiB() string {
	if m := os.Getenv("GRAPHDIFF_BENCH_MIB"); m != "" {
		return m
	}
	return "1024"
}

// benchmarkLarge is benchmarkRuns on two large single-tensor files of
// make_files.py, named without their size suffix; the data are
// memory-mapped, so the page cache must hold them for a fair figure.
func benchmarkLarge(b *testing.B, nameA, nameB string) {
	benchmarkRuns(b, benchDir(b, nameA+"_"+benchMiB()+".npy"), benchDir(b, nameB+"_"+benchMiB()+".npy"))
}

// BenchmarkRunsLarge* compare two large single-tensor files.
func BenchmarkRunsLargeFloat32(b *testing.B) {
	benchmarkLarge(b, "f32_a", "f32_b")
}

func BenchmarkRunsLargeFloat32AllDiffer(b *testing.B) {
	benchmarkLarge(b, "f32_a", "f32_ulp")
}

func BenchmarkRunsLargeBFloat16(b *testing.B) {
	benchmarkLarge(b, "bf16_a", "bf16_b")
}

func BenchmarkRunsLargeFloat16(b *testing.B) {
	benchmarkLarge(b, "f16_a", "f16_b")
}

func BenchmarkRunsLargeMixed(b *testing.B) {
	benchmarkLarge(b, "f32_a", "bf16_b")
}

func BenchmarkRunsLargeMixedEqual(b *testing.B) {
	benchmarkLarge(b, "f32bf_a", "bf16_b")
}

// BenchmarkRunsSmallFiles compares two runs of 8 steps × 2000 float32
// tensors of 1024 elements.
func BenchmarkRunsSmallFiles(b *testing.B) {
	benchmarkRuns(b, benchDir(b, "small", "a"), benchDir(b, "small", "b"))
}

// roundingElems is the size of BenchmarkKernelRounding's pairs: 16 Mi
// float32 elements a side, four chunks.
const roundingElems = 1 << 24

// roundingCase is one pair of BenchmarkKernelRounding: a reference side a
// and a side b that differs from it by rounding where the case says.
type roundingCase struct {
	name string
	// b returns b from a
	b func(a []float32) []float32
	// mode is the ULP mode of the pair; inPlace folds b as bfloat16 words
	// with addMixed, as a mapped bfloat16 file is read
	mode    ulpMode
	inPlace bool
}

// oneULPAt returns a with every element that pick chooses one unit in the
// last place away from zero.
func oneULPAt(a []float32, pick func(i int) bool) []float32 {
	b := slices.Clone(a)
	for i := range b {
		if pick(i) {
			b[i] = math.Float32frombits(math.Float32bits(b[i]) + 1)
		}
	}
	return b
}

// randomFraction returns a pick of about the fraction p of positions,
// at random.
func randomFraction(p float64) func(i int) bool {
	rng := rand.New(rand.NewPCG(5, 8))
	return func(int) bool { return rng.Float64() < p }
}

// bfloat16Rounding returns a rounded to bfloat16, as float32.
func bfloat16Rounding(a []float32) []float32 {
	b := make([]float32, len(a))
	for i, x := range a {
		b[i] = math.Float32frombits(uint32(bfloat16Bits(float64(x))) << 16)
	}
	return b
}

var roundingCases = []roundingCase{
	{name: "equal", b: slices.Clone[[]float32], mode: ulpFloat32},
	{name: "all_one_ulp", b: func(a []float32) []float32 { return oneULPAt(a, func(int) bool { return true }) }, mode: ulpFloat32},
	{name: "10pct_one_ulp", b: func(a []float32) []float32 { return oneULPAt(a, randomFraction(0.1)) }, mode: ulpFloat32},
	{name: "0.1pct_one_ulp", b: func(a []float32) []float32 { return oneULPAt(a, randomFraction(0.001)) }, mode: ulpFloat32},
	{name: "f32_vs_bf16", b: bfloat16Rounding, mode: ulpBFloat16 | ulpRoundA},
	{name: "f32_vs_bf16_in_place", b: bfloat16Rounding, mode: ulpBFloat16 | ulpRoundA, inPlace: true},
}

// BenchmarkKernelRounding measures the float32 kernel, one core, on pairs
// of 16 Mi elements that differ by rounding: equal, every element one ULP
// apart, 10% and 0.1% of them at random positions, and float32 values
// against their bfloat16 rounding (as float32, and as bfloat16 words read
// in place). It folds them as a comparison does: an accumulator per chunk
// of chunkElems, pieces of pairBufElems. It reports ns/elem; the cost of
// a case is its ns/elem over the equal case's.
func BenchmarkKernelRounding(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	a := make([]float32, roundingElems)
	for i := range a {
		a[i] = float32(rng.NormFloat64())
	}
	for _, rc := range roundingCases {
		b.Run(rc.name, func(b *testing.B) {
			vb := rc.b(a)
			var raw []byte
			if rc.inPlace {
				raw = halfBytes(vb, false)
			}
			benchmarkRounding(b, a, vb, raw, rc.mode)
		})
	}
}

// benchmarkRounding folds a against b (or against the bfloat16 words raw,
// where given) in chunks and pieces, as a comparison does.
func benchmarkRounding(b *testing.B, va, vb []float32, raw []byte, mode ulpMode) {
	half, buf := &loaders.Tensor{DType: loaders.BFloat16}, make([]float32, maxWindow)
	d := loaders.Float32
	if mode != ulpFloat32 {
		d = loaders.BFloat16
	}
	tol, key := tolerances.For(d), ulpKeyFor(d)
	kern := machineKernels() // the kernels Pairs runs
	var h errorHistogram
	b.SetBytes(int64(8 * len(va)))
	for b.Loop() {
		for lo := 0; lo < len(va); lo += chunkElems {
			h.reset()
			c := newAcc(kern, tol, key, false, true, &h, int64(lo))
			for p := lo; p < lo+chunkElems && p < len(va); p += pairBufElems {
				hi := min(p+pairBufElems, len(va))
				if raw != nil {
					c.addMixed(va[p:hi], raw[2*p:2*hi], half, mode, buf)
				} else {
					c.addF32(va[p:hi], vb[p:hi], mode)
				}
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(va)), "ns/elem")
}
