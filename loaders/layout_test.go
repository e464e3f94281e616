package loaders

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/graphdiff/graphdiff/internal/npyfile"
)

// layoutDTypes are the dtypes an .npy file holds, with numpy's type code
// (ml_dtypes' for bfloat16 and float8) and the options that read it.
var layoutDTypes = []struct {
	dt   DType
	code string
	opts Options
}{
	{Bool, "b1", Options{}}, {Int8, "i1", Options{}}, {Uint8, "u1", Options{}},
	{Int16, "i2", Options{}}, {Uint16, "u2", Options{}}, {Int32, "i4", Options{}}, {Uint32, "u4", Options{}},
	{Int64, "i8", Options{}}, {Uint64, "u8", Options{}},
	{Float16, "f2", Options{}}, {BFloat16, "V2", Options{}}, {Float32, "f4", Options{}}, {Float64, "f8", Options{}},
	{Complex64, "c8", Options{}}, {Complex128, "c16", Options{}},
	{Float8E4M3FN, "V1", Options{V1: Float8E4M3FN}}, {Float8E5M2, "f1", Options{}},
}

// layoutShapes are the shapes TestReadEveryLayout writes: 0-d, empty in
// every position, one element, and up to three dimensions.
var layoutShapes = [][]int{{}, {0}, {1}, {7}, {0, 5}, {3, 0}, {2, 3}, {3, 1, 4}}

// layoutArray is an array TestReadEveryLayout writes: the descr, and its
// elements in storage order, little-endian (whatever the file's byte
// order) and in the file's byte order.
type layoutArray struct {
	descr       string
	size, parts int // element size, and parts with their own byte order (2 for complex)
	little, raw []byte
	c           []byte // the elements in C order, little-endian
}

// newLayoutArray makes the elements of an array of n elements of the
// dtype with type code code: leading bit patterns that sit at the edges
// of every format (0, the sign bit alone, all ones, all but the sign,
// 1), then random ones (every float8 and float16 class turns up: NaN,
// ±Inf, subnormals, −0), bool as 0 and 1.
func newLayoutArray(code string, big, fortran bool, shape []int, rng *rand.Rand) layoutArray {
	a := layoutArray{descr: "<" + code}
	a.size = npyfile.Size(a.descr)
	if a.size == 1 {
		a.descr = "|" + code
		if code == "f1" {
			a.descr = "<f1" // ml_dtypes' float8_e5m2
		}
	}
	a.parts = 1
	if code == "c8" || code == "c16" {
		a.parts = 2
	}
	n := 1
	for _, d := range shape {
		n *= d
	}
	part := a.size / a.parts
	edges := []uint64{0, 1 << (8*part - 1), ^uint64(0), ^uint64(0) >> (65 - 8*part), 1}
	for i := range n * a.parts {
		v := rng.Uint64()
		if i < len(edges) {
			v = edges[i]
		}
		if code == "b1" {
			v &= 1
		}
		a.c = append(a.c, binary.LittleEndian.AppendUint64(nil, v)[:part]...)
	}
	a.little = a.c
	if fortran {
		a.little = npyfile.FortranOrder(shape, a.size, a.c)
	}
	a.raw = a.little
	if big && a.size > 1 {
		a.raw, a.descr = npyfile.Swap(a.little, part), ">"+code
	}
	return a
}

// values decodes elements (little-endian) with the reference decoder:
// one value per part.
func (a layoutArray) values(elems []byte) []float64 {
	var out []float64
	little := "<" + a.descr[1:]
	for i := 0; i+a.size <= len(elems); i += a.size {
		re, im := npyfile.Value(little, elems[i:i+a.size])
		out = append(out, re)
		if a.parts == 2 {
			out = append(out, im)
		}
	}
	return out
}

// TestReadEveryLayout writes an array of every dtype an .npy file holds,
// in both byte orders, both storage orders and every shape class (0-d,
// empty, 1 to 3 dimensions), through both writers of internal/npyfile
// (npyio, whose data is often unaligned, and the format-spec forger), and
// reads it back through every read path: Reader.Read (float64) with
// buffers of one, seven and 4096 elements, ReadFloat32 where the dtype's
// values are all float32, ReadBits64 for 64-bit integers, OpenRange,
// DecodeFloat32, a Mapper's bytes (and float32 in place), the bytes held
// by a deferred run's Resolve, and C order through Index. Every path gives
// the values written, bit for bit (NaN for NaN), against the reference
// decoder of internal/npyfile.
func TestReadEveryLayout(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	dir := t.TempDir()
	files := 0
	for _, ld := range layoutDTypes {
		for _, big := range []bool{false, true} {
			if big && ld.dt.Size() == 1 {
				continue
			}
			for _, fortran := range []bool{false, true} {
				for _, shape := range layoutShapes {
					a := newLayoutArray(ld.code, big, fortran, shape, rng)
					for _, forge := range []bool{false, true} {
						files++
						name := fmt.Sprintf("%s_big%v_fortran%v_%v_forge%v", ld.dt, big, fortran, FormatShape(shape), forge)
						sub := filepath.Join(dir, fmt.Sprint(files))
						if err := os.Mkdir(sub, 0o755); err != nil {
							t.Fatal(err)
						}
						path := filepath.Join(sub, "t.npy")
						write := npyfile.Write
						if forge {
							write = npyfile.Forge
						}
						if err := write(path, npyfile.Array{Descr: a.descr, Shape: shape, Fortran: fortran, Data: a.raw}); err != nil {
							t.Fatal(err)
						}
						t.Run(name, func(t *testing.T) { checkLayout(t, path, ld.dt, ld.opts, a, shape, big, fortran) })
					}
				}
			}
		}
	}
	if files < 500 {
		t.Errorf("%d files written", files)
	}
}

