package loaders

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"unsafe"

	"github.com/sbinet/npyio/npy"
)

type npyCase struct {
	File    string            `json:"file"`
	Descr   string            `json:"descr"`
	DType   string            `json:"dtype"`
	Shape   []int             `json:"shape"`
	Fortran bool              `json:"fortran_order"`
	Version [2]int            `json:"version"`
	Values  []json.RawMessage `json:"values"`
	Sum     *float64          `json:"sum"`
	Min     *float64          `json:"min"`
	Max     *float64          `json:"max"`
}

// TestNPYFixtures reads every array numpy wrote for testdata/npy (each
// dtype, both byte orders, Fortran order, format versions 1.0 to 3.0, 0-d
// and empty arrays) and checks dtype, shape and every value against what
// numpy recorded in expected.json.
func TestNPYFixtures(t *testing.T) {
	t.Parallel()
	var exp struct {
		Files []npyCase `json:"files"`
	}
	readJSON(t, fixture("npy", "expected.json"), &exp)
	if len(exp.Files) < 30 {
		t.Fatalf("only %d fixtures in expected.json", len(exp.Files))
	}
	for _, tc := range exp.Files {
		t.Run(tc.File, func(t *testing.T) { runNPYCase(t, tc) })
	}
}

func runNPYCase(t *testing.T, tc npyCase) {
	tn := openOne(t, fixture("npy", tc.File), Options{})
	if tn.DType.String() != tc.DType || tn.Descr != tc.Descr || tn.FortranOrder != tc.Fortran {
		t.Errorf("dtype %s descr %q fortran %v, want %s %q %v", tn.DType, tn.Descr, tn.FortranOrder, tc.DType, tc.Descr, tc.Fortran)
	}
	if !reflect.DeepEqual(tn.Shape, tc.Shape) && !(len(tn.Shape) == 0 && len(tc.Shape) == 0) {
		t.Errorf("shape %v, want %v", tn.Shape, tc.Shape)
	}
	if tn.Name != tc.File[:len(tc.File)-4] {
		t.Errorf("name %q", tn.Name)
	}
	got := readC(t, tn, 7) // an odd buffer size exercises partial reads
	if tc.Values == nil {
		sum, lo, hi := 0.0, math.Inf(1), math.Inf(-1)
		for _, v := range got {
			sum += v
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
		if sum != *tc.Sum || lo != *tc.Min || hi != *tc.Max {
			t.Errorf("sum %v min %v max %v, want %v %v %v", sum, lo, hi, *tc.Sum, *tc.Min, *tc.Max)
		}
		return
	}
	checkValues(t, got, expectedValues(t, tc.Values))
}

// TestNPYAgreesWithNpyio reads the plain numpy fixtures with npyio as an
// independent decoder and checks that both agree element for element.
func TestNPYAgreesWithNpyio(t *testing.T) {
	t.Parallel()
	cases := []struct {
		file string
		read func(f *os.File) ([]float64, error)
	}{
		{"f4.npy", readNpyio[float32]},
		{"f4_be.npy", readNpyio[float32]},
		{"f8.npy", readNpyio[float64]},
		{"f8_be.npy", readNpyio[float64]},
		{"i1.npy", readNpyio[int8]},
		{"i2.npy", readNpyio[int16]},
		{"i4_be.npy", readNpyio[int32]},
		{"i8.npy", readNpyio[int64]},
		{"u1.npy", readNpyio[uint8]},
		{"u2_be.npy", readNpyio[uint16]},
		{"u4.npy", readNpyio[uint32]},
		{"f4_2x3.npy", readNpyio[float32]},
		{"f4_big.npy", readNpyio[float32]},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			f, err := os.Open(fixture("npy", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			want, err := tc.read(f)
			if err != nil {
				t.Fatalf("npyio: %v", err)
			}
			got := readC(t, openOne(t, fixture("npy", tc.file), Options{}), 1<<10)
			checkValues(t, got, want)
		})
	}
}

func readNpyio[T float32 | float64 | int8 | int16 | int32 | int64 | uint8 | uint16 | uint32](f *os.File) ([]float64, error) {
	var v []T
	if err := npy.Read(f, &v); err != nil {
		return nil, err
	}
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out, nil
}

// TestOpenRange reads a large array in uneven ranges and checks that they
// join up to the whole.
func TestOpenRange(t *testing.T) {
	t.Parallel()
	tn := openOne(t, fixture("npy", "f4_big.npy"), Options{})
	whole := readC(t, tn, 4096)
	n := tn.Len()
	var joined []float64
	for first := int64(0); first < n; {
		count := min(n-first, 77_777)
		r, err := tn.OpenRange(first, count)
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]float64, 10_000)
		for {
			k, err := r.Read(buf)
			joined = append(joined, buf[:k]...)
			if err != nil {
				break
			}
		}
		r.Close()
		first += count
	}
	checkValues(t, joined, whole)
	if _, err := tn.OpenRange(n-1, 2); err == nil {
		t.Error("range past the end: no error")
	}
}

