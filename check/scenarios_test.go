package check

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/graphdiff/graphdiff/diagnose"
	"github.com/graphdiff/graphdiff/judge"
	"github.com/graphdiff/graphdiff/loaders"
)

// TestBeatsElementwiseVerdict shows, on real runs, why graphdiff does not
// fail a pair for any element beyond tolerance, as
// torch.testing.assert_close does with the same tolerances: that rule
// fails the correct pure-bf16 Adam run (and even a second eager run against
// the first), while graphdiff passes them and still fails every bug.
func TestBeatsElementwiseVerdict(t *testing.T) {
	t.Parallel()
	elementwiseFails := func(r *judge.Result) bool {
		for _, tr := range r.Tensors {
			if tr.Metrics != nil && tr.Metrics.Mismatched > 0 {
				return true
			}
		}
		return false
	}
	for _, pair := range [][2]string{{"bf16_adam", "graph"}, {"bf16_adam", "baseline"}} {
		dir := fixture("scenarios", pair[0])
		r := mustRuns(t, load(t, filepath.Join(dir, "eager")), load(t, filepath.Join(dir, pair[1])), Options{})
		if !elementwiseFails(r) {
			t.Errorf("%s eager vs %s: the elementwise rule passes; this test no longer shows anything", pair[0], pair[1])
		}
		if r.Verdict != judge.Pass {
			t.Errorf("%s eager vs %s: verdict %s, first divergence %+v", pair[0], pair[1], r.Verdict, r.FirstDivergence)
		}
	}
}

// TestBaselineScenarios uses the second eager run of the correct Adam
// scenarios as the noise floor: they still pass, and every tensor reports
// its noise.
func TestBaselineScenarios(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"fp32_adam", "bf16_adam"} {
		dir := fixture("scenarios", name)
		r, err := Runs(filepath.Join(dir, "eager"), filepath.Join(dir, "graph"), Options{Baseline: filepath.Join(dir, "baseline")})
		if err != nil {
			t.Fatal(err)
		}
		if r.Verdict != judge.Pass {
			t.Errorf("%s: verdict %s", name, r.Verdict)
		}
		for _, tr := range r.Tensors {
			if tr.Noise == nil {
				t.Errorf("%s: %s step %d has no noise floor", name, tr.Name, tr.Step)
			}
		}
	}
}

// TestNeedsBaseline: a correct TF32 run (convolutions with a bias ahead of
// BatchNorm, Adam, dumps after the recipe's warm-up) differs from its
// first dumped step by several times the gradient limit with the
// gradients' direction kept. Without a baseline it fails, names no cause
// (not uninitialized_memory: its values are a rounding's distance off, not
// unrelated) and warns that only a baseline can judge it; with the eager
// run from weights 2^-10 apart (TF32's epsilon) as baseline it passes.
func TestNeedsBaseline(t *testing.T) {
	t.Parallel()
	dir := fixture("userloops", "resnet_bn", "resnet_bn_convbias_state_dict_ok")
	a, b := filepath.Join(dir, "eager"), filepath.Join(dir, "graph")
	r, err := Runs(a, b, Options{})
	if err != nil {
		t.Fatal(err)
	}
	warned := slices.ContainsFunc(r.Warnings, func(c diagnose.Cause) bool { return c.ID == diagnose.NeedsBaseline })
	if r.Verdict != judge.Fail || len(r.Causes) != 0 || !warned {
		t.Errorf("without a baseline: %s, causes %v, needs_baseline warned %v", r.Verdict, r.Causes, warned)
	}
	if r, err = Runs(a, b, Options{Baseline: filepath.Join(dir, "baseline")}); err != nil || r.Verdict != judge.Pass {
		t.Errorf("with its baseline: %v %v", r.Verdict, err)
	}
}

// TestAutocastFromTheDumps: with no --compute-dtype and no manifest
// saying it, a run whose outputs are stored in bfloat16 beside float32
// parameters, or most of whose float32 gradients hold bfloat16 values, is
// judged in bfloat16 and passes; a TF32 run whose few rounding-level bias
// gradients happen to hold bfloat16 values is not taken for autocast.
func TestAutocastFromTheDumps(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		dir      string
		autocast bool
	}{
		{fixture("corpus", "cnn_bn", "cnn_bn_autocast_adam_cosine_ok"), true}, // outputs in bfloat16
		{fixture("corpus", "cnn_bn", "cnn_bn_autocast_long_ok"), true},        // 96% of the gradients' elements
		{fixture("userloops", "resnet_bn", "resnet_bn_convbias_state_dict_ok"), false},
	} {
		r, err := Runs(filepath.Join(c.dir, "eager"), filepath.Join(c.dir, "graph"), Options{})
		if err != nil {
			t.Fatal(err)
		}
		p := r.Precision
		if p.ComputeFromValues != c.autocast || c.autocast && (p.Compute != loaders.BFloat16 || r.Verdict != judge.Pass) {
			t.Errorf("%s: compute %s (from values %v), verdict %s", filepath.Base(c.dir), p.Compute, p.ComputeFromValues, r.Verdict)
		}
	}
}