// checkLayout reads the file at path back through every read path.
func checkLayout(t *testing.T, path string, dt DType, opts Options, a layoutArray, shape []int, big, fortran bool) {
	tn := openOne(t, path, opts)
	if tn.DType != dt || !slices.Equal(tn.Shape, shape) || tn.FortranOrder != fortran || tn.BigEndian != (big && a.size > 1) {
		t.Fatalf("read as %s %v fortran %v big-endian %v", tn.DType, tn.Shape, tn.FortranOrder, tn.BigEndian)
	}
	want := a.values(a.little)
	n := tn.Len()
	for _, elems := range []int{1, 7, 4096} {
		checkValues(t, readAll(t, tn, elems*a.parts), want)
	}
	if n >= 2 {
		first, count := n/3, n-n/3-1
		r, err := tn.OpenRange(first, count)
		if err != nil {
			t.Fatal(err)
		}
		checkValues(t, drain(t, r, 5*a.parts), want[first*int64(a.parts):(first+count)*int64(a.parts)])
		r.Close()
	}
	checkValues(t, readC(t, tn, 3*a.parts), a.values(a.c))
	if dt.Float32Exact() {
		checkValues(t, widen(readFloat32(t, tn, 5)), want)
		dec := make([]float32, n)
		tn.DecodeFloat32(dec, a.raw)
		checkValues(t, widen(dec), want)
	}
	if dt == Int64 || dt == Uint64 {
		checkBits(t, tn, a.little)
	}
	checkMapped(t, tn, a)
	checkHeld(t, filepath.Dir(path), opts, a, want)
}

// readAll reads every value of tn through Reader.Read, bufLen at a time.
func readAll(t *testing.T, tn *Tensor, bufLen int) []float64 {
	t.Helper()
	r, err := tn.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	return drain(t, r, bufLen)
}

// drain reads r to its end, bufLen values at a time.
func drain(t *testing.T, r *Reader, bufLen int) []float64 {
	t.Helper()
	out := []float64{}
	buf := make([]float64, bufLen)
	for {
		k, err := r.Read(buf)
		out = append(out, buf[:k]...)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

func widen(v []float32) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

// checkBits reads a 64-bit integer tensor with ReadBits64 and checks
// every integer exactly.
func checkBits(t *testing.T, tn *Tensor, little []byte) {
	t.Helper()
	r, err := tn.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var got []uint64
	buf := make([]uint64, 3)
	for {
		k, err := r.ReadBits64(buf)
		got = append(got, buf[:k]...)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(got) != len(little)/8 {
		t.Fatalf("ReadBits64: %d integers, want %d", len(got), len(little)/8)
	}
	for i, v := range got {
		if w := binary.LittleEndian.Uint64(little[8*i:]); v != w {
			t.Errorf("ReadBits64 %d: %#x, want %#x", i, v, w)
		}
	}
}

// checkMapped maps the tensor's data and checks its bytes, and float32
// values in place where the tensor allows.
func checkMapped(t *testing.T, tn *Tensor, a layoutArray) {
	t.Helper()
	if !tn.Mappable() {
		t.Fatal("an .npy file's data is not mappable")
	}
	m, err := tn.NewMapper()
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	b, release, err := m.Bytes(0, tn.Len())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, a.raw) {
		t.Errorf("mapped bytes % x, want % x", b, a.raw)
	}
	release()
	if tn.Float32Native() {
		v, release, err := m.Float32(0, tn.Len())
		if err != nil {
			t.Fatal(err)
		}
		checkValues(t, widen(v), a.values(a.little))
		release()
	}
}

// checkHeld loads the directory dir (holding the file alone) deferred,
// resolves it, and checks the bytes Resolve holds and the values read
// from them.
func checkHeld(t *testing.T, dir string, opts Options, a layoutArray, want []float64) {
	t.Helper()
	run, err := LoadDeferred(dir, opts)
	if err != nil || len(run.Entries) != 1 {
		t.Fatalf("LoadDeferred: %v, %d entries", err, len(run.Entries))
	}
	e := run.Entries[0]
	if errs := Resolve(run.Entries); errs[0] != nil {
		t.Fatal(errs[0])
	}
	defer e.Release()
	if !e.Held() {
		t.Fatal("a small file's data is not held")
	}
	b, ok := e.Tensor.HeldBytes(0, e.Tensor.Len())
	if !ok || !bytes.Equal(b, a.raw) {
		t.Errorf("held bytes % x (%v), want % x", b, ok, a.raw)
	}
	if v, ok := e.Tensor.HeldFloat32(0, e.Tensor.Len()); ok {
		checkValues(t, widen(v), want)
	}
	checkValues(t, readAll(t, e.Tensor, 4*a.parts), want)
}
