package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMixedDTypes compares the same two training steps dumped by PyTorch
// in bfloat16, in float32 (.float()) and in float64 (.double()): pairs
// stored in two dtypes compare in the coarser and pass, the report says
// so; --fail-on-dtype-change, or a policy rule with fail_on_dtype_change,
// fails them; a shape difference still fails.
func TestMixedDTypes(t *testing.T) {
	t.Parallel()
	dir := "../../testdata/dtypes/mixed"
	run := func(args ...string) (int, string) {
		code, out, stderr := run(append([]string{"compare"}, args...)...)
		if code == 2 {
			t.Fatalf("%v: %s", args, stderr)
		}
		return code, out
	}
	for _, pair := range [][2]string{{"bf16", "f32"}, {"f32", "f64"}, {"bf16", "f64"}} {
		code, out := run(filepath.Join(dir, pair[0]), filepath.Join(dir, pair[1]))
		if code != 0 || !strings.Contains(out, "18 pairs stored in two dtypes, compared in the coarser") {
			t.Errorf("%s vs %s: exit %d\n%s", pair[0], pair[1], code, out)
		}
	}
	statuses := func(out string) map[string]int {
		var doc struct {
			Summary struct {
				Match         int `json:"match"`
				DTypeMismatch int `json:"dtype_mismatch"`
				ShapeMismatch int `json:"shape_mismatch"`
				DTypeChanged  int `json:"dtype_changed"`
			} `json:"summary"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatal(err)
		}
		s := doc.Summary
		return map[string]int{"match": s.Match, "dtype_mismatch": s.DTypeMismatch, "shape_mismatch": s.ShapeMismatch, "dtype_changed": s.DTypeChanged}
	}
	code, out := run("--format", "json", "--fail-on-dtype-change", filepath.Join(dir, "f32"), filepath.Join(dir, "f64"))
	if s := statuses(out); code != 1 || s["dtype_mismatch"] != 18 || s["dtype_changed"] != 18 {
		t.Errorf("--fail-on-dtype-change: exit %d, %v", code, s)
	}
	policy := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(policy, []byte("rules:\n  - match: {kind: param}\n    fail_on_dtype_change: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out = run("--format", "json", "--policy", policy, filepath.Join(dir, "f32"), filepath.Join(dir, "f64"))
	if s := statuses(out); code != 1 || s["dtype_mismatch"] != 8 || s["match"] != 10 {
		t.Errorf("policy failing parameters' dtype change: exit %d, %v", code, s)
	}
	code, out = run("--format", "json", filepath.Join(dir, "f32"), filepath.Join(dir, "reshaped"))
	if s := statuses(out); code != 1 || s["shape_mismatch"] != 2 {
		t.Errorf("a transposed parameter: exit %d, %v", code, s)
	}
}
