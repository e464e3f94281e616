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

// TestStagesLeaveTheirInputs diagnoses a failing real comparison and
// merges its shards: neither changes the result or the shard results it
// was given (diagnosis reads the heads handed to it; merge works on copies).
func TestStagesLeaveTheirInputs(t *testing.T) {
	t.Parallel()
	dir := fixture("scenarios", "stale_input")
	a, b := load(t, filepath.Join(dir, "eager")), load(t, filepath.Join(dir, "graph"))
	c := compareLoaded(a, b, nil, Options{})
	if c.result.Verdict != judge.Fail {
		t.Fatalf("verdict %s", c.result.Verdict)
	}
	plan, heads := c.heads()
	before, headsBefore := snapshot(c.result.Tensors), fmt.Sprint(heads)
	rep := diagnose.Diagnose(c.result, heads)
	if len(rep.Causes) == 0 {
		t.Fatal("no cause")
	}
	// the plan the heads were read for, handed on, diagnoses the same; a
	// plan over other pairs is made again
	other := diagnose.NewPlan(slices.Clone(c.result.Tensors[:len(c.result.Tensors)/2]))
	for _, p := range []*diagnose.Plan{plan, other, nil} {
		if got := diagnose.DiagnosePlanned(c.result, p, heads); fmt.Sprint(got) != fmt.Sprint(rep) {
			t.Errorf("DiagnosePlanned gave %v, Diagnose %v", got, rep)
		}
	}
	if snapshot(c.result.Tensors) != before || fmt.Sprint(heads) != headsBefore {
		t.Error("Diagnose changed its input")
	}

	var parts []*judge.Result
	var partsBefore []string
	for i := 1; i <= 3; i++ {
		p := compareLoaded(a, b, nil, Options{Shard: loaders.Shard{Index: i, Count: 3}}).result
		parts, partsBefore = append(parts, p), append(partsBefore, snapshot(p.Tensors))
	}
	merged, warning, err := Merge(parts, false, loaders.Options{})
	if err != nil || warning != nil {
		t.Fatal(err, warning)
	}
	if len(merged.Tensors) != len(c.result.Tensors) || merged.Verdict != c.result.Verdict {
		t.Errorf("merged %d pairs, verdict %s; unsharded %d, %s", len(merged.Tensors), merged.Verdict, len(c.result.Tensors), c.result.Verdict)
	}
	for i, p := range parts {
		if snapshot(p.Tensors) != partsBefore[i] {
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