// TestMomentsStandInForGradients: a correct run saved by the
// general-checkpoint recipe (model and Adam's state, no gradients) whose
// attention key bias has a rounding-level gradient, on which Adam takes
// steps of random sign in each run. Its parameters are judged as where
// gradients are dumped, with the optimizer's moments in their place: at
// the first dumped step the key bias passes because every moment
// agrees, later its update difference sits in elements whose moment is
// below the healthy floor, and the run passes (it failed when every
// element's update was pooled). A rebound input in the same layout still
// fails at its first dumped step.
func TestMomentsStandInForGradients(t *testing.T) {
	t.Parallel()
	dir := fixture("userloops", "moe", "moe_tutorial_ok")
	r, err := Runs(filepath.Join(dir, "eager"), filepath.Join(dir, "graph"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Verdict != judge.Pass {
		t.Errorf("verdict %s, want pass", r.Verdict)
	}
	for _, s := range r.Steps {
		if s.Grads != 0 || s.Moments == 0 || !(s.HealthyFloor > 0) {
			t.Errorf("step %d: %d gradients, %d moments, healthy floor %g", s.Step, s.Grads, s.Moments, s.HealthyFloor)
		}
	}
	rules := map[int]judge.Rule{}
	for _, p := range r.Tensors {
		if p.Name == "checkpoint/model_state_dict/attn.qkv.bias" {
			rules[p.Step] = p.Rule
			if p.Status != judge.StatusMatch {
				t.Errorf("key bias at step %d: %s (%v)", p.Step, p.Status, p.Reasons)
			}
		}
	}
	if rules[1003] != judge.RuleStepMoments || rules[1006] != judge.RuleUpdateRatio {
		t.Errorf("key bias judged by %v, want the step's moments at 1003 and the update ratio after", rules)
	}
	// saved as Hugging Face's Trainer saves them, the model and the
	// optimizer in files apart: matched across the files of the step
	for _, run := range []string{"moe/moe_hf_ok", "vit/vit_hf_bf16_ok"} {
		d := fixture("userloops", filepath.Dir(run), filepath.Base(run))
		r, err := Runs(filepath.Join(d, "eager"), filepath.Join(d, "graph"), Options{})
		if err != nil || r.Verdict != judge.Pass || len(r.Steps) == 0 || r.Steps[0].Moments == 0 {
			t.Errorf("%s: %v, moments %v (%v)", run, r.Verdict, r.Steps, err)
		}
	}
	for _, run := range []string{"moe_tutorial_stale_input", "moe_tutorial_bf16_stale_input"} {
		dir = fixture("userloops", "moe", run)
		if r, err = Runs(filepath.Join(dir, "eager"), filepath.Join(dir, "graph"), Options{}); err != nil || r.Verdict != judge.Fail || r.FirstDivergence == nil || r.FirstDivergence.Step != 1003 {
			t.Errorf("%s: %v %v %v", run, r.Verdict, r.FirstDivergence, err)
		}
	}
}

// TestOptimizerStateJudgedAsGradients: correct runs in pure bfloat16 saved
// by the general-checkpoint recipe, whose optimizer state (stored in
// bfloat16) departs step by step as their gradients do by bfloat16's
// rounding. Where the moments stand in for gradients, every tensor of the
// optimizer's state is judged as a gradient is, against the scale of its
// member (exp_avg, exp_avg_sq) at the step, not by the state-factor rule
// (which allows for no gradient difference when none was dumped) nor
// alone by its size: both pass. So is the optimizer state of Hugging
// Face's checkpoints, saved apart from the model (optimizer.pt), whose
// moments name no parameter.
func TestOptimizerStateJudgedAsGradients(t *testing.T) {
	t.Parallel()
	for _, run := range []string{"userloops/vit/vit_tutorial_bf16_ok", "userloops/clr/clr_tutorial_bf16_ok", "hf"} {
		dir := filepath.Join("..", "testdata", run)
		r, err := Runs(filepath.Join(dir, "eager"), filepath.Join(dir, "graph"), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if r.Verdict != judge.Pass {
			t.Errorf("%s: verdict %s, want pass", run, r.Verdict)
		}
		states := 0
		for _, p := range r.Tensors {
			if p.A != nil && p.A.Moment.State != "" {
				states++
				if p.Rule != judge.RuleOptimizerState {
					t.Errorf("%s: %s at step %d judged by %q", run, p.Name, p.Step, p.Rule)
				}
			}
		}
		if states == 0 {
			t.Errorf("%s: no optimizer state", run)
		}
	}
}
