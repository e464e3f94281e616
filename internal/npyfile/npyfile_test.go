package npyfile

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/x448/float16"
)

// TestMinifloat checks the reference decoder of the narrow floats against
// x448/float16 for every float16 pattern, and against the definitions'
// landmarks for float8 (OCP 8-bit floating point: e4m3fn's largest value
// 448 and NaN S.1111.111, e5m2's 57344 and ±Inf).
func TestMinifloat(t *testing.T) {
	t.Parallel()
	for i := range 1 << 16 {
		got, _ := Value("<f2", binary.LittleEndian.AppendUint16(nil, uint16(i)))
		want := float64(float16.Frombits(uint16(i)).Float32())
		if math.Float64bits(got) != math.Float64bits(want) && !(math.IsNaN(got) && math.IsNaN(want)) {
			t.Fatalf("float16 %#04x: %v, x448 %v", i, got, want)
		}
	}
	for _, tc := range []struct {
		descr string
		bits  byte
		want  float64
	}{
		{"|V1", 0x7E, 448}, {"|V1", 0x78, 256}, {"|V1", 0x01, 0x1p-9}, {"|V1", 0x38, 1},
		{"<f1", 0x7B, 57344}, {"<f1", 0x7C, math.Inf(1)}, {"<f1", 0xFC, math.Inf(-1)}, {"<f1", 0x01, 0x1p-16},
	} {
		if got, _ := Value(tc.descr, []byte{tc.bits}); got != tc.want {
			t.Errorf("%s %#02x: %v, want %v", tc.descr, tc.bits, got, tc.want)
		}
	}
	for _, nan := range [][2]any{{"|V1", byte(0x7F)}, {"|V1", byte(0xFF)}, {"<f1", byte(0x7D)}} {
		if got, _ := Value(nan[0].(string), []byte{nan[1].(byte)}); !math.IsNaN(got) {
			t.Errorf("%s %#02x: %v, want NaN", nan[0], nan[1], got)
		}
	}
}

// TestForge checks what Forge writes against the format specification:
// the preamble, a header that ends in '\n' with the data starting at a
// multiple of 64 bytes, and the data after it.
func TestForge(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "a.npy")
	data := []byte{1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0}
	if err := Forge(path, Array{Descr: ">u2", Shape: []int{2, 3}, Fortran: true, Data: data}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	hlen := int(binary.LittleEndian.Uint16(b[8:]))
	off := 10 + hlen
	want := "{'descr': '>u2', 'fortran_order': True, 'shape': (2, 3), }"
	switch {
	case string(b[:8]) != "\x93NUMPY\x01\x00":
		t.Errorf("preamble %q", b[:8])
	case off%64 != 0 || b[off-1] != '\n':
		t.Errorf("data at %d, header ending in %q", off, b[off-1])
	case string(bytes.TrimRight(b[10:off], " \n")) != want:
		t.Errorf("header %q, want %q", b[10:off], want)
	case !bytes.Equal(b[off:], data):
		t.Errorf("data %v, want %v", b[off:], data)
	}
}

// TestFortranOrder: the 2×3 array [[0 1 2] [3 4 5]] in column-major order
// is 0 3 1 4 2 5.
func TestFortranOrder(t *testing.T) {
	t.Parallel()
	got := FortranOrder([]int{2, 3}, 1, []byte{0, 1, 2, 3, 4, 5})
	if !bytes.Equal(got, []byte{0, 3, 1, 4, 2, 5}) {
		t.Errorf("%v", got)
	}
}
