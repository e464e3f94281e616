//go:build unix

// These tests stage faults with POSIX modes, user nobody, /dev/full and
// SIGINT: Unix only.

package main

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// faultDirEnv names the directory a test re-run as an unprivileged user
// works in.
const faultDirEnv = "GRAPHDIFF_FAULT_DIR"

// unprivileged runs body on a scratch directory holding copies of the fp32
// eager and graph runs (DIR/eager, DIR/graph). Permission faults cannot be
// staged for root, who reads and writes anything, so under root the test
// binary runs this one test again as user nobody (uid 65534) on the same
// directory, and its verdict is this test's.
func unprivileged(t *testing.T, body func(t *testing.T, dir string)) {
	if dir := os.Getenv(faultDirEnv); dir != "" {
		body(t, dir)
		return
	}
	dir, err := os.MkdirTemp("", "graphdiff-fault-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error { os.Chmod(p, 0o777); return nil })
		os.RemoveAll(dir)
	})
	for _, run := range []struct{ src, dst string }{{eagerRun, "eager"}, {graphRun, "graph"}} {
		if err := os.CopyFS(filepath.Join(dir, run.dst), os.DirFS(run.src)); err != nil {
			t.Fatal(err)
		}
	}
	if os.Geteuid() != 0 {
		body(t, dir)
		return
	}
	// nobody's own, so that nobody can change its modes
	if err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, 65534, 65534)
	}); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "graphdiff.test")
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^"+t.Name()+"$", "-test.v")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), faultDirEnv+"="+dir, "TMPDIR="+dir, "HOME="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("as user nobody: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Fatalf("as user nobody, the test did not pass:\n%s", out)
	}
	t.Logf("ran as user nobody:\n%s", out)
}

// TestUnreadableDirectory makes one step directory of the graph run
// unreadable: every other pair is still compared, the verdict is error,
// and the report names the directory and its step's tensors.
func TestUnreadableDirectory(t *testing.T) {
	t.Parallel()
	unprivileged(t, func(t *testing.T, dir string) {
		step := filepath.Join(dir, "graph", "step_000002")
		if err := os.Chmod(step, 0); err != nil {
			t.Fatal(err)
		}
		defer os.Chmod(step, 0o777)
		code, stdout, stderr := run("compare", "--format", "json", filepath.Join(dir, "eager"), filepath.Join(dir, "graph"))
		var doc struct {
			Verdict string
			Summary map[string]int
			Tensors []struct {
				Name, Status string
				Step         int
			}
			Errors []struct{ Path, Message string }
		}
		if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
			t.Fatalf("%v: %s", err, stderr)
		}
		if code != 2 || doc.Verdict != "error" {
			t.Errorf("exit %d, verdict %s", code, doc.Verdict)
		}
		if len(doc.Errors) != 1 || doc.Errors[0].Path != step || !strings.Contains(doc.Errors[0].Message, "permission denied") {
			t.Errorf("errors %+v", doc.Errors)
		}
		for _, tr := range doc.Tensors {
			want := "match"
			if tr.Step == 2 {
				want = "missing"
			}
			if tr.Status != want {
				t.Errorf("step %d %s: %s, want %s", tr.Step, tr.Name, tr.Status, want)
			}
		}
		if doc.Summary["match"] == 0 || doc.Summary["missing"] == 0 {
			t.Errorf("summary %v", doc.Summary)
		}
	})
}

// TestReadOnlyReportTarget asks for one report in a read-only directory and
// one in a writable one: exit status 2 before anything is compared, with a
// message naming the first, nothing left in the read-only directory, and
// neither report written.
func TestReadOnlyReportTarget(t *testing.T) {
	t.Parallel()
	unprivileged(t, func(t *testing.T, dir string) {
		ro := filepath.Join(dir, "readonly")
		if err := os.Mkdir(ro, 0o555); err != nil {
			t.Fatal(err)
		}
		defer os.Chmod(ro, 0o777)
		bad, good := filepath.Join(ro, "r.json"), filepath.Join(dir, "r.xml")
		code, stdout, stderr := run("compare", "--report", "json="+bad, "--report", "junit="+good,
			filepath.Join(dir, "eager"), filepath.Join(dir, "graph"))
		if code != 2 || !strings.Contains(stderr, "--report json="+bad) || !strings.Contains(stderr, "permission denied") ||
			strings.Count(stderr, "\n") != 1 || stdout != "" {
			t.Errorf("exit %d, stderr %q, stdout %.40q", code, stderr, stdout)
		}
		if entries, _ := os.ReadDir(ro); len(entries) != 0 {
			t.Errorf("left in the read-only directory: %v", entries)
		}
		if _, err := os.Stat(good); !os.IsNotExist(err) {
			t.Errorf("good report: %v, want none written", err)
		}
	})
}

