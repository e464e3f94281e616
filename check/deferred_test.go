package check

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/graphdiff/graphdiff/judge"
	"github.com/graphdiff/graphdiff/loaders"
	"github.com/graphdiff/graphdiff/outcome"
)

// describe prints what a comparison says: every pair with its description
// and metrics, the steps' facts, errors, verdict, causes and curve.
func describe(c *outcome.Comparison) string {
	var b strings.Builder
	r := c.Result
	fmt.Fprintf(&b, "verdict %s precision %s not compared %d\n", r.Verdict, r.Precision, r.NotCompared)
	if r.StoppedAfterStep != nil {
		fmt.Fprintf(&b, "stopped after %d\n", *r.StoppedAfterStep)
	}
	if d := r.FirstDivergence; d != nil {
		fmt.Fprintf(&b, "first divergence %s at %d\n", d.Name, d.Step)
	}
	b.WriteString(pairsByValue(r.Tensors))
	b.WriteString("ignored\n" + pairsByValue(r.Ignored))
	for _, s := range r.Steps {
		fmt.Fprintf(&b, "%+v\n", s)
	}
	for _, err := range r.Errors {
		fmt.Fprintf(&b, "error %v\n", err)
	}
	fmt.Fprintf(&b, "causes %+v\nwarnings %+v\n", c.Causes, c.Warnings)
	if c.Curve != nil {
		cv := *c.Curve
		if cv.FirstDivergentStep != nil {
			fmt.Fprintf(&b, "curve diverges at %v\n", *cv.FirstDivergentStep)
		}
		cv.FirstDivergentStep = nil
		fmt.Fprintf(&b, "curve %+v\n", cv)
	}
	return b.String()
}

