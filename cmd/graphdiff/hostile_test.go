//go:build linux || darwin || freebsd

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// hostileRun runs a command against a hostile input and checks what a user
// sees: the exit status, a message naming want, within 5 s and without
// allocating 200 MB. Its callers are not parallel: the allocation is read
// from the process's counters, which other tests would add to.
func hostileRun(t *testing.T, code int, want string, args ...string) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	done := make(chan [3]string, 1)
	go func() {
		c, stdout, stderr := run(args...)
		done <- [3]string{fmt.Sprint(c), stdout, stderr}
	}()
	select {
	case r := <-done:
		runtime.ReadMemStats(&after)
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("%v took %v", args, took)
		}
		if r[0] != fmt.Sprint(code) || !strings.Contains(r[1]+r[2], want) {
			t.Errorf("%v: exit %s, want %d with %q:\n%s%s", args, r[0], code, want, r[1], r[2])
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 200<<20 {
			t.Errorf("%v allocated %d MiB", args, alloc>>20)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("%v hangs", args)
	}
}

// TestNamedPipes: a named pipe given as a file, or sitting in a run
// directory under a tensor's, an event file's or a curve's name, is
// refused without being opened for a blocking read (which would wait for a
// writer forever).
func TestNamedPipes(t *testing.T) {
	dir := t.TempDir()
	fifo := func(path string) string {
		if err := syscall.Mkfifo(path, 0o644); err != nil {
			t.Skipf("mkfifo: %v", err)
		}
		return path
	}
	hostileRun(t, 2, "x.npy", "inspect", fifo(filepath.Join(dir, "x.npy")))
	hostileRun(t, 2, "loss.csv", "curve", fifo(filepath.Join(dir, "loss.csv")), fifo(filepath.Join(dir, "loss2.csv")))
	run := filepath.Join(dir, "run", "step_000000")
	if err := os.MkdirAll(run, 0o755); err != nil {
		t.Fatal(err)
	}
	fifo(filepath.Join(run, "w.npy"))
	fifo(filepath.Join(run, "events.out.tfevents.fifo"))
	fifo(filepath.Join(run, "pytorch_model.bin")) // a .bin is read where it is a zip: a pipe is not opened to find out
	hostileRun(t, 2, "not a regular file", "inspect", filepath.Join(dir, "run"))
	hostileRun(t, 2, "not a regular file", "compare", filepath.Join(dir, "run"), filepath.Join(dir, "run"))
}

// TestSymlinkDAG: a run directory whose 30 levels each link twice to the
// next (2^30 paths to the bottom) is walked in the time of its 31
// directories: each directory once, the second link reported.
func TestSymlinkDAG(t *testing.T) {
	root := filepath.Join(t.TempDir(), "run")
	const levels = 30
	for i := levels; i >= 0; i-- {
		d := filepath.Join(root, fmt.Sprintf("level%02d", i))
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if i < levels {
			for _, l := range []string{"a", "b"} {
				if err := os.Symlink(filepath.Join("..", fmt.Sprintf("level%02d", i+1)), filepath.Join(d, l)); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	data, err := os.ReadFile("../../testdata/npy/f4.npy")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, fmt.Sprintf("level%02d", levels), "w.npy"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	hostileRun(t, 2, "walked once", "inspect", root)
}

// TestLargeHostileInputs writes the hostile inputs too big to commit with
// testdata/gen/hostile_large.py (a safetensors header of a million
// tensors, a shape of ten million dimensions, 99 MiB of metadata, a CSV
// curve of ten million columns and one of a 200 MB line) and checks that
// each is refused (exit 2, naming the file) in under 5 s and 200 MB.
func TestLargeHostileInputs(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 400 MB")
	}
	py := numpyPython(t)
	dir := t.TempDir()
	if out, err := exec.Command(py, "../../testdata/gen/hostile_large.py", dir).CombinedOutput(); err != nil {
		t.Fatalf("hostile_large.py: %v\n%s", err, out)
	}
	for _, name := range []string{"st_million_tensors.safetensors", "st_huge_dims.safetensors", "st_huge_metadata.safetensors"} {
		hostileRun(t, 2, name, "inspect", filepath.Join(dir, name))
	}
	for _, name := range []string{"curve_wide.csv", "curve_long_line.csv"} {
		p := filepath.Join(dir, name)
		hostileRun(t, 2, name, "curve", p, p)
	}
}

// TestExpandedView reads a torch.save view that repeats a 64-byte storage
// as 2^28 float32 elements (stride 0, as expand() makes): its statistics
// are right, and reading it streams a window of the storage instead of
// gathering 1 GiB. Not parallel, as hostileRun's callers, but in a test
// binary of its own under the race detector (withoutRace).
func TestExpandedView(t *testing.T) {
	if raceDetector {
		t.Parallel()
		withoutRace(t)
		return
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	code, stdout, stderr := run("inspect", "--format", "json", "../../testdata/pt_views/expand_1gib.pt")
	runtime.ReadMemStats(&after)
	if code != 0 || !strings.Contains(stdout, `"min": 0.5`) || !strings.Contains(stdout, `"max": 0.5`) || !strings.Contains(stdout, `16384`) {
		t.Errorf("exit %d\n%s%s", code, stdout, stderr)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 200<<20 {
		t.Errorf("allocated %d MiB reading a view of a 64-byte storage", alloc>>20)
	}
}

// withoutRace runs the calling test alone, in this package's test binary
// built without the race detector, and takes its verdict: reading the
// 2^28 elements of TestExpandedView, one goroutine's work with nothing for
// the detector to find, takes 12 times as long under it.
func withoutRace(t *testing.T) {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "graphdiff.test")
	if out, err := exec.Command("go", "test", "-c", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go test -c: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "-test.run=^"+t.Name()+"$", "-test.v").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Fatalf("without the race detector: %v\n%s", err, out)
	}
}
