package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sbinet/npyio"
)

// copyScenario copies a corpus scenario's two runs into a temporary
// directory and returns it.
func copyScenario(t *testing.T, scenario string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("../../testdata/corpus", scenario))); err != nil {
		t.Fatal(err)
	}
	return dir
}

// causesOf runs compare --format json and returns the exit code, the
// causes' IDs and confidences, and the text report.
func causesOf(t *testing.T, dir string) (int, []string, []float64, string) {
	t.Helper()
	code, out, stderr := run("compare", filepath.Join(dir, "eager"), filepath.Join(dir, "graph"), "--format", "json")
	var doc struct {
		Causes []struct {
			ID         string  `json:"id"`
			Confidence float64 `json:"confidence"`
		} `json:"causes"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("exit %d: %v\n%s", code, err, stderr)
	}
	var ids []string
	var confs []float64
	for _, c := range doc.Causes {
		ids = append(ids, c.ID)
		confs = append(confs, c.Confidence)
	}
	_, text, _ := run("compare", filepath.Join(dir, "eager"), filepath.Join(dir, "graph"))
	return code, ids, confs, text
}

// TestRunCutShort: a graphed run one step shorter than the eager run (its
// last step directory gone, its loss curve one value shorter, as numpy
// writes it) fails with missing_steps, not a shape bug, and no step-less
// placeholder reaches the user.
func TestRunCutShort(t *testing.T) {
	t.Parallel()
	dir := copyScenario(t, "gpt2/gpt2_fp32_adam_ok")
	if err := os.RemoveAll(filepath.Join(dir, "graph", "step_000007")); err != nil {
		t.Fatal(err)
	}
	curve := filepath.Join(dir, "graph", "losses.npy")
	f, err := os.Open(curve)
	if err != nil {
		t.Fatal(err)
	}
	var losses []float32
	err = npyio.Read(f, &losses)
	f.Close()
	if err != nil || len(losses) != 8 {
		t.Fatalf("%d losses: %v", len(losses), err)
	}
	w, err := os.Create(curve)
	if err != nil {
		t.Fatal(err)
	}
	if err := npyio.Write(w, losses[:7]); err != nil {
		t.Fatal(err)
	}
	w.Close()
	code, ids, confs, text := causesOf(t, dir)
	if code != 1 || len(ids) == 0 || ids[0] != "missing_steps" || confs[0] < 0.75 {
		t.Fatalf("exit %d, causes %v %v, want 1 and missing_steps first\n%s", code, ids, confs, text)
	}
	for _, bad := range []string{"dynamic_shape", "-1", "precision_noise"} {
		if strings.Contains(text, bad) {
			t.Errorf("the report says %q:\n%s", bad, text)
		}
	}
	if !strings.Contains(text, "step 7: every tensor of this step is only in the reference run") {
		t.Errorf("the report does not name the missing step:\n%s", text)
	}
}

// TestStaleInputDumpedAsRead: a graphed run that reads a stale input,
// with its inputs dumped as the graph read them (the capture batch at
// every step, here the graphed run's own step-0 input files), is named
// stale_input with high confidence, not output_aliasing.
func TestStaleInputDumpedAsRead(t *testing.T) {
	t.Parallel()
	dir := copyScenario(t, "mlp/mlp_stale_input")
	first, err := os.ReadFile(filepath.Join(dir, "graph", "step_000000", "inputs", "x.npy"))
	if err != nil {
		t.Fatal(err)
	}
	steps, _ := filepath.Glob(filepath.Join(dir, "graph", "step_*"))
	if len(steps) < 4 {
		t.Fatalf("%d steps", len(steps))
	}
	for _, s := range steps {
		if err := os.WriteFile(filepath.Join(s, "inputs", "x.npy"), first, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, ids, confs, text := causesOf(t, dir)
	if code != 1 || len(ids) == 0 || ids[0] != "stale_input" || confs[0] < 0.9 {
		t.Fatalf("exit %d, causes %v %v, want stale_input first at 0.9 or more\n%s", code, ids, confs, text)
	}
	if !strings.Contains(text, "the graphed run's are identical at every step") {
		t.Errorf("the evidence does not name the frozen inputs:\n%s", text)
	}
	if strings.Contains(text, "output_aliasing") {
		t.Errorf("output_aliasing named:\n%s", text)
	}
}

// TestCapturableRAdam compares a correct run trained from step 0 with
// RAdam, the graph's optimizer capturable: from optimizer step 6, where
// RAdam starts rectifying its update, the capturable implementation's
// float32 arithmetic makes every update 0.57% smaller than the eager
// implementation's while every gradient agrees. That departure is what
// the rectification's float32 rounding predicts, so the comparison
// passes and the JSON report says how much of each step's update ratio
// it explained; a learning rate held at capture, here SGD's, still fails.
func TestCapturableRAdam(t *testing.T) {
	t.Parallel()
	dir := "../../testdata/userloops/convnext/convnext_recipe_radam_ok/"
	code, js, stderr := run("compare", "--format", "json", dir+"eager", dir+"graph")
	if code != 0 {
		t.Fatalf("exit %d, want 0 (pass): %s\n%.2000s", code, stderr, js)
	}
	var rep struct {
		Steps []struct {
			Step        int      `json:"step"`
			UpdateRatio *float64 `json:"update_ratio"`
			RectShift   float64  `json:"rect_shift"`
		} `json:"steps"`
		Warnings []struct {
			ID string `json:"id"`
		} `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(js), &rep); err != nil {
		t.Fatal(err)
	}
	for _, w := range rep.Warnings { // the rounding it explains is no scale factor
		if w.ID == "captured_scalar" {
			t.Errorf("a captured_scalar warning on the updates RAdam's rectification scales")
		}
	}
	for _, s := range rep.Steps {
		switch {
		case s.Step < 5 && s.RectShift != 0:
			t.Errorf("step %d (optimizer step %d, not rectified): rect_shift %g", s.Step, s.Step+1, s.RectShift)
		case s.Step == 5 && (s.UpdateRatio == nil || *s.UpdateRatio > -0.005 || s.RectShift != *s.UpdateRatio):
			t.Errorf("step 5: update ratio %v, rect_shift %g: want about -0.0057, all of it explained", s.UpdateRatio, s.RectShift)
		}
	}
	dir = "../../testdata/userloops/vit/vit_recipe_nesterov_lr_drop_captured/"
	if code, out, _ := run("compare", dir+"eager", dir+"graph"); code != 1 || !strings.Contains(out, "likely cause: captured_scalar") {
		t.Errorf("a learning rate held at capture: exit %d\n%s", code, out)
	}
}