// pairsByValue prints pairs with what their pointers point to.
func pairsByValue(ts []*judge.TensorResult) string {
	var b strings.Builder
	for _, t := range ts {
		c := *t
		c.A, c.B, c.Metrics, c.Noise, c.Update = nil, nil, nil, nil, nil
		fmt.Fprintf(&b, "%+v", c)
		if t.A != nil {
			fmt.Fprintf(&b, " A %+v", *t.A)
		}
		if t.B != nil {
			fmt.Fprintf(&b, " B %+v", *t.B)
		}
		if t.Metrics != nil {
			fmt.Fprintf(&b, " metrics %+v", *t.Metrics)
		}
		if t.Noise != nil {
			fmt.Fprintf(&b, " noise %+v", *t.Noise)
		}
		if t.Update != nil {
			fmt.Fprintf(&b, " update %+v", *t.Update)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// bothWays compares the runs at a and b reading them a step at a time,
// then reading every file first, and returns both descriptions.
func bothWays(t *testing.T, a, b string, opts Options) (stepwise, upfront string) {
	t.Helper()
	for _, d := range []bool{true, false} {
		o := opts
		o.readFirst = !d
		c, err := Runs(a, b, o)
		if err != nil {
			t.Fatal(err)
		}
		if d {
			stepwise = describe(c)
		} else {
			upfront = describe(c)
		}
	}
	return stepwise, upfront
}

// TestStepwiseReadingChangesNothing compares real runs, and runs built of
// unreadable files, reading them a step at a time (each file opened once)
// and reading every file first: every pair, metric, step, error, cause
// and curve is the same.
func TestStepwiseReadingChangesNothing(t *testing.T) {
	t.Parallel()
	dirs := scenarioDirs(t)
	// a manifest that names a file (read first) beside files read a step
	// at a time, containers, a flat run, two precisions
	for _, pair := range [][2]string{{"tree", "tree"}, {"flat", "flat"}, {"mlp_fp32", "mlp_bf16"}} {
		a, b := fixture("runs", pair[0]), fixture("runs", pair[1])
		if s, u := bothWays(t, a, b, Options{}); s != u {
			t.Errorf("%s vs %s: read a step at a time:\n%s\nread first:\n%s", a, b, s, u)
		}
		if s, u := inspectBothWays(t, a); s != u {
			t.Errorf("inspect %s: read a step at a time:\n%s\nread first:\n%s", a, s, u)
		}
	}
	for _, dir := range dirs[:10] {
		if s, u := inspectBothWays(t, filepath.Join(dir, "graph")); s != u {
			t.Errorf("inspect %s: read a step at a time:\n%s\nread first:\n%s", dir, s, u)
		}
	}
	for _, dir := range dirs {
		opts := []Options{{}}
		if strings.HasSuffix(dir, "stale_input") {
			opts = append(opts, Options{FailFast: true}, Options{Baseline: filepath.Join(dir, "eager")})
		}
		for _, o := range opts {
			s, u := bothWays(t, filepath.Join(dir, "eager"), filepath.Join(dir, "graph"), o)
			if s != u {
				t.Errorf("%s (fail-fast %v, baseline %q): read a step at a time:\n%s\nread first:\n%s", dir, o.FailFast, o.Baseline, s, u)
			}
		}
	}
}

// scenarioDirs returns the directories of the corpus's scenarios and
// testdata/scenarios'.
func scenarioDirs(t *testing.T) []string {
	t.Helper()
	var dirs []string
	for _, root := range []string{"corpus", "scenarios"} {
		filepath.WalkDir(fixture(root), func(path string, d os.DirEntry, err error) error {
			if err == nil && d.Name() == "label.json" {
				dirs = append(dirs, filepath.Dir(path))
			}
			return err
		})
	}
	if len(dirs) < 100 {
		t.Fatalf("%d scenarios, want the corpus's and testdata/scenarios'", len(dirs))
	}
	return dirs
}

// TestReadingInPartsChangesNothing cuts every step in parts of one pair
// and of three, each part read while the one before is compared: the runs
// of testdata/runs, every seventh scenario and stale_input with fail-fast
// and a baseline give what reading every file first gives.
func TestReadingInPartsChangesNothing(t *testing.T) {
	t.Parallel()
	var dirs []string
	for i, dir := range scenarioDirs(t) {
		if i%7 == 0 || strings.HasSuffix(dir, "stale_input") {
			dirs = append(dirs, dir)
		}
	}
	for _, n := range []int{1, 3} {
		for _, pair := range [][2]string{{"tree", "tree"}, {"flat", "flat"}, {"mlp_fp32", "mlp_bf16"}} {
			a, b := fixture("runs", pair[0]), fixture("runs", pair[1])
			if s, u := bothWays(t, a, b, Options{partPairs: n}); s != u {
				t.Errorf("parts of %d, %s vs %s: read a part at a time:\n%s\nread first:\n%s", n, a, b, s, u)
			}
		}
		for _, dir := range dirs {
			opts := []Options{{partPairs: n}}
			if strings.HasSuffix(dir, "stale_input") {
				opts = append(opts, Options{FailFast: true, partPairs: n}, Options{Baseline: filepath.Join(dir, "eager"), partPairs: n})
			}
			for _, o := range opts {
				if s, u := bothWays(t, filepath.Join(dir, "eager"), filepath.Join(dir, "graph"), o); s != u {
					t.Errorf("parts of %d, %s (fail-fast %v, baseline %q): read a part at a time:\n%s\nread first:\n%s",
						n, dir, o.FailFast, o.Baseline, s, u)
				}
			}
		}
	}
}

// TestStepwiseReadingOfUnreadableFiles: files that cannot be read, in one
// run or both, at the first step or a later one, give the same pairs and
// errors read a step at a time as read first, in parts of any size; and a
// run whose later step holds a coarser gradient than its first is judged
// at that precision.
func TestStepwiseReadingOfUnreadableFiles(t *testing.T) {
	for _, n := range []int{partPairsDefault, 1, 2} {
		t.Run(fmt.Sprintf("parts of %d", n), func(t *testing.T) {
			stepwiseReadingOfUnreadableFiles(t, n) // not in parallel: it counts the process's descriptors
		})
	}
}

func stepwiseReadingOfUnreadableFiles(t *testing.T, partPairs int) {
	bad, err := filepath.Glob(fixture("bad", "*.npy"))
	if err != nil || len(bad) < 10 {
		t.Fatalf("%d bad .npy files (%v)", len(bad), err)
	}
	good := fixture("dtypes", "float16_float32.npy")   // float32
	coarse := fixture("dtypes", "float16_bits.npy")    // float16, same shape
	large := fixture("dtypes", "bfloat16_float32.npy") // 256 KiB: read past its header later
	loss := fixture("scenarios", "stale_input", "eager", "step_000000", "loss.npy")
	root := t.TempDir()
	put := func(run, step, name, from string) {
		t.Helper()
		data, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(root, run, step, filepath.Dir(name))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, run, step, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, step := range []string{"step_0", "step_1"} {
		for _, run := range []string{"a", "b"} {
			put(run, step, "loss.npy", loss)
			put(run, step, "grads/w.npy", good)
			put(run, step, "outputs/big.npy", large)
		}
		for i, f := range bad {
			name := fmt.Sprintf("outputs/bad%02d.npy", i)
			switch i % 3 {
			case 0: // unreadable in both runs
				put("a", step, name, f)
				put("b", step, name, f)
			case 1: // unreadable in b only
				put("a", step, name, good)
				put("b", step, name, f)
			default: // unreadable in a, missing from b
				put("a", step, name, f)
			}
		}
	}
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	before := openDescriptors(t)
	for _, o := range []Options{{partPairs: partPairs}, {FailFast: true, partPairs: partPairs}} {
		if s, u := bothWays(t, a, b, o); s != u {
			t.Errorf("fail-fast %v: read a step at a time:\n%s\nread first:\n%s", o.FailFast, s, u)
		}
	}
	if after := openDescriptors(t); after > before {
		t.Errorf("%d descriptors open after comparing, %d before: kept descriptors leak", after, before)
	}
	for _, path := range []string{a, b, bad[0], large} {
		if s, u := inspectBothWays(t, path); s != u {
			t.Errorf("inspect %s: read a step at a time:\n%s\nread first:\n%s", path, s, u)
		}
	}
	for _, files := range [][2]string{{good, large}, {good, bad[0]}, {bad[0], bad[1]}, {large, large}} {
		if s, u := bothWays(t, files[0], files[1], Options{partPairs: partPairs}); s != u {
			t.Errorf("%s vs %s: read a step at a time:\n%s\nread first:\n%s", files[0], files[1], s, u)
		}
	}

	for _, run := range []string{"a", "b"} {
		put(run, "step_1", "grads/w.npy", coarse)
	}
	s, u := bothWays(t, a, b, Options{partPairs: partPairs})
	if s != u {
		t.Errorf("coarser later gradient: read a step at a time:\n%s\nread first:\n%s", s, u)
	}
	if !strings.Contains(s, "model float16") {
		t.Errorf("a float16 gradient at step 1 after float32 at step 0: want the model judged at float16:\n%s", s)
	}
	// read a step at a time, the comparison stops where it finds the
	// coarser dtype and says so; Runs then compares again (above)
	ra, errA := loaders.LoadDeferred(a, loaders.Options{})
	rb, errB := loaders.LoadDeferred(b, loaders.Options{})
	if errA != nil || errB != nil {
		t.Fatal(errA, errB)
	}
	_, err = runSteps(ra, rb, nil, Options{partPairs: partPairs})
	if coarser, ok := errors.AsType[*coarserPrecision](err); !ok || coarser.found != loaders.Float16 || coarser.step != 1 ||
		coarser.decided.Model != loaders.Float32 {
		t.Errorf("read a step at a time: %v, want the float16 gradient of step 1 found after float32 was decided", err)
	}
}

// TestDeferredEntriesReadOnce: LoadDeferred lists an .npy run without
// reading it, Resolve reads each entry, and a small file's data is then
// read from memory: the comparison still reads it after the file is gone.
func TestDeferredEntriesReadOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	step := filepath.Join(dir, "step_1")
	if err := os.MkdirAll(step, 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(fixture("scenarios", "stale_input", "eager", "step_000000", "loss.npy"))
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(step, "loss.npy")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	run, err := loaders.LoadDeferred(dir, loaders.Options{})
	if err != nil || len(run.Entries) != 1 {
		t.Fatalf("LoadDeferred: %v, %d entries", err, len(run.Entries))
	}
	e := run.Entries[0]
	if !e.Deferred() || e.Name != "loss" || e.Step != 1 || e.Kind != loaders.KindLoss {
		t.Fatalf("entry %+v: want a deferred loss at step 1", e)
	}
	if errs := loaders.Resolve(run.Entries); errs[0] != nil {
		t.Fatal(errs[0])
	}
	if e.Deferred() || e.DType != loaders.Float32 || e.Len() != 1 {
		t.Fatalf("resolved entry: deferred %v, %s, %d elements", e.Deferred(), e.DType, e.Len())
	}
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	r, err := e.Open()
	if err != nil {
		t.Fatalf("reading held data after the file is gone: %v", err)
	}
	v := make([]float64, 1)
	if n, err := r.Read(v); n != 1 || err != nil {
		t.Fatalf("read %d values, %v", n, err)
	}
	r.Close()
	e.Release()
	if _, err := e.Open(); err == nil {
		t.Error("released data of a removed file read without error")
	}
}

// openDescriptors counts the process's open descriptors (Linux), or
// returns 0 where /proc/self/fd is not there.
func openDescriptors(t *testing.T) int {
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return 0
	}
	return len(fds)
}

// inspectBothWays inspects the run at path reading it a step at a time,
// then reading every file first, and returns both reports as text.
func inspectBothWays(t *testing.T, path string) (stepwise, upfront string) {
	t.Helper()
	for _, d := range []bool{true, false} {
		ins, err := inspectPath(path, loaders.Options{}, 0, !d)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, ts := range ins.Tensors {
			fmt.Fprintf(&b, "%+v std %v\n", ts, ts.Std())
		}
		for _, err := range ins.Errors {
			fmt.Fprintf(&b, "error %v\n", err)
		}
		if d {
			stepwise = b.String()
		} else {
			upfront = b.String()
		}
	}
	return stepwise, upfront
}
