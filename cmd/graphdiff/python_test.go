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
	return pythonWith(t, "torch, numpy", "python3-torch python3-numpy")
}

// numpyPython returns a Python with numpy, likewise.
func numpyPython(t *testing.T) string { return pythonWith(t, "numpy", "python3-numpy") }

// pythonWith returns a Python that imports modules, or skips the test (or
// fails it, with GRAPHDIFF_PYTHON_TESTS=1, naming the Debian packages).
func pythonWith(t *testing.T, modules, packages string) string {
	for _, p := range []string{"/usr/bin/python3", "python3"} {
		if err := exec.Command(p, "-c", "import "+modules).Run(); err == nil {
			return p
		}
	}
	if os.Getenv("GRAPHDIFF_PYTHON_TESTS") == "1" {
		t.Fatalf("no python3 with %s (apt-get install %s)", modules, packages)
	}
	t.Skipf("no python3 with %s", modules)
	return ""
}

// TestDumpHelper dumps two small training runs with python/graphdiff_dump
// (PyTorch on the CPU) and compares them: equal runs pass; a learning rate
// frozen in the second run fails at step 1 with captured_scalar on top; a
// scheduled buffer the second run's forward no longer reads (a tensor
// reassigned after capture) fails at step 1 with reassigned_tensor on top,
// the buffer named; bfloat16 runs dumped without ml_dtypes (raw bits plus
// the manifest) read as bfloat16.
func TestDumpHelper(t *testing.T) {
	t.Parallel()
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

// TestDumpHelperPackage installs the dump helper the way its README says
// (pip install ./python, into a target directory here: Debian's Python is
// externally managed) and runs python/tests/check_dump.py against the
// installed package: what people have in hand (loss.item(), a bare input
// tensor, a list of outputs, numbers) is taken; a wrong call of each kind
// is refused with a message; files are 0644; an earlier dump is refused,
// then cleared; optimizer state and buffers are dumped; ranks and
// safetensors work; nudge moves every parameter by one ULP. Then graphdiff
// reads what it wrote: the .npy and safetensors dumps of the same run
// agree, rank N pairs with rank N, and the nudged run is a baseline.
func TestDumpHelperPackage(t *testing.T) {
	t.Parallel()
	py := torchPython(t)
	if err := exec.Command(py, "-m", "pip", "--version").Run(); err != nil {
		if os.Getenv("GRAPHDIFF_PYTHON_TESTS") == "1" {
			t.Fatal("no pip (apt-get install python3-pip python3-setuptools)")
		}
		t.Skip("no pip")
	}
	tmp := t.TempDir()
	src := filepath.Join(tmp, "src")
	if err := os.CopyFS(src, os.DirFS("../../python")); err != nil { // pip builds in the source tree
		t.Fatal(err)
	}
	site := filepath.Join(tmp, "site")
	install := exec.Command(py, "-m", "pip", "install", "--quiet", "--no-build-isolation", "--no-deps", "--target", site, src)
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("pip install ./python: %v\n%s", err, out)
	}
	out := filepath.Join(tmp, "runs")
	check := exec.Command(py, filepath.Join(src, "tests", "check_dump.py"), out)
	check.Env = append(os.Environ(), "PYTHONPATH="+site)
	stdout, err := check.Output()
	if err != nil {
		t.Fatalf("check_dump.py: %v\n%s", err, stdout)
	}
	var res struct {
		Module         string            `json:"module"`
		Mode           string            `json:"mode"`
		STFiles        []string          `json:"st_files"`
		OptimizerFiles []string          `json:"optimizer_files"`
		Buffers        []string          `json:"buffers"`
		Refused        string            `json:"refused"`
		AfterClear     []string          `json:"after_clear"`
		Wrong          map[string]string `json:"wrong"`
		OneCall        []string          `json:"onecall"`
		NudgeF32Moved  bool              `json:"nudge_f32_moved"`
		NudgeF32ULP    float64           `json:"nudge_f32_ulp"`
		NudgeBF16Moved bool              `json:"nudge_bf16_moved"`
	}
	if err := json.Unmarshal(stdout, &res); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	if !strings.HasPrefix(res.Module, site) {
		t.Errorf("imported %s, not the installed package", res.Module)
	}
	if res.Mode != "0o644" {
		t.Errorf("files written %s, want 0o644", res.Mode)
	}
	if !strings.Contains(strings.Join(res.STFiles, " "), "params.safetensors") || !strings.Contains(strings.Join(res.OptimizerFiles, " "), "exp_avg_sq.npy") ||
		len(res.Buffers) != 2 {
		t.Errorf("safetensors %v, optimizer state %v, buffers %v", res.STFiles, res.OptimizerFiles, res.Buffers)
	}
	if !strings.Contains(res.Refused, "holds an earlier dump") || !strings.Contains(res.Refused, "existing='clear'") || len(res.AfterClear) != 1 {
		t.Errorf("an earlier dump: refused %q, after clearing %v", res.Refused, res.AfterClear)
	}
	for _, k := range []string{"inputs_string", "loss_string", "model_dict", "optimizer_model", "step_negative", "existing_bad", "format_bad"} {
		if msg := res.Wrong[k]; !strings.Contains(msg, "graphdiff dump:") || !strings.Contains(msg, "want") && !strings.Contains(msg, "give") {
			t.Errorf("wrong call %s: %q", k, msg)
		}
	}
	if len(res.OneCall) != 2 || !res.NudgeF32Moved || res.NudgeF32ULP > 1.01 || !res.NudgeBF16Moved {
		t.Errorf("one call %v; nudge: float32 moved %v by at most %g ULP, bfloat16 moved %v", res.OneCall, res.NudgeF32Moved, res.NudgeF32ULP, res.NudgeBF16Moved)
	}
	if code, text, _ := run("compare", filepath.Join(out, "npy"), filepath.Join(out, "st")); code != 0 {
		t.Errorf(".npy vs safetensors dumps of the same run: exit %d\n%s", code, text)
	}
	code, js, _ := run("compare", "--format", "json", filepath.Join(out, "ranks"), filepath.Join(out, "ranks"))
	if code != 0 || !strings.Contains(js, `"rank_1/grads/0.weight"`) {
		t.Errorf("ranks: exit %d", code)
	}
	code, js, _ = run("compare", "--format", "json", "--baseline", filepath.Join(out, "nudged"), filepath.Join(out, "npy"), filepath.Join(out, "npy"))
	if code != 0 || strings.Contains(js, `"baseline_identical": true`) {
		t.Errorf("the nudged run as a baseline: exit %d, bit for bit equal %v", code, strings.Contains(js, `"baseline_identical": true`))
	}
}
