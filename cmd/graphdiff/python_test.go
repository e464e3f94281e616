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
// first (the line that puts python/ on PYTHONPATH, run in the clone by a
// shell) and runs python/tests/check_dump.py from elsewhere against it:
// what people have in hand (loss.item(), a bare input tensor, a list of
// outputs, numbers) is taken; a wrong call of each kind is refused with a
// message; files are 0644; an earlier dump is refused, then cleared;
// optimizer state and buffers are dumped; ranks and safetensors work;
// nudge moves every parameter by one ULP. Then graphdiff reads what it
// wrote: the .npy and safetensors dumps of the same run agree, rank N
// pairs with rank N, and the nudged run is a baseline.
func TestDumpHelperPackage(t *testing.T) {
	t.Parallel()
	py := torchPython(t)
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	out := filepath.Join(tmp, "runs")
	check := exec.Command("sh", "-c", `cd "$ROOT" && `+dumpReadmeLine(t, "export PYTHONPATH=")+
		` && cd "$TMP" && exec "$PY" "$ROOT/python/tests/check_dump.py" "$OUT"`)
	check.Env = append(os.Environ(), "ROOT="+root, "TMP="+tmp, "PY="+py, "OUT="+out)
	var stderr strings.Builder
	check.Stderr = &stderr
	stdout, err := check.Output()
	if err != nil {
		t.Fatalf("check_dump.py: %v\n%s%s", err, stdout, stderr.String())
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
	if installed := filepath.Join(root, "python", "graphdiff_dump"); !strings.HasPrefix(res.Module, installed) {
		t.Errorf("imported %s, not %s", res.Module, installed)
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

// TestDumpHelperPip installs the dump helper as a pip package the way its
// README says, in a new virtual environment (with the system's packages:
// torch and numpy) and with no package index: the build needs nothing
// that is not there already, and the package imports from the
// environment.
func TestDumpHelperPip(t *testing.T) {
	t.Parallel()
	py := torchPython(t)
	tmp := t.TempDir()
	venv := filepath.Join(tmp, "venv")
	if out, err := exec.Command(py, "-m", "venv", "--system-site-packages", venv).CombinedOutput(); err != nil {
		if os.Getenv("GRAPHDIFF_PYTHON_TESTS") == "1" {
			t.Fatalf("no virtual environment with pip (apt-get install python3-venv): %v\n%s", err, out)
		}
		t.Skipf("no virtual environment with pip: %v", err)
	}
	clone := filepath.Join(tmp, "clone")
	if err := os.CopyFS(filepath.Join(clone, "python"), os.DirFS("../../python")); err != nil { // pip builds in the source tree
		t.Fatal(err)
	}
	var env []string // the package must come from the environment, not a path
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PYTHONPATH=") {
			env = append(env, kv)
		}
	}
	env = append(env, "PIP_NO_INDEX=1", "CLONE="+clone, "VENV="+venv)
	install := exec.Command("sh", "-c", `cd "$CLONE" && . "$VENV/bin/activate" && `+dumpReadmeLine(t, "python3 -m pip install"))
	install.Env = env
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("pip install: %v\n%s", err, out)
	}
	imp := exec.Command(filepath.Join(venv, "bin", "python"), "-c", "import graphdiff_dump; print(graphdiff_dump.__file__)")
	imp.Env, imp.Dir = env, tmp
	got, err := imp.Output()
	if err != nil || !strings.HasPrefix(string(got), venv) {
		t.Errorf("import graphdiff_dump after pip install: %s %v, not from %s", got, err, venv)
	}
}

// dumpReadmeLine returns the line of python/README.md's shell blocks that
// starts with prefix: the install command its readers run.
func dumpReadmeLine(t *testing.T, prefix string) string {
	t.Helper()
	data, err := os.ReadFile("../../python/README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := strings.Split(string(data), "```")
	for i := 1; i < len(blocks); i += 2 {
		body, ok := strings.CutPrefix(blocks[i], "sh\n")
		if !ok {
			continue
		}
		for line := range strings.SplitSeq(body, "\n") {
			if strings.HasPrefix(line, prefix) {
				return line
			}
		}
	}
	t.Fatalf("python/README.md shows no shell line starting %q", prefix)
	return ""
}