// TestFullDisk writes the report to /dev/full, where every write fails with
// ENOSPC: exit status 2 and a message, not a silent pass.
func TestFullDisk(t *testing.T) {
	t.Parallel()
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("no /dev/full: %v", err)
	}
	defer full.Close()
	var stderr strings.Builder
	code := Main([]string{"compare", eagerRun, graphRun}, strings.NewReader(""), full, &stderr)
	if code != 2 || !strings.Contains(stderr.String(), "no space left on device") {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
}

// TestInterrupt starts graphdiff on inputs that take a long time to read
// (two sparse 32 GiB float32 .npy files numpy made with open_memmap),
// stops it with SIGINT, SIGTERM, SIGHUP and SIGQUIT in turn, and checks
// that each stops it at once with exit status 130 and leaves no report,
// whole or partial.
func TestInterrupt(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds graphdiff")
	}
	py := numpyPython(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "graphdiff")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	big := []string{filepath.Join(dir, "a.npy"), filepath.Join(dir, "b.npy")}
	for _, p := range big {
		script := "import numpy as np, sys; np.lib.format.open_memmap(sys.argv[1], mode='w+', dtype='<f4', shape=(1 << 33,)).flush()"
		if out, err := exec.Command(py, "-c", script, p).CombinedOutput(); err != nil {
			t.Skipf("a sparse 32 GiB file: %v\n%s", err, out)
		}
	}
	reports := filepath.Join(dir, "reports")
	if err := os.Mkdir(reports, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, sig := range []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT} {
		cmd := exec.Command(bin, "compare", "--report", "json="+filepath.Join(reports, "r.json"), big[0], big[1])
		var stderr strings.Builder
		cmd.Stderr, cmd.Stdout = &stderr, io.Discard
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond) // reading
		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != exitInterrupted || !strings.Contains(stderr.String(), "stopped") {
				t.Errorf("%v: exit %v, stderr %q", sig, err, stderr.String())
			}
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			t.Fatalf("still running 10 s after %v", sig)
		}
		if entries, _ := os.ReadDir(reports); len(entries) != 0 {
			t.Errorf("%v: left behind: %v", sig, entries)
		}
	}
}

// TestDumpStillBeingWritten compares against a run whose training job is
// still writing its last step: a half-written .npy, an .npz whose central
// directory is not there yet, and a temporary file. The finished steps are
// compared, each unfinished file is named in the report, and the verdict
// is error (exit status 2), never pass.
func TestDumpStillBeingWritten(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "graph")
	if err := os.CopyFS(dir, os.DirFS(graphRun)); err != nil {
		t.Fatal(err)
	}
	last := filepath.Join(dir, "step_000009")
	if err := os.MkdirAll(last, 0o755); err != nil {
		t.Fatal(err)
	}
	loss, err := os.ReadFile(filepath.Join(graphRun, "step_000001", "loss.npy"))
	if err != nil {
		t.Fatal(err)
	}
	npz, err := os.ReadFile("../../testdata/npz/stored.npz")
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{
		"loss.npy":          loss[:len(loss)-2],
		"state.npz":         npz[:len(npz)/2],
		"loss.npy.tmp-1234": loss,
	} {
		if err := os.WriteFile(filepath.Join(last, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, stdout, stderr := run("compare", "--top", "0", eagerRun, dir)
	if code != 2 || !strings.HasPrefix(stdout, "ERROR") {
		t.Errorf("exit %d, report %.60q", code, stdout)
	}
	for _, want := range []string{"2 inputs could not be read", "step_000009/loss.npy:", "step_000009/state.npz:", "61 match", "2 inputs unreadable"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("report lacks %q:\n%s%s", want, stdout, stderr)
		}
	}
}
