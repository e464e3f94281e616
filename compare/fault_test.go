package compare

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/graphdiff/graphdiff/loaders"
	"github.com/graphdiff/graphdiff/tolerances"
)

// copyFixture copies a fixture into dir under name.
func copyFixture(t *testing.T, fixture, dir, name string) string {
	t.Helper()
	data, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestFileTruncatedWhileMapped: a file cut short after its header was read
// (a training job rewriting its dump in place) faults when its mapped data
// is read. The comparison and the update measurement each give an error
// naming that file, and the process goes on: no SIGBUS crash.
func TestFileTruncatedWhileMapped(t *testing.T) {
	t.Parallel()
	fixture := filepath.Join("..", "testdata", "npy", "f4_big.npy") // 300000 float32: mapped
	dir := t.TempDir()
	pathA := copyFixture(t, fixture, dir, "a.npy")
	pathB := copyFixture(t, fixture, dir, "b.npy")
	a, b := openOne(t, pathA), openOne(t, pathB)
	if !a.Mappable() || a.Len() < newEngine().mapMinElems {
		t.Fatalf("%s is not read through a map: the fault cannot be reached", fixture)
	}
	e := newEngine()
	e.chunkElems = 1 << 20 // one task maps the whole tensor
	e.mapped = func(m *loaders.Tensor) {
		if m == b {
			if err := os.Truncate(pathB, 4096); err != nil {
				t.Error(err)
			}
		}
	}
	check := func(what string, err error) {
		t.Helper()
		if err == nil {
			t.Fatalf("%s of a truncated file: no error", what)
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, pathB+": ") || !strings.Contains(msg, "changed while being read") {
			t.Errorf("%s: error %q does not name %s as changed", what, msg, pathB)
		}
	}
	out := e.pairs([]Job{{A: a, B: b, DType: loaders.Float32, Tolerance: tolerances.For(loaders.Float32)}}, 1, nil)
	check("comparison", out[0].Err)
	b = openOne(t, copyFixture(t, fixture, dir, "b.npy")) // whole again
	up := e.updates([]UpdateJob{{PrevA: a, CurA: a, PrevB: a, CurB: b}}, 1)
	check("update", up[0].Err)
}

// TestFileTruncatedWhileMappedWhole is TestFileTruncatedWhileMapped for
// tensors whose maps are kept whole (loaders.Entry.KeepMaps), as a
// comparison of runs keeps parameters' and gradients' maps: the fault
// names the file just the same.
func TestFileTruncatedWhileMappedWhole(t *testing.T) {
	fixture := filepath.Join("..", "testdata", "npy", "f4_big.npy")
	dir := t.TempDir()
	pathA := copyFixture(t, fixture, dir, "a.npy")
	pathB := copyFixture(t, fixture, dir, "b.npy")
	a, b := &loaders.Entry{Tensor: openOne(t, pathA)}, &loaders.Entry{Tensor: openOne(t, pathB)}
	a.KeepMaps()
	b.KeepMaps()
	defer a.ReleaseMaps()
	defer b.ReleaseMaps()
	e := newEngine()
	e.mapped = func(m *loaders.Tensor) {
		if m == b.Tensor {
			if err := os.Truncate(pathB, 4096); err != nil {
				t.Error(err)
			}
		}
	}
	out := e.pairs([]Job{{A: a.Tensor, B: b.Tensor, DType: loaders.Float32, Tolerance: tolerances.For(loaders.Float32)}}, 1, nil)
	if err := out[0].Err; err == nil || !strings.HasPrefix(err.Error(), pathB+": ") || !strings.Contains(err.Error(), "changed while being read") {
		t.Errorf("comparison of a truncated file kept whole: error %v, want one naming %s as changed", err, pathB)
	}
}
