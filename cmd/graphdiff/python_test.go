package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// torchPython returns a Python with torch and numpy, or skips the test;
// with GRAPHDIFF_PYTHON_TESTS=1 (set by .ci/run) a missing one fails it.
func torchPython(t *testing.T) string {
	for _, p := range []string{"/usr/bin/python3", "python3"} {
		if err := exec.Command(p, "-c", "import torch, numpy").Run(); err == nil {
			return p
		}
	}
	if os.Getenv("GRAPHDIFF_PYTHON_TESTS") == "1" {
		t.Fatal("no python3 with torch and numpy (apt-get install python3-torch python3-numpy)")
	}
	t.Skip("no python3 with torch and numpy")
	return ""
}

// TestDumpHelper dumps two small training runs with python/graphdiff_dump.py
// (PyTorch on the CPU) and compares them: equal runs pass; a learning rate
// frozen in the second run fails at step 1 with captured_scalar on top; a
// scheduled buffer the second run's forward no longer reads (a tensor
// reassigned after capture) fails at step 1 with reassigned_tensor on top,
// the buffer named; bfloat16 runs dumped without ml_dtypes (raw bits plus
// the manifest) read as bfloat16.
func TestDumpHelper(t *testing.T) {
	py := torchPython(t)
	dir := t.TempDir()
	for _, args := range [][]string{{"ok"}, {"bug", "--bug", "lr"}, {"temp", "--bug", "temp"}, {"bf16", "--dtype", "bfloat16"}} {
		cmd := exec.Command(py, append([]string{"../../python/example_runs.py", filepath.Join(dir, args[0])}, args[1:]...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("example_runs.py %v: %v\n%s", args, err, out)
		}
	}
	code, _, stderr := run("compare", filepath.Join(dir, "ok", "eager"), filepath.Join(dir, "ok", "graph"))
	if code != 0 {
		t.Errorf("equal runs: exit %d %s", code, stderr)
	}
	code, stdout, _ := run("compare", "--format", "json", filepath.Join(dir, "bug", "eager"), filepath.Join(dir, "bug", "graph"))
	var doc struct {
		Verdict         string
		FirstDivergence *struct{ Step int } `json:"first_divergence"`
		Causes          []struct{ ID string }
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if code != 1 || doc.FirstDivergence == nil || doc.FirstDivergence.Step != 1 || len(doc.Causes) == 0 || doc.Causes[0].ID != "captured_scalar" {
		t.Errorf("frozen lr: exit %d, %+v", code, doc)
	}
	code, stdout, _ = run("compare", "--format", "json", filepath.Join(dir, "temp", "eager"), filepath.Join(dir, "temp", "graph"))
	var temp struct {
		FirstDivergence *struct{ Step int } `json:"first_divergence"`
		Causes          []struct {
			ID       string
			Evidence []string
		}
	}
	if err := json.Unmarshal([]byte(stdout), &temp); err != nil {
		t.Fatal(err)
	}
	if code != 1 || temp.FirstDivergence == nil || temp.FirstDivergence.Step != 1 || len(temp.Causes) == 0 ||
		temp.Causes[0].ID != "reassigned_tensor" || !strings.Contains(strings.Join(temp.Causes[0].Evidence, " "), "temp") {
		t.Errorf("reassigned buffer: exit %d, %+v", code, temp)
	}
	code, stdout, _ = run("inspect", "--format", "json", filepath.Join(dir, "bf16", "graph"))
	var ins struct {
		Tensors []struct{ Name, DType string }
	}
	if err := json.Unmarshal([]byte(stdout), &ins); err != nil || code != 0 {
		t.Fatalf("inspect: exit %d %v", code, err)
	}
	for _, tn := range ins.Tensors {
		if tn.Name == "params/0.weight" && tn.DType != "bfloat16" {
			t.Errorf("bf16 params read as %s", tn.DType)
		}
	}
}
