package diagnose_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/graphdiff/graphdiff/check"
	"github.com/graphdiff/graphdiff/diagnose"
	"github.com/graphdiff/graphdiff/judge"
	"github.com/graphdiff/graphdiff/loaders"
)

// TestInferenceReadsOtherBatches diagnoses served classifiers whose dumps
// hold only logits and probabilities per batch. With no state carried
// from batch to batch, a graphed output equal to eager's of another step
// says which batch the graph read: a static input rebound instead of
// copied, whose freed block later batches land in or not (steps 2 and 4
// read the batch before, 3 and 5 their own), is stale_input, and its
// agreeing steps refute a copy after the replay; that copy itself (every
// step the batch before) is input_lag.
func TestInferenceReadsOtherBatches(t *testing.T) {
	t.Parallel()
	_, rep := diagnoseRun(t, "userloops/infer/infer_stale_input")
	if len(rep.Causes) == 0 || rep.Causes[0].ID != diagnose.StaleInput || rep.Causes[0].Confidence < 0.9 {
		t.Fatalf("infer_stale_input: causes %+v, want stale_input first at 0.9", rep.Causes)
	}
	ev := strings.Join(rep.Causes[0].Evidence, "\n")
	for _, want := range []string{"at step 2 eager's of step 1", "at step 4 eager's of step 3", "at steps 3, 5, after the break, they equal eager's of the same step"} {
		if !strings.Contains(ev, want) {
			t.Errorf("infer_stale_input: evidence does not say %q:\n%s", want, ev)
		}
	}
	notNamed(t, "userloops/infer/infer_stale_input", diagnose.InputLag) // steps after the break read their own batch
	_, rep = diagnoseRun(t, "userloops/infer/infer_tab_input_lag")
	if len(rep.Causes) == 0 || rep.Causes[0].ID != diagnose.InputLag || rep.Causes[0].Fit < 0.99 {
		t.Fatalf("infer_tab_input_lag: causes %+v, want input_lag first, its prediction removing the whole difference", rep.Causes)
	}
	if ev := strings.Join(rep.Causes[0].Evidence, "\n"); !strings.Contains(ev, "outputs at step 1: graph vs eager step 0 differ by 0 (relative L2)") {
		t.Errorf("infer_tab_input_lag: evidence does not name the outputs of the step before:\n%s", ev)
	}
}

// TestHeldChannelsFromOutputs: a per-class prior adjustment rebound
// instead of copied leaves the served logits eager's shifted class by
// class; reassigned_tensor is named from the outputs alone. A temperature
// frozen at capture changes the probabilities by no per-class map and
// gets no such claim.
func TestHeldChannelsFromOutputs(t *testing.T) {
	t.Parallel()
	_, rep := diagnoseRun(t, "userloops/infer/infer_prior_rebound")
	if len(rep.Causes) == 0 || rep.Causes[0].ID != diagnose.ReassignedTensor {
		t.Fatalf("infer_prior_rebound: causes %+v, want reassigned_tensor first", rep.Causes)
	}
	if ev := strings.Join(rep.Causes[0].Evidence, "\n"); !strings.Contains(ev, "step 3: the graphed batch/logits is eager's scaled and shifted channel by channel (axis 1, 4 channels)") {
		t.Errorf("infer_prior_rebound: evidence does not state the per-class fit:\n%s", ev)
	}
	notNamed(t, "userloops/infer/infer_temp_captured", diagnose.ReassignedTensor)
}

// TestInferenceFirstBatchIsAReplay: an inference run's first dumped
// batch is already a replay, so a difference there (Monte Carlo dropout
// drawn with numpy at capture) is no sign of memory read before it was
// written: no cause is named, and the answer lists random values frozen
// at capture with the dump that would tell.
func TestInferenceFirstBatchIsAReplay(t *testing.T) {
	t.Parallel()
	_, rep := diagnoseRun(t, "userloops/infer/infer_numpy_dropout")
	if len(rep.Causes) > 0 {
		t.Fatalf("infer_numpy_dropout: causes %+v, want none", rep.Causes)
	}
	u := rep.Unexplained
	if u == nil || u.Step != 0 || len(u.Candidates) == 0 || u.Candidates[0] != diagnose.FrozenRNG || !strings.Contains(strings.Join(u.Dumps, "\n"), "the random tensors (dropout masks, noise) at two batches") {
		t.Fatalf("infer_numpy_dropout: unexplained %+v, want frozen_rng first with the random tensors to dump", u)
	}
}

