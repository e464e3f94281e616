//go:build linux || darwin || freebsd

package loaders

import (
	"math"
	"path/filepath"
	"reflect"
	"sync/atomic"
	"syscall"
	"testing"
)

// TestHoldWithoutStat checks the read of a small file without asking its
// size: a file smaller than the guess is held whole, in a buffer of its
// own class, and described as OpenFile describes it; a file that fills
// the buffer, a bad header, a directory and a named pipe are left to the
// fstat way, with nothing held or counted.
func TestHoldWithoutStat(t *testing.T) {
	t.Parallel()
	var d deferral                    // one run's reading, its guess set by each case below
	small := fixture("npy", "f4.npy") // 176 bytes
	larger := fixture("corpus", "llama", "llama_input_lag", "graph", "step_000000", "params", "body.w1.weight.npy")
	fifo := filepath.Join(t.TempDir(), "pipe.npy")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	hold := func(path string) (*Tensor, bool, int64) {
		t.Helper()
		f, err := openData(path)
		if err != nil {
			t.Fatal(err)
		}
		var held atomic.Int64
		tt := new(Tensor)
		ok := holdWithoutStat(tt, f, path, &d, &held)
		if !ok {
			f.Close()
		}
		return tt, ok, held.Load()
	}

	// no file held yet: no guess
	if _, ok, _ := hold(small); ok {
		t.Error("held without a guess")
	}
	d.heldGuess.Store(4 * heldClass)
	tt, ok, held := hold(small)
	want, _, err := OpenFile(small, Options{})
	if err != nil {
		t.Fatal(err)
	}
	b := tt.data.held.Load()
	if !ok || held != 176 || b == nil || len(*b) != 176 || cap(*b) != heldClass ||
		tt.DType != want[0].DType || !reflect.DeepEqual(tt.Shape, want[0].Shape) || tt.data.file != small {
		t.Errorf("a file under the guess: held %v (%d bytes counted), %s %v; want it held in %d bytes, as OpenFile's %s %v",
			ok, held, tt.DType, tt.Shape, heldClass, want[0].DType, want[0].Shape)
	}
	got, gerr := tt.Values()
	exp, werr := want[0].Values()
	if gerr != nil || werr != nil || len(got) != len(exp) {
		t.Fatalf("values %v (%v), want %v (%v)", got, gerr, exp, werr)
	}
	for i := range got {
		if math.Float64bits(got[i]) != math.Float64bits(exp[i]) {
			t.Errorf("value %d: %v, want %v", i, got[i], exp[i])
		}
	}

	// a valid .npy of 140 bytes and 5 bytes more fills a buffer of 140:
	// what follows is unknown, and OpenFile refuses the file
	d.heldGuess.Store(140)
	if _, ok, held := hold(fixture("bad", "trailing_bytes.npy")); ok || held != 0 {
		t.Errorf("a file that fills the buffer: held %v, %d bytes counted; want it left to fstat", ok, held)
	}
	d.heldGuess.Store(heldClass) // 1,280 bytes fill a 512-byte buffer
	for _, c := range []struct{ what, path string }{
		{"a file over the guess", larger},
		{"a bad header", fixture("bad", "bad_magic.npy")},
		{"a directory", t.TempDir()},
		{"a named pipe", fifo},
	} {
		if _, ok, held := hold(c.path); ok || held != 0 {
			t.Errorf("%s: held %v, %d bytes counted; want it left to fstat", c.what, ok, held)
		}
	}
}