// TestIndex checks storage positions against numpy's index order for C and
// Fortran arrays.
func TestIndex(t *testing.T) {
	t.Parallel()
	c := &Tensor{Shape: []int{2, 3, 4}}
	f := &Tensor{Shape: []int{2, 3, 4}, FortranOrder: true}
	if got := c.Index(23); !reflect.DeepEqual(got, []int{1, 2, 3}) {
		t.Errorf("C index of 23 = %v", got)
	}
	if got := c.Index(5); !reflect.DeepEqual(got, []int{0, 1, 1}) {
		t.Errorf("C index of 5 = %v", got)
	}
	// Fortran: the first dimension varies fastest; position 1 is a[1,0,0],
	// position 2 is a[0,1,0].
	if got := f.Index(1); !reflect.DeepEqual(got, []int{1, 0, 0}) {
		t.Errorf("F index of 1 = %v", got)
	}
	if got := f.Index(2); !reflect.DeepEqual(got, []int{0, 1, 0}) {
		t.Errorf("F index of 2 = %v", got)
	}
	if got := c.CPosition([]int{1, 2, 3}); got != 23 {
		t.Errorf("C position = %d", got)
	}
	if got := (&Tensor{}).Index(0); len(got) != 0 {
		t.Errorf("0-d index = %v", got)
	}
}

// TestFastHeaderKeepsNothing reads headers in place from a buffer, as
// npyHeaderOf does for a held file, then overwrites the buffer, as Release
// and the next read do: the descr and shape read stay as they were.
func TestFastHeaderKeepsNothing(t *testing.T) {
	t.Parallel()
	for _, descr := range []string{"<f4", "<u8", ">i2"} { // common, and not (copied)
		buf := []byte("{'descr': '" + descr + "', 'fortran_order': False, 'shape': (3, 4), }\n")
		got, _, shape, ok := parseCanonical(unsafe.String(&buf[0], len(buf)))
		if !ok {
			t.Fatalf("%q: not read by the fast path", buf)
		}
		for i := range buf {
			buf[i] = 0xFF
		}
		if got != descr || !slices.Equal(shape, []int{3, 4}) {
			t.Errorf("after the buffer was reused: descr %q shape %v, want %q [3 4]", got, shape, descr)
		}
	}
}

// TestNumpyHeadersReadFast checks that every header numpy wrote for the
// fixtures (all plain dtypes, orders, versions and shapes from () to 3-d)
// takes the fast path, which is what keeps thousands of small files cheap,
// and that the fast path refuses what it must leave to the literal parser.
func TestNumpyHeadersReadFast(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(fixture("npy", "*.npy"))
	if err != nil || len(files) < 30 {
		t.Fatalf("fixtures: %d, %v", len(files), err)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		start, n := 10, int(binary.LittleEndian.Uint16(data[8:]))
		if data[6] != 1 {
			start, n = 12, int(binary.LittleEndian.Uint32(data[8:]))
		}
		if _, _, _, ok := parseCanonical(string(data[start : start+n])); !ok {
			t.Errorf("%s: header %q not read by the fast path", file, data[start:start+n])
		}
	}
	for _, text := range []string{
		"{'descr': '<f4', 'fortran_order': False, 'shape': (5), }\n",           // not a tuple
		"{'descr': '<f4', 'fortran_order': False, 'shape': (05,), }\n",         // leading zero
		"{'descr': '<f4', 'fortran_order': False, 'shape': (1_0,), }\n",        // underscore
		"{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }\n",         // negative
		"{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1, }\n",  // extra key
		"{'descr': '<f4', 'shape': (1,), 'fortran_order': False, }\n",          // key order
		"{'descr': '<f\\x34', 'fortran_order': False, 'shape': (1,), }\n",      // escape
		"{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }\n", // structured
		"{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }\t\n",        // tab
		"{'descr': '<f4', 'fortran_order': False, 'shape': (9999999999999999999,), }\n",
	} {
		if _, _, _, ok := parseCanonical(text); ok {
			t.Errorf("fast path read %q", text)
		}
	}
}
