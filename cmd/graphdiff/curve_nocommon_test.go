package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCurvesWithNoCommonStep: two loss curves that share no step are not
// a pass (nothing was compared) but an input error naming both files and
// their steps.
func TestCurvesWithNoCommonStep(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a, b := filepath.Join(dir, "eager.csv"), filepath.Join(dir, "graph.csv")
	if err := os.WriteFile(a, []byte("step,loss\n0,1.5\n1,1.4\n2,1.3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b, []byte("step,loss\n10,1.5\n11,1.4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := run("curve", a, b)
	if code != exitError || stdout != "" {
		t.Errorf("exit %d, stdout %q; want %d and nothing", code, stdout, exitError)
	}
	for _, want := range []string{a, b, "steps 0 to 2", "steps 10 to 11", "no step in common"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr %q does not say %q", stderr, want)
		}
	}
}

// TestMergeRefusesAnUnshardedReport: the report of a comparison made
// without --shard records no run-level rules to judge its pairs again
// with; merge refuses it, naming it, rather than re-judging a failing run
// (or a passing one) against limits of zero.
func TestMergeRefusesAnUnshardedReport(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("..", "..", "testdata", "corpus", "mlp", "mlp_stale_input")
	out := filepath.Join(t.TempDir(), "unsharded.json")
	if code, _, stderr := run("compare", filepath.Join(dir, "eager"), filepath.Join(dir, "graph"), "--report", "json="+out); code != exitDiff {
		t.Fatalf("compare: exit %d\n%s", code, stderr)
	}
	code, stdout, stderr := run("merge", out)
	if code != exitError || stdout != "" || !strings.Contains(stderr, out) || !strings.Contains(stderr, "not a shard report") {
		t.Errorf("merge of an unsharded report: exit %d, stdout %q, stderr %q; want exit %d naming it", code, stdout, stderr, exitError)
	}
}
