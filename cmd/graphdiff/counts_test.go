package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUnreadablePairsAreReported truncates one file of a run: every other
// pair is still compared, the broken one is an unreadable pair (not a
// missing one), the verdict is error with exit status 2, and the report
// names the tensor that was not checked and why.
func TestUnreadablePairsAreReported(t *testing.T) {
	t.Parallel()
	broken := truncatedRun(t)
	code, stdout, stderr := run("compare", "--format", "json", eagerRun, broken)
	var doc struct {
		Verdict string
		Summary map[string]int
		Tensors []struct {
			Name, Status, Error string
			Step                int
			Reasons             []string
		}
		Errors []struct{ Path, Message string }
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("%v: %s", err, stderr)
	}
	if code != 2 || doc.Verdict != "error" {
		t.Errorf("exit %d, verdict %s; want 2, error", code, doc.Verdict)
	}
	var bad []string
	for _, tr := range doc.Tensors {
		if tr.Status != "match" {
			bad = append(bad, tr.Name+" "+tr.Status)
			if !strings.Contains(tr.Error, "fc1.weight.npy") || len(tr.Reasons) == 0 || !strings.Contains(tr.Reasons[0], "could not be read in") {
				t.Errorf("unreadable pair reported as %+v", tr)
			}
		}
	}
	if len(bad) != 1 || bad[0] != "grads/fc1.weight error" {
		t.Errorf("pairs not matching: %v; want only grads/fc1.weight as error", bad)
	}
	if len(doc.Errors) != 1 || !strings.HasSuffix(filepath.ToSlash(doc.Errors[0].Path), "step_000002/grads/fc1.weight.npy") {
		t.Errorf("errors: %+v", doc.Errors)
	}
	s := doc.Summary
	if s["errors"] != 1 || s["match"] != s["pairs"]-1 || s["compared"] != s["pairs"]-1 || s["unreadable_inputs"] != 0 {
		t.Errorf("summary %v", s)
	}
	_, text, _ := run("compare", "--top", "0", eagerRun, broken)
	if !strings.Contains(text, "step 2, grads/fc1.weight: could not be read in") {
		t.Errorf("text report does not say which tensor was not checked:\n%s", text)
	}
}

// TestCountsAddUp checks the JSON summary of real comparisons — failing,
// passing, with missing, extra, ignored, unreadable pairs and unreadable
// inputs — against the tensors listed: nothing is counted twice or left out.
func TestCountsAddUp(t *testing.T) {
	t.Parallel()
	comparisons := [][]string{
		{"../../testdata/runs/tree", "../../testdata/runs/flat"},
		{"--policy", "../../tolerances/testdata/example_policy.yaml", "../../testdata/scenarios/bf16_adam/eager", "../../testdata/scenarios/bf16_adam/graph"},
		{"--fail-fast", "../../testdata/scenarios/stale_input/eager", "../../testdata/scenarios/stale_input/graph"},
		{"../../testdata/npy/f4.npy", "../../testdata/npy/f4_2x3.npy"},
		{"../../testdata/npy/f8.npy", "../../testdata/npy/f2.npy"},
		{eagerRun, truncatedRun(t)},
		{eagerRun, brokenRun(t)},
		{"../../testdata/bad/not_npy_member.npz", "../../testdata/bad/not_npy_member.npz"},
	}
	scenarios, _ := filepath.Glob("../../testdata/scenarios/*/graph")
	for _, g := range scenarios {
		comparisons = append(comparisons, []string{filepath.Join(filepath.Dir(g), "eager"), g})
	}
	for _, args := range comparisons {
		_, stdout, stderr := run(append([]string{"compare", "--format", "json"}, args...)...)
		var doc struct {
			Summary map[string]int
			Tensors []struct{ Status string }
			Ignored []json.RawMessage
			Errors  []json.RawMessage
		}
		if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
			t.Fatalf("%v: %v: %s", args, err, stderr)
		}
		s := doc.Summary
		byStatus := map[string]int{}
		for _, tr := range doc.Tensors {
			byStatus[tr.Status]++
		}
		sum := s["match"] + s["mismatch"] + s["shape_mismatch"] + s["dtype_mismatch"] + s["missing"] + s["extra"] + s["errors"] + s["ignored"] + s["not_compared"]
		switch {
		case sum != s["pairs"]:
			t.Errorf("%v: statuses add up to %d, pairs %d: %v", args, sum, s["pairs"], s)
		case s["pairs"] != len(doc.Tensors)+len(doc.Ignored)+s["not_compared"]:
			t.Errorf("%v: pairs %d, but %d tensors, %d ignored, %d not compared listed", args, s["pairs"], len(doc.Tensors), len(doc.Ignored), s["not_compared"])
		case s["discovered"] != s["pairs"]+s["unreadable_inputs"] || s["errors"]+s["unreadable_inputs"] != len(doc.Errors):
			t.Errorf("%v: discovered %d, unreadable inputs %d, %d errors listed: %v", args, s["discovered"], s["unreadable_inputs"], len(doc.Errors), s)
		}
		for status, n := range byStatus {
			key := status
			if status == "error" {
				key = "errors"
			}
			if s[key] != n {
				t.Errorf("%v: %d tensors %s, summary says %d", args, n, status, s[key])
			}
		}
	}
}

// TestNothingComparedIsNoPass: two dump directories that hold nothing to
// compare (a dump script that wrote nothing) give exit 2 naming the first
// before comparing; runs whose every pair a policy ignores give exit 2
// saying so, never a pass.
func TestNothingComparedIsNoPass(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, run := range []string{"eager", "graph"} {
		if err := os.MkdirAll(filepath.Join(dir, run, "step_000000"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	code, stdout, stderr := run("compare", filepath.Join(dir, "eager"), filepath.Join(dir, "graph"))
	if code != 2 || stdout != "" || !strings.Contains(stderr, filepath.Join(dir, "eager")+" holds no tensor files") {
		t.Errorf("empty runs: exit %d\n%s%s", code, stdout, stderr)
	}
	policy := filepath.Join(dir, "ignore.yaml")
	if err := os.WriteFile(policy, []byte("rules:\n  - match: {name: \"**\"}\n    ignore: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = run("compare", "--policy", policy, eagerRun, graphRun)
	if code != 2 || !strings.Contains(stderr, "61 pairs ignored by the policy") {
		t.Errorf("every pair ignored: exit %d %s", code, stderr)
	}
}
