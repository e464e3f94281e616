package compare

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

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

// sameMetrics reports whether two metrics are identical, NaN equal to NaN.
func sameMetrics(x, y *Metrics) bool { return fmt.Sprintf("%#v", *x) == fmt.Sprintf("%#v", *y) }

// TestJobsGiveIdenticalResults compares real runs split into many chunks
// with 1 and with 4 workers: every metric must be identical, bit for bit.
func TestJobsGiveIdenticalResults(t *testing.T) {
	defer func(old int64) { chunkElems = old }(chunkElems)
	chunkElems = 97 // split even the small tensors into chunks
	a, b := load(t, fixture("runs", "mlp_fp32", "eager")), load(t, fixture("runs", "mlp_fp32", "graph"))
	one := mustRuns(t, a, b, Options{Jobs: 1})
	four := mustRuns(t, a, b, Options{Jobs: 4})
	if len(one.Tensors) != 61 || len(four.Tensors) != 61 {
		t.Fatalf("%d and %d tensors", len(one.Tensors), len(four.Tensors))
	}
	for i := range one.Tensors {
		x, y := one.Tensors[i], four.Tensors[i]
		if x.Metrics == nil || !sameMetrics(x.Metrics, y.Metrics) {
			t.Errorf("%s step %d: 1 worker %+v\n4 workers %+v", x.Name, x.Step, x.Metrics, y.Metrics)
		}
	}
}