// TestTemperatureFromOutputs: a served classifier's temperature, a Python
// float changed from 1.0 to 0.6 after capture, leaves the logits equal and
// the probabilities those of the captured temperature. Compared as
// centered log-probabilities, the graph's are eager's × 0.6 from the
// break on: captured_scalar, its prediction removing the whole difference.
// A per-class shift of the logits is no scale and gets no such claim.
func TestTemperatureFromOutputs(t *testing.T) {
	t.Parallel()
	_, rep := diagnoseRun(t, "userloops/infer/infer_temp_captured")
	if len(rep.Causes) == 0 || rep.Causes[0].ID != diagnose.CapturedScalar || rep.Causes[0].Confidence < 0.9 || rep.Causes[0].Fit < 0.99 || rep.Causes[0].FitSteps != 3 {
		t.Fatalf("infer_temp_captured: causes %+v, want captured_scalar first at 0.9, fitting 3 steps", rep.Causes)
	}
	ev := strings.Join(rep.Causes[0].Evidence, "\n")
	for _, want := range []string{"from step 3 on, the graphed outputs that depart (preds/probs) are the eager ones × 0.6 ", "preds/probs compared as centered log-probabilities (log p less its row's mean), which a temperature scales"} {
		if !strings.Contains(ev, want) {
			t.Errorf("infer_temp_captured: evidence does not say %q:\n%s", want, ev)
		}
	}
	notNamed(t, "userloops/infer/infer_prior_rebound", diagnose.CapturedScalar)
}

// TestTemperatureWithinNoise: served under autocast, a temperature frozen
// at capture moves a confident classifier's probabilities by 0.2%, inside
// the bf16 limit, so the comparison passes; their log-odds are still
// eager's × 0.6 exactly, which rounding never gives: a captured_scalar
// warning that still says how near its limit the largest difference is,
// and no claim that the differences are rounding. A scale of
// bf16 parameter updates at cosine 0.95 that removes a fifth of their
// difference is no such warning.
func TestTemperatureWithinNoise(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("..", "testdata", "userloops", "infer", "infer_resnet_autocast_temp_captured")
	var opts check.Options
	opts.Resolver.Overrides.ComputeDType = loaders.BFloat16
	c, err := check.Runs(filepath.Join(dir, "eager"), filepath.Join(dir, "graph"), opts)
	if err != nil {
		t.Fatal(err)
	}
	if c.Result.Verdict != judge.Pass {
		t.Fatalf("verdict %s, want pass (the change is inside the bf16 limit)", c.Result.Verdict)
	}
	if len(c.Causes) > 0 {
		t.Errorf("causes %+v, want none: the differences are a scale, not rounding", c.Causes)
	}
	if len(c.Warnings) != 1 || c.Warnings[0].ID != diagnose.CapturedScalar || !strings.Contains(strings.Join(c.Warnings[0].Evidence, "\n"), "are the eager ones × 0.6 ") {
		t.Errorf("warnings %+v, want captured_scalar, the outputs × 0.6", c.Warnings)
	} else if ev := strings.Join(c.Warnings[0].Evidence, "\n"); !strings.Contains(ev, "largest difference relative to its limit: preds/probs at step 6") {
		t.Errorf("the warning does not say how near its limit the largest difference is:\n%s", ev)
	}
	_, rep := diagnoseRun(t, "userloops/infer/infer_tab_temp_captured")
	if len(rep.Causes) == 0 || rep.Causes[0].ID != diagnose.CapturedScalar || !strings.Contains(strings.Join(rep.Causes[0].Evidence, "\n"), "outputs/probs compared as log-odds") {
		t.Errorf("infer_tab_temp_captured: causes %+v, want captured_scalar from the probabilities' log-odds", rep.Causes)
	}
	if _, rep := diagnoseRun(t, "userloops/vit/vit_tutorial_bf16_ok"); len(rep.Warnings) > 0 {
		t.Errorf("vit_tutorial_bf16_ok: warnings %+v, want none", rep.Warnings)
	}
}
