package diagnose_test

import (
	"math"
	"strings"
	"testing"

	"github.com/graphdiff/graphdiff/diagnose"
)

// TestSparseDumpsLocateNoBranch: with dumps every 4 steps, a batch of
// another size at a skipped step (tcn, step 609) and a learning rate
// frozen at capture that eager drops at a skipped step (tab, step 509)
// part the runs at the next dumped step, where the parameters carry the
// difference on as another function's would. No branch is named, nor a
// batch of another size at that step alone (resnet_bn's dropped learning
// rate: the difference at the next dump, 4 steps on, says nothing of one
// step's); where
// no cause is (the short batch), the answer says the runs part between
// two dumped steps and that every step between them would tell; the
// learning rate is named from its updates' scale
// (TestSparseLearningRateScale).
func TestSparseDumpsLocateNoBranch(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		run, gap string
	}{
		{"userloops/tcn/tcn_every4_partial_batch", "every step from 607 to 611 (these dumps are 4 steps apart)"},
		{"userloops/tab/tab_every4_lr_drop_captured", "every step from 507 to 511 (these dumps are 4 steps apart)"},
		{"userloops/resnet_bn/resnet_bn_every4_lr_drop_captured", "every step from 1207 to 1211 (these dumps are 4 steps apart)"},
	} {
		_, rep := diagnoseRun(t, tc.run)
		for _, c := range rep.Causes {
			if c.ID == diagnose.CapturedBranch || c.ID == diagnose.DynamicShape && !strings.Contains(tc.run, "partial_batch") {
				t.Errorf("%s: %s named at %.2f across a gap in the dumps", tc.run, c.ID, c.Confidence)
			}
		}
		if u := rep.Unexplained; len(rep.Causes) == 0 && (u == nil || !strings.Contains(strings.Join(u.Dumps, "\n"), tc.gap)) {
			t.Errorf("%s: unexplained %+v, want the dumps to name %q", tc.run, u, tc.gap)
		}
	}
}

// TestAccumulatedGradsAreNoStaleBatch: gradients accumulated over steps
// that dumps every 4 steps skip change little from dump to dump, as one
// batch's would, but grow above every eager gradient (norms 6.5–24
// against 1.6–4.1), which one batch fitted over and over does not:
// stale_input is not named.
func TestAccumulatedGradsAreNoStaleBatch(t *testing.T) {
	t.Parallel()
	notNamed(t, "userloops/gnn/gnn_every4_grad_accumulation", diagnose.StaleInput)
	namedFirst(t, "userloops/gnn/gnn_every4_stale_input", diagnose.StaleInput)
}

// TestMidRunFirstStepAccumulation: gradients accumulated since the
// replays before dumps that begin mid-run (gnn, dumps every 4 steps from
// 703) differ at the first dumped step while the loss agrees, as a
// graphed backward that accumulates leaves them too; the dumps cannot
// tell the two apart, and the answer names both at one confidence. The
// gradients there are close to a scale of eager's (cosine 0.97), which at
// the first step of such dumps is no sign of a value frozen inside the
// network: captured_scalar is not named.
func TestMidRunFirstStepAccumulation(t *testing.T) {
	t.Parallel()
	const run = "userloops/gnn/gnn_every4_grad_accumulation"
	_, rep := diagnoseRun(t, run)
	if len(rep.Causes) < 2 || rep.Causes[0].ID != diagnose.CallablesAccumulation || rep.Causes[1].ID != diagnose.GradAccumulation ||
		rep.Causes[0].Confidence != rep.Causes[1].Confidence {
		t.Fatalf("causes %+v, want callables_accumulation and grad_accumulation at one confidence", rep.Causes)
	}
	notNamed(t, run, diagnose.CapturedScalar)
}

// TestSparseLearningRateScale: a learning rate frozen at capture that
// eager drops between two dumps 4 steps apart moves the parameters apart
// over the skipped steps, so the gradients at the next dump differ
// (1.9%), but the updates differ far more (β = +1.6, beyond what the
// verdict's update rule lets that difference explain): their scale is
// still the finding, captured_scalar, with the gradients' difference
// stated instead of "gradients agree".
func TestSparseLearningRateScale(t *testing.T) {
	t.Parallel()
	_, rep := diagnoseRun(t, "userloops/tab/tab_every4_lr_drop_captured")
	if len(rep.Causes) == 0 || rep.Causes[0].ID != diagnose.CapturedScalar || rep.Causes[0].Fit < 1-1/math.Sqrt2 {
		t.Fatalf("causes %+v, want captured_scalar first, its scale fitting", rep.Causes)
	}
	ev := strings.Join(rep.Causes[0].Evidence, "\n")
	if !strings.Contains(ev, "step 511: the gradients differ by 0.0186 (relative L2), the parameter updates by far more") || strings.Contains(ev, "gradients agree") {
		t.Errorf("evidence does not state the gradients' difference:\n%s", ev)
	}
}

// TestOptimizerStepDeparts: where the dumps skip steps, a learning rate
// frozen at capture moves the parameters, and with them the gradients,
// apart before the next dump (moe: 21%, lstm: 28%), and the updates are
// no single scale of eager's; but they depart far beyond what the
// gradients' difference lets them (β = +8.84 against 0.214, +2.03
// against 0.278): captured_scalar at 0.6. The bugs that change the
// gradients move the updates less than the gradients (frozen draws, a
// stale batch, accumulated gradients) and are not named so.
func TestOptimizerStepDeparts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ run, want string }{
		{"userloops/moe/moe_every2_lr_drop_captured", "step 1007: the parameter updates depart from eager's by β = +8.84, beyond the limit 0.214"},
		{"userloops/lstm/lstm_every4_lr_drop_captured", "step 411: the parameter updates depart from eager's by β = +2.03, beyond the limit 0.278"},
	} {
		_, rep := diagnoseRun(t, tc.run)
		if len(rep.Causes) == 0 || rep.Causes[0].ID != diagnose.CapturedScalar {
			t.Errorf("%s: causes %+v, want captured_scalar first", tc.run, rep.Causes)
			continue
		}
		if ev := strings.Join(rep.Causes[0].Evidence, "\n"); !strings.Contains(ev, tc.want) {
			t.Errorf("%s: evidence does not say %q:\n%s", tc.run, tc.want, ev)
		}
	}
	for _, run := range []string{"corpus/cnn_bn/cnn_bn_frozen_rng", "corpus/cnn_bn/cnn_bn_stale_input", "scenarios/grad_accumulation", "userloops/lstm/lstm_every4_grad_accumulation"} {
		notNamed(t, run, diagnose.CapturedScalar)
	}
}