// TestUnreadablePairStillReportsTheRest truncates one gradient of the
// second run: that pair is an error, every other pair is still compared,
// and the verdict is error.
func TestUnreadablePairStillReportsTheRest(t *testing.T) {
	dir := copyTree(t, fixture("runs", "mlp_fp32", "graph"))
	b := load(t, dir)
	victim := filepath.Join(dir, "step_000002", "grads", "fc2.weight.npy")
	if err := os.Truncate(victim, 1000); err != nil { // after discovery: fails when read
		t.Fatal(err)
	}
	r := mustRuns(t, load(t, fixture("runs", "mlp_fp32", "eager")), b, Options{})
	if r.Verdict != Error {
		t.Errorf("verdict %s, want error", r.Verdict)
	}
	compared, errs := 0, 0
	for _, tr := range r.Tensors {
		switch tr.Status {
		case StatusError:
			errs++
			if tr.Name != "grads/fc2.weight" || tr.Step != 2 {
				t.Errorf("error on %s step %d", tr.Name, tr.Step)
			}
		case StatusMatch:
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
	for _, r := range []*Result{full, fast} {
		if r.Verdict != Fail || r.FirstDivergence == nil || r.FirstDivergence.Name != "grads/fc1.weight" || r.FirstDivergence.Step != 1 {
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
	a, b := load(t, fixture("runs", "mlp_fp32", "eager")), load(t, fixture("runs", "mlp_fp32", "graph"))
	r := mustRuns(t, a, b, Options{Baseline: b})
	for _, tr := range r.Tensors {
		if tr.Noise == nil {
			t.Fatalf("%s: no noise", tr.Name)
		}
		if !sameMetrics(tr.Noise, tr.Metrics) {
			t.Errorf("%s: noise %+v differs from metrics %+v", tr.Name, tr.Noise, tr.Metrics)
		}
		want := max(tr.Settings.MaxRelL2, NoiseFactor*tr.Metrics.RelL2)
		if tr.MaxRelL2 != want {
			t.Errorf("%s: threshold %g, want %g", tr.Name, tr.MaxRelL2, want)
		}
	}
}

// mustRuns compares two runs with valid options.
func mustRuns(t testing.TB, a, b *loaders.Run, opts Options) *Result {
	t.Helper()
	r, err := Runs(a, b, opts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestFilesChangeAfterDiscovery removes one file and truncates another
// after the runs were discovered, as a cleanup job or a still-running
// writer might: both pairs are errors naming their files, every other pair
// is compared, and the verdict is error.
func TestFilesChangeAfterDiscovery(t *testing.T) {
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
		if r.Verdict != Error {
			t.Errorf("jobs %d: verdict %s", jobs, r.Verdict)
		}
		bad := map[string]string{}
		for _, tr := range r.Tensors {
			if tr.Status == StatusError {
				bad[fmt.Sprintf("%d %s", tr.Step, tr.Name)] = tr.Err.Error()
			} else if tr.Status != StatusMatch {
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

// TestMixedPairInPlace compares the float32 file f4_big.npy with its
// bfloat16 rounding bf16_big.npy, both ways round, memory-mapped whole and
// in chunks of every size class, with 1 and 4 workers and each kernel set:
// metrics and kept leading values are those of the Go kernels reading the
// whole files, bit for bit. The pair is one that addMixed reads with the
// bfloat16 side in place.
func TestMixedPairInPlace(t *testing.T) {
	defer func(c, m int64) { chunkElems, mapMinElems = c, m }(chunkElems, mapMinElems)
	f32, bf16 := fixture("npy", "f4_big.npy"), fixture("npy", "bf16_big.npy")
	compare := func(t *testing.T, pathA, pathB string, jobs int) *TensorResult {
		ra, rb := load(t, pathA), load(t, pathB)
		rb.Entries[0].Name, rb.Entries[0].Kind = ra.Entries[0].Name, ra.Entries[0].Kind // two files: paired, as the CLI does
		r := mustRuns(t, ra, rb, Options{Jobs: jobs, PlanHeads: func(ps []*TensorResult) { ps[0].HeadWant = 5 }})
		if len(r.Tensors) != 1 || r.Tensors[0].Metrics == nil {
			t.Fatalf("not compared: %+v", r.Tensors)
		}
		return r.Tensors[0]
	}
	for _, sides := range [][2]string{{f32, bf16}, {bf16, f32}} {
		var want *TensorResult
		eachKernelSet(t, func(t *testing.T) {
			if !useAVX2 {
				want = compare(t, sides[0], sides[1], 1)
				if want.Metrics.MaxAbs.Value == 0 || want.Metrics.Mismatched != 0 || len(want.HeadA) != 5 {
					t.Fatalf("the pair should differ within the tolerance, with 5 leading values kept: %+v", want)
				}
			}
			for _, sizes := range [][2]int64{{1 << 22, 1 << 18}, {70001, 4096}, {4096, 4096}} {
				chunkElems, mapMinElems = sizes[0], sizes[1]
				for _, jobs := range []int{1, 4} {
					got := compare(t, sides[0], sides[1], jobs)
					if !sameMetrics(got.Metrics, want.Metrics) || fmt.Sprint(got.HeadA, got.HeadB) != fmt.Sprint(want.HeadA, want.HeadB) {
						t.Errorf("%s vs %s, chunks of %d, %d jobs:\n%+v\nwant %+v", filepath.Base(sides[0]), filepath.Base(sides[1]), sizes[0], jobs, got.Metrics, want.Metrics)
					}
				}
			}
			chunkElems, mapMinElems = 1<<22, 1<<18
		})
		ta, tb := openOne(t, sides[0]), openOne(t, sides[1])
		mode := ulpBFloat16 | ulpRoundA
		if ta.DType == loaders.BFloat16 {
			mode = ulpBFloat16 | ulpRoundB
		}
		tk := chunkTask{job: &job{a: ta, b: tb}, whole: true}
		sa, errA := openFloat32(ta, tk, make([]float32, pairBufElems))
		sb, errB := openFloat32(tb, tk, make([]float32, pairBufElems))
		if errA != nil || errB != nil {
			t.Fatal(errA, errB)
		}
		if _, _, ok := mixedSides(sa, sb, mode); !ok {
			t.Errorf("%s vs %s: not read in place", ta.Name, tb.Name)
		}
		sa.close()
		sb.close()
	}
}

// openOne opens the single tensor of an .npy file.
func openOne(t *testing.T, path string) *loaders.Tensor {
	t.Helper()
	ts, _, err := loaders.OpenFile(path, loaders.Options{})
	if err != nil || len(ts) != 1 {
		t.Fatal(path, err)
	}
	return ts[0]
}
