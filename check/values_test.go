package check

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/graphdiff/graphdiff/diagnose"
	"github.com/graphdiff/graphdiff/judge"
	"github.com/graphdiff/graphdiff/loaders"
)

// snapshot prints a result's pairs, their descriptions and metrics, so
// that a change to any of them shows.
func snapshot(ts []*judge.TensorResult) string {
	var b strings.Builder
	for _, t := range ts {
		fmt.Fprintf(&b, "%+v|", *t)
		for _, m := range []*loaders.Meta{t.A, t.B} {
			if m != nil {
				fmt.Fprintf(&b, "%+v|", *m)
			}
		}
		if t.Metrics != nil {
			fmt.Fprintf(&b, "%+v", *t.Metrics)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// snapshotResult prints a whole result: its pairs, steps, verdict, first
// divergence and errors.
func snapshotResult(r *judge.Result) string {
	first := "none"
	if r.FirstDivergence != nil {
		first = fmt.Sprintf("%+v", *r.FirstDivergence)
	}
	return fmt.Sprintf("%s%s|%+v|%s|%s|%v|%s", snapshot(r.Tensors), snapshot(r.Ignored), r.Steps, r.Verdict, first, r.Errors, r.NothingCompared)
}

// TestStagesLeaveTheirInputs runs every stage that comes after a
// comparison's results are built on a failing real comparison (the heads
// read for diagnosis, the diagnosis, the verdict, the step rules judging
// its pairs again, the merge's rejudging, the loss curves, --strict and
// finishing) and merges its shards: none changes the result, the shard
// results or the heads it was given.
func TestStagesLeaveTheirInputs(t *testing.T) {
	t.Parallel()
	dir := fixture("scenarios", "stale_input")
	a, b := load(t, filepath.Join(dir, "eager")), load(t, filepath.Join(dir, "graph"))
	c := compareLoaded(a, b, nil, Options{})
	r := c.result
	if r.Verdict != judge.Fail {
		t.Fatalf("verdict %s", r.Verdict)
	}
	before := snapshotResult(r)
	plan, heads := c.heads()
	headsBefore := fmt.Sprint(heads)
	rep := diagnose.Diagnose(r, heads)
	if len(rep.Causes) == 0 {
		t.Fatal("no cause")
	}
	// the plan the heads were read for, handed on, diagnoses the same; a
	// plan over other pairs is made again
	other := diagnose.NewPlan(slices.Clone(r.Tensors[:len(r.Tensors)/2]))
	for _, p := range []*diagnose.Plan{plan, other, nil} {
		if got := diagnose.DiagnosePlanned(r, p, heads); fmt.Sprint(got) != fmt.Sprint(rep) {
			t.Errorf("DiagnosePlanned gave %v, Diagnose %v", got, rep)
		}
	}
	if v, first := judge.Run(r.Tensors, r.Errors); v != r.Verdict || first != r.FirstDivergence {
		t.Errorf("judge.Run again: %s at %v", v, first)
	}
	ctx := judge.NewContext(r.Precision, r.Rules)
	for _, step := range bySteps(r.Tensors, func(t *judge.TensorResult) int { return t.Step }) {
		pairs := make([]judge.Pair, len(step))
		for i, t := range step {
			pairs[i] = t.Pair
		}
		f, _ := judge.Step(pairs, ctx)
		ctx = ctx.Next(f)
	}
	rejudge(r.Tensors, r.Precision, r.Rules)
	runCurves(a, b, loaders.Options{}, r.Precision)
	if strict := finish(r, plan, heads, nil, true); strict.Result != r && strict.Verdict != r.Verdict {
		t.Errorf("strict on a failing result made a copy with verdict %s", strict.Verdict)
	}
	if snapshotResult(r) != before || fmt.Sprint(heads) != headsBefore {
		t.Error("a stage changed the result or the heads it was given")
	}

	// --strict on a passing result with a warning fails a copy
	passing := &judge.Result{Verdict: judge.Pass}
	warned := diagnose.Report{Warnings: []diagnose.Cause{{ID: "stale_input"}}}
	if failed, causes := applyStrict(passing, warned, true); failed == passing || failed.Verdict != judge.Fail ||
		passing.Verdict != judge.Pass || len(causes) != 1 {
		t.Errorf("--strict: %s (original %s), causes %v", failed.Verdict, passing.Verdict, causes)
	}

	var parts []*judge.Result
	var partsBefore []string
	for i := 1; i <= 3; i++ {
		p := compareLoaded(a, b, nil, Options{Shard: loaders.Shard{Index: i, Count: 3}}).result
		parts, partsBefore = append(parts, p), append(partsBefore, snapshotResult(p))
	}
	merged, warning, err := Merge(parts, false, &loaders.Options{})
	if err != nil || warning != nil {
		t.Fatal(err, warning)
	}
	if len(merged.Tensors) != len(r.Tensors) || merged.Verdict != r.Verdict {
		t.Errorf("merged %d pairs, verdict %s; unsharded %d, %s", len(merged.Tensors), merged.Verdict, len(r.Tensors), r.Verdict)
	}
	for i, p := range parts {
		if snapshotResult(p) != partsBefore[i] {
			t.Errorf("Merge changed shard %d's result", i+1)
		}
	}
}

// TestRunsRefusesBadOptions checks that options that cannot apply are
// refused before anything is loaded (the paths do not exist).
func TestRunsRefusesBadOptions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		opts Options
		want string
	}{
		{"shard outside its count", Options{Shard: loaders.Shard{Index: 3, Count: 2}}, "want 1 ≤ I ≤ N"},
		{"shard with fail-fast", Options{Shard: loaders.Shard{Index: 1, Count: 2}, FailFast: true}, "cannot be combined"},
	} {
		if _, err := Runs("/nonexistent/a", "/nonexistent/b", tc.opts); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one saying %q", tc.name, err, tc.want)
		}
	}
	if _, err := Runs("/nonexistent/a", "/nonexistent/b", Options{}); err == nil || !strings.Contains(err.Error(), "/nonexistent/a") {
		t.Errorf("missing run: error %v, want one naming it", err)
	}
}
