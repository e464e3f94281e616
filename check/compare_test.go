package check

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/graphdiff/graphdiff/judge"
	"github.com/graphdiff/graphdiff/loaders"
)

func load(t *testing.T, path string) *loaders.Run {
	t.Helper()
	r, err := loaders.Load(path, loaders.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// copyTree copies a fixture run directory into a temporary one.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "run")
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestUnreadablePairStillReportsTheRest truncates one gradient of the
// second run: that pair is an error, every other pair is still compared,
// and the verdict is error.
func TestUnreadablePairStillReportsTheRest(t *testing.T) {
	t.Parallel()
	dir := copyTree(t, fixture("runs", "mlp_fp32", "graph"))
	b := load(t, dir)
	victim := filepath.Join(dir, "step_000002", "grads", "fc2.weight.npy")
	if err := os.Truncate(victim, 1000); err != nil { // after discovery: fails when read
		t.Fatal(err)
	}
	r := mustRuns(t, load(t, fixture("runs", "mlp_fp32", "eager")), b, Options{})
	if r.Verdict != judge.Error {
		t.Errorf("verdict %s, want error", r.Verdict)
	}
	compared, errs := 0, 0
	for _, tr := range r.Tensors {
		switch tr.Status {
		case judge.StatusError:
			errs++
			if tr.Name != "grads/fc2.weight" || tr.Step != 2 {
				t.Errorf("error on %s step %d", tr.Name, tr.Step)
			}
		case judge.StatusMatch:
			compared++
		}
	}
	if compared != 60 || errs != 1 || len(r.AllErrors()) != 1 {
		t.Errorf("%d compared, %d errors, %d listed errors", compared, errs, len(r.AllErrors()))
	}
}

// TestFailFast stops after the first step with a failing pair and counts
// what it left out.
func TestFailFast(t *testing.T) {
	t.Parallel()
	dir := copyTree(t, fixture("runs", "mlp_fp32", "graph"))
	// step 1's fc1 gradient of the graph run becomes the eager run's step 2 one
	src := fixture("runs", "mlp_fp32", "eager", "step_000002", "grads", "fc1.weight.npy")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "step_000001", "grads", "fc1.weight.npy"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	a, b := load(t, fixture("runs", "mlp_fp32", "eager")), load(t, dir)
	full := mustRuns(t, a, b, Options{})
	fast := mustRuns(t, a, b, Options{FailFast: true})
	for _, r := range []*judge.Result{full, fast} {
		if r.Verdict != judge.Fail || r.FirstDivergence == nil || r.FirstDivergence.Name != "grads/fc1.weight" || r.FirstDivergence.Step != 1 {
			t.Fatalf("verdict %s, first divergence %+v", r.Verdict, r.FirstDivergence)
		}
	}
	// steps 0 and 1 compared (15 pairs each); steps 2 and 3 (30) and the
	// step-less losses (1) not
	if fast.StoppedAfterStep == nil || *fast.StoppedAfterStep != 1 || fast.NotCompared != 31 || len(fast.Tensors) != 30 {
		t.Errorf("stopped after %v, %d not compared, %d tensors", fast.StoppedAfterStep, fast.NotCompared, len(fast.Tensors))
	}
}

// TestBaselineRaisesThresholds compares with a baseline run that differs
// from the reference as much as the compared run does: the thresholds rise
// to NoiseFactor times the baseline's noise, and the noise is reported.
func TestBaselineRaisesThresholds(t *testing.T) {
	t.Parallel()
	a, b := load(t, fixture("runs", "mlp_fp32", "eager")), load(t, fixture("runs", "mlp_fp32", "graph"))
	r := mustRuns(t, a, b, Options{}, b)
	for _, tr := range r.Tensors {
		if tr.Noise == nil {
			t.Fatalf("%s: no noise", tr.Name)
		}
		if fmt.Sprintf("%#v", *tr.Noise) != fmt.Sprintf("%#v", *tr.Metrics) {
			t.Errorf("%s: noise %+v differs from metrics %+v", tr.Name, tr.Noise, tr.Metrics)
		}
		// losses and outputs are judged by the run-level rules, whose
		// limit the baseline raises the same way
		base := tr.Settings.MaxRelL2
		if tr.Kind == loaders.KindLoss || tr.Kind == loaders.KindOutput {
			base = r.Steps[0].LossLimit
			if tr.Kind == loaders.KindOutput {
				base = r.Steps[0].OutputLimit
			}
		}
		want := max(base, judge.NoiseFactor*tr.Metrics.RelL2)
		if tr.MaxRelL2 != want {
			t.Errorf("%s: threshold %g, want %g", tr.Name, tr.MaxRelL2, want)
		}
	}
}

// mustRuns compares two loaded runs (and a against baseline, when not
// nil) as Runs does, without diagnosis and curves.
func mustRuns(t testing.TB, a, b *loaders.Run, opts Options, baseline ...*loaders.Run) *judge.Result {
	t.Helper()
	var base *loaders.Run
	if len(baseline) > 0 {
		base = baseline[0]
	}
	return compareLoaded(a, b, base, opts).result
}

// TestFilesChangeAfterDiscovery removes one file and truncates another
// after the runs were discovered, as a cleanup job or a still-running
// writer might: both pairs are errors naming their files, every other pair
// is compared, and the verdict is error.
func TestFilesChangeAfterDiscovery(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(fixture("runs", "mlp_fp32", "graph"))); err != nil {
		t.Fatal(err)
	}
	a, b := load(t, fixture("runs", "mlp_fp32", "eager")), load(t, dir)
	gone := filepath.Join(dir, "step_000001", "grads", "fc1.weight.npy")
	cut := filepath.Join(dir, "step_000003", "params", "fc2.weight.npy")
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(cut, 1000); err != nil {
		t.Fatal(err)
	}
	for _, jobs := range []int{1, 4} {
		r := mustRuns(t, a, b, Options{Jobs: jobs})
		if r.Verdict != judge.Error {
			t.Errorf("jobs %d: verdict %s", jobs, r.Verdict)
		}
		bad := map[string]string{}
		for _, tr := range r.Tensors {
			if tr.Status == judge.StatusError {
				bad[fmt.Sprintf("%d %s", tr.Step, tr.Name)] = tr.Err.Error()
			} else if tr.Status != judge.StatusMatch {
				t.Errorf("jobs %d: step %d %s: %s", jobs, tr.Step, tr.Name, tr.Status)
			}
		}
		if !strings.Contains(bad["1 grads/fc1.weight"], "fc1.weight.npy") || !strings.Contains(bad["3 params/fc2.weight"], "fc2.weight.npy") || len(bad) != 2 {
			t.Errorf("jobs %d: unreadable pairs %v", jobs, bad)
		}
		if len(r.AllErrors()) != 2 {
			t.Errorf("jobs %d: errors %v", jobs, r.AllErrors())
		}
	}
}

// fixture returns the path of a file under the repository's testdata.
func fixture(parts ...string) string {
	return filepath.Join(append([]string{"..", "testdata"}, parts...)...)
}

// TestBaselineThatMeasuresNothing: a baseline that is the reference run
// again is reported as measuring nothing; the real second eager run, which
// differs in the last bits, is not.
func TestBaselineThatMeasuresNothing(t *testing.T) {
	t.Parallel()
	dir := fixture("scenarios", "fp32_adam")
	for _, tc := range []struct {
		baseline string
		want     bool
	}{{"eager", true}, {"baseline", false}} {
		c, err := Runs(filepath.Join(dir, "eager"), filepath.Join(dir, "graph"), Options{Baseline: filepath.Join(dir, tc.baseline)})
		if err != nil {
			t.Fatal(err)
		}
		if c.Baseline == nil || c.Baseline.Identical != tc.want {
			t.Errorf("baseline %s: %+v, want identical %v", tc.baseline, c.Baseline, tc.want)
		}
	}
}

// compareLoaded compares runs that Load read (none deferred).
func compareLoaded(a, b, baseline *loaders.Run, opts Options) *compared {
	opts.readFirst = true
	c, _ := runSteps(a, b, baseline, opts)
	return c
}

// TestRunsKeepWholeMapsUntilTheUpdates compares two runs of one 1.2 MB
// parameter and its gradient at two steps (numpy's f4_big.npy copied into
// each place): while the steps are compared their maps are kept whole
// (loaders.Entry.KeepMaps), the update of step 1 is measured from them,
// and once the comparison returns no whole map is left.
func TestRunsKeepWholeMapsUntilTheUpdates(t *testing.T) {
	big, err := os.ReadFile(filepath.Join("..", "testdata", "npy", "f4_big.npy"))
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	for _, run := range []string{"eager", "graph"} {
		for _, p := range []string{"step_000000/params/w.npy", "step_000000/grads/w.npy", "step_000001/params/w.npy", "step_000001/grads/w.npy"} {
			path := filepath.Join(root, run, filepath.FromSlash(p))
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, big, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	before := loaders.WholeMapped()
	var most atomic.Int64
	opts := Options{Progress: func(int64) (func(int64), func()) {
		return func(int64) {
			if m := loaders.WholeMapped() - before; m > most.Load() {
				most.Store(m)
			}
		}, func() {}
	}}
	r := mustRuns(t, load(t, filepath.Join(root, "eager")), load(t, filepath.Join(root, "graph")), opts)
	if most.Load() == 0 {
		t.Error("no whole map was kept while the steps were compared")
	}
	if left := loaders.WholeMapped() - before; left != 0 {
		t.Errorf("%d bytes of whole maps left after the comparison", left)
	}
	measured := 0
	for _, tr := range r.Tensors {
		if tr.Step == 1 && tr.Kind == loaders.KindParam {
			if tr.Update == nil || tr.Update.Count != 300000 {
				t.Errorf("%s at step 1: update %+v, want one of 300000 elements", tr.Name, tr.Update)
			}
			measured++
		}
	}
	if measured != 1 {
		t.Errorf("%d parameters at step 1, want 1", measured)
	}
}
