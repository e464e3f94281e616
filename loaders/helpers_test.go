package loaders

import (
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// fixture returns the path of a file under the repository's testdata.
func fixture(parts ...string) string {
	return filepath.Join(append([]string{"..", "testdata"}, parts...)...)
}

// readJSON decodes a fixture's JSON description, keeping numbers exact.
func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// expectedValues turns the fixture encoding of values (numbers, "nan",
// "inf", "-inf", [re, im] pairs) into float64s, two per complex element.
func expectedValues(t *testing.T, raw []json.RawMessage) []float64 {
	t.Helper()
	var out []float64
	for _, r := range raw {
		var pair []json.RawMessage
		if json.Unmarshal(r, &pair) == nil {
			out = append(out, expectedValues(t, pair)...)
			continue
		}
		var s string
		if json.Unmarshal(r, &s) == nil {
			switch s {
			case "nan":
				out = append(out, math.NaN())
			case "inf":
				out = append(out, math.Inf(1))
			case "-inf":
				out = append(out, math.Inf(-1))
			default:
				t.Fatalf("unexpected value %q", s)
			}
			continue
		}
		var n json.Number
		if err := json.Unmarshal(r, &n); err != nil {
			t.Fatalf("value %s: %v", r, err)
		}
		f, err := n.Float64()
		if err != nil {
			t.Fatalf("value %s: %v", n, err)
		}
		out = append(out, f)
	}
	return out
}

// readC decodes every element of a tensor and returns the values in C
// order (two per complex element), whatever the storage order.
func readC(t *testing.T, tn *Tensor, bufLen int) []float64 {
	t.Helper()
	r, err := tn.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	comps := tn.DType.Components()
	out := make([]float64, tn.Len()*int64(comps))
	buf := make([]float64, bufLen)
	pos := int64(0)
	for {
		n, err := r.Read(buf)
		for i := 0; i < n; i += comps {
			c := tn.CPosition(tn.Index(pos))
			copy(out[c*int64(comps):], buf[i:i+comps])
			pos++
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if pos != tn.Len() {
		t.Fatalf("read %d elements, want %d", pos, tn.Len())
	}
	return out
}

// sameValue reports whether two decoded values are the same: bitwise for
// numbers (so -0 differs from +0), and both NaN for NaN.
func sameValue(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return math.Float64bits(a) == math.Float64bits(b)
}

func checkValues(t *testing.T, got, want []float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d values, want %d", len(got), len(want))
	}
	for i := range want {
		if !sameValue(got[i], want[i]) {
			t.Errorf("value %d = %v (bits %#x), want %v (bits %#x)", i, got[i], math.Float64bits(got[i]), want[i], math.Float64bits(want[i]))
		}
	}
}

// openOne opens a file that must hold exactly one readable tensor.
func openOne(t *testing.T, path string, opts Options) *Tensor {
	t.Helper()
	ts, errs, err := OpenFile(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(errs) > 0 || len(ts) != 1 {
		t.Fatalf("%s: %d tensors, errors %v", path, len(ts), errs)
	}
	return ts[0]
}