// TestHyperparameterAsTensor compares checkpoints whose graphed run keeps
// the learning rate in a tensor (a capturable optimizer fed by a
// schedule) while the eager run keeps a Python number: the graphed run's
// optimizer state dict holds param_groups/0/lr, the eager one's nothing
// graphdiff reads. That is one setting in two containers, not a tensor
// one run lost: it is listed as ignored, and the runs part where the
// momentum frozen at capture first acts (step 605), not at the first
// dumped step.
func TestHyperparameterAsTensor(t *testing.T) {
	t.Parallel()
	dir := "../../testdata/userloops/convnext/convnext_onecycle_tutorial_betas_captured/"
	code, js, stderr := run("compare", "--format", "json", dir+"eager", dir+"graph")
	if code != 1 {
		t.Fatalf("exit %d, want 1: %s", code, stderr)
	}
	var rep struct {
		FirstDivergence struct {
			Step int `json:"step"`
		} `json:"first_divergence"`
		Ignored []struct {
			Name string `json:"name"`
		} `json:"ignored"`
	}
	if err := json.Unmarshal([]byte(js), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.FirstDivergence.Step != 605 {
		t.Errorf("first divergence at step %d, want 605", rep.FirstDivergence.Step)
	}
	if len(rep.Ignored) != 5 || rep.Ignored[0].Name != "checkpoint/optimizer_state_dict/param_groups/0/lr" {
		t.Errorf("ignored %+v, want the graphed run's lr tensor at each of the 5 steps", rep.Ignored)
	}
}

// TestMomentumFrozenInSavedState compares Hugging Face checkpoints (model
// and optimizer.pt, no gradients) of a run whose loop cycles Adam's β1 as
// OneCycleLR does while the graph keeps the β1 of capture: at step 505
// the graphed run's moments follow m_k = 0.85·m_{k−1} + 0.15·g_k with
// eager's gradient, to rounding, and not the β1 its optimizer.pt saves,
// and the answer names a number frozen at capture.
func TestMomentumFrozenInSavedState(t *testing.T) {
	t.Parallel()
	// SGD with Nesterov momentum from step 0, the checkpoint recipe: the
	// saved momentum buffers rule out RAdam, whose rectification at step
	// 5 would otherwise allow the first departure
	nesterov := "../../testdata/userloops/vit/vit_recipe_nesterov_onecycle_tutorial_captured/"
	if _, out, _ := run("compare", nesterov+"eager", nesterov+"graph"); !strings.Contains(out, "first divergence: step 5,") ||
		!strings.Contains(out, "likely cause: captured_scalar (confidence 0.90)") || !strings.Contains(out, "follow m_k = 0.85·m_{k−1} + 1·g_k") {
		t.Errorf("SGD Nesterov:\n%s", out)
	}
	dir := "../../testdata/userloops/tab/tab_onecycle_hf_betas_captured/"
	code, out, stderr := run("compare", dir+"eager", dir+"graph")
	if code != 1 {
		t.Fatalf("exit %d, want 1: %s", code, stderr)
	}
	for _, want := range []string{
		"first divergence: step 505,",
		"likely cause: captured_scalar (confidence 0.90)",
		"the graphed run's optimizer moments follow m_k = 0.85·m_{k−1} + 0.15·g_k",
		"not the rule its saved param groups state, m_k = 0.850616·m_{k−1} + 0.149384·g_k",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
}
