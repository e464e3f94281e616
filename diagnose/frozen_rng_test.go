package diagnose_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/graphdiff/graphdiff/diagnose"
)

// TestFrozenRNGQuotesItsTests diagnoses runs whose graph froze a random
// draw at capture (numpy noise in a pinned buffer, a mixup factor drawn
// in Python, a diffusion timestep drawn in Python): frozen_rng is named,
// and its evidence gives the number of each test of the causes that
// break at the first replay the same way, not a bare claim. A tensor made
// for every batch and rebound instead of copied holds the capture batch's
// values the same way: it follows as also possible, lower, with the dump
// that would tell the two apart as its last line.
func TestFrozenRNGQuotesItsTests(t *testing.T) {
	t.Parallel()
	for _, dir := range []string{
		"userloops/unet_gn/unet_gn_cpu_noise",
		"userloops/vit/vit_mixup_frozen",
		"userloops/unet_gn/unet_gn_python_timestep",
		"scenarios/frozen_rng_dropout",
	} {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Parallel()
			_, rep := diagnoseRun(t, dir)
			if len(rep.Causes) == 0 || rep.Causes[0].ID != diagnose.FrozenRNG {
				t.Fatalf("causes %+v, want frozen_rng first", rep.Causes)
			}
			ev := strings.Join(rep.Causes[0].Evidence, "\n")
			for _, want := range []string{"lag: the graph's gradients are ", "no stale batch: the graph's gradients change from step to step ",
				"no accumulation: the graph's gradient at step ", "not dumped, and would confirm it: the random tensors"} {
				if !strings.Contains(ev, want) {
					t.Errorf("evidence does not say %q:\n%s", want, ev)
				}
			}
			if len(rep.Causes) < 2 || rep.Causes[1].ID != diagnose.ReassignedTensor || rep.Causes[1].Confidence >= rep.Causes[0].Confidence {
				t.Fatalf("causes %+v, want reassigned_tensor second, below frozen_rng", rep.Causes)
			}
			alt := rep.Causes[1].Evidence
			if last := alt[len(alt)-1]; !strings.Contains(last, "rebound instead of copied") || !strings.Contains(last, "would tell them apart: that tensor as the graph read it at two steps") {
				t.Errorf("reassigned_tensor's last line does not name the dump that decides: %q", last)
			}
		})
	}
}

// TestFitNamesOnlyWhatFits checks causes against their predictions on
// labelled runs: an input lag's prediction (graph step k = eager step k−1)
// removes most of the gradients' difference and says so; a stale batch,
// whose signature (the graph's loss below eager's) a reassigned buffer's
// run shows too, is not named there, since its prediction (the graph's
// values do not change with the batch) removes nothing.
func TestFitNamesOnlyWhatFits(t *testing.T) {
	t.Parallel()
	_, rep := diagnoseRun(t, "corpus/gpt2/gpt2_input_lag")
	if len(rep.Causes) == 0 || rep.Causes[0].ID != diagnose.InputLag || rep.Causes[0].FitSteps != 7 || rep.Causes[0].Fit < 0.7 {
		t.Fatalf("causes %+v, want input_lag first with a fit of at least 0.7 over 7 steps", rep.Causes)
	}
	if ev := strings.Join(rep.Causes[0].Evidence, "\n"); !strings.Contains(ev, "the prediction graph[k] = eager[k−1] removes 81% of the gradients' difference from eager (median of 7 steps") {
		t.Errorf("evidence does not state the fit:\n%s", ev)
	}
	_, rep = diagnoseRun(t, "corpus/embed/embed_reassigned_buffer")
	for _, c := range rep.Causes {
		if c.ID == diagnose.StaleInput {
			t.Errorf("stale_input named with fit %.2f over %d steps", c.Fit, c.FitSteps)
		}
	}
	if len(rep.Causes) == 0 || rep.Causes[0].ID != diagnose.ReassignedTensor {
		t.Errorf("causes %+v, want reassigned_tensor first", rep.Causes)
	}
}

// TestMidRunDumps diagnoses runs whose dumps begin after the bug first
// acted (resumed, after the recipe's warm-up), so that their first dumped
// step already differs: the bug whose prediction fits the steps after is
// named, and the first step's difference is not blamed on uninitialized
// memory besides.
func TestMidRunDumps(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ dir, cause string }{
		{"userloops/tcn/tcn_input_lag", diagnose.InputLag},
		{"userloops/tcn/tcn_stale_input", diagnose.StaleInput},
		{"userloops/resnet_bn/resnet_bn_input_lag", diagnose.InputLag},
		{"userloops/moe/moe_stale_input", diagnose.StaleInput},
		{"userloops/moe/moe_grad_accumulation", diagnose.GradAccumulation},
	} {
		t.Run(filepath.Base(c.dir), func(t *testing.T) {
			t.Parallel()
			_, rep := diagnoseRun(t, c.dir)
			if len(rep.Causes) == 0 || rep.Causes[0].ID != c.cause {
				t.Fatalf("causes %+v, want %s first", rep.Causes, c.cause)
			}
			for _, other := range rep.Causes {
				if other.ID == diagnose.UninitializedMemory {
					t.Errorf("uninitialized_memory named too: %+v", other)
				}
			}
		})
	}
}

// TestFrozenRNGAfterDumpedWarmup diagnoses a dropout mask drawn with numpy
// inside the captured step, with the warm-up steps dumped: the runs agree
// through warm-up and capture and break at the first replay, a break
// after agreeing steps as a branch gives, but the loss's difference then
// varies 4.9× from step to step, as fixed draws against fresh ones make
// it, so random values frozen at capture come first. A branch, whose
// difference holds steady, gets no such alternative.
func TestFrozenRNGAfterDumpedWarmup(t *testing.T) {
	t.Parallel()
	_, rep := diagnoseRun(t, "userloops/tab/tab_numpy_dropout_warmup")
	if len(rep.Causes) < 2 || rep.Causes[0].ID != diagnose.FrozenRNG || rep.Causes[1].ID != diagnose.CapturedBranch {
		t.Fatalf("causes %+v, want frozen_rng, then captured_branch", rep.Causes)
	}
	if ev := strings.Join(rep.Causes[0].Evidence, "\n"); !strings.Contains(ev, "varies 4.87× over the 4 steps from step 504 on") ||
		!strings.Contains(ev, "if the graph was captured at the step before 504") {
		t.Errorf("evidence does not say how the loss's difference varies, or where the capture would be:\n%s", ev)
	}
	_, rep = diagnoseRun(t, "corpus/mlp/mlp_captured_branch")
	for _, c := range rep.Causes {
		if c.ID == diagnose.FrozenRNG {
			t.Errorf("a steady branch lists frozen_rng: %+v", rep.Causes)
		}
	}
}
