package check

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/graphdiff/graphdiff/diagnose"
)

// TestStaleInputFromTheTaps compares the tapped runs whose graph read the
// batch it was captured with (static_x = x instead of copy_, made on a
// GPU by testdata/gen/taps_gpu.py; the dumps begin at the first replay
// that reads it, so no agreeing step shows the break): the tapped
// modules' outputs barely change from step to step in the graphed run,
// against a new batch's worth in the eager run, and stale_input is named
// first, from them.
func TestStaleInputFromTheTaps(t *testing.T) {
	t.Parallel()
	namedFromTheTaps(t, diagnose.StaleInput, "tapped modules' outputs change from step to step",
		"conv_stale_input", "mlp_stale_input", "tfm_stale_input")
}

// namedFromTheTaps compares the runs of testdata/taps named and checks
// that each names cause first, with evidence that holds the words given.
func namedFromTheTaps(t *testing.T, cause, evidence string, names ...string) {
	t.Helper()
	for _, name := range names {
		dir := filepath.Join("..", "testdata", "taps", name)
		r, err := Runs(filepath.Join(dir, "eager"), filepath.Join(dir, "graph"), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Causes) == 0 || r.Causes[0].ID != cause {
			t.Errorf("%s: causes %v, want %s first", name, causeIDs(r.Causes), cause)
			continue
		}
		if ev := strings.Join(r.Causes[0].Evidence, "\n"); !strings.Contains(ev, evidence) {
			t.Errorf("%s: %s without %q:\n%s", name, cause, evidence, ev)
		}
	}
}

// TestInputLagNearestStep compares a run resumed from a checkpoint whose
// batch was copied into the static input after the replay (dumps from
// the first step after the resume, already lagging): the graph's own
// parameters drift from eager's, so its gradients are not close to eager's
// step before, but at each step after the first the eager step nearest
// them is the step before, which a graph unrelated to the batches would
// show with probability 5⁻⁴. input_lag is named, from that.
func TestInputLagNearestStep(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("..", "testdata", "userloops", "clr", "clr_input_lag")
	r, err := Runs(filepath.Join(dir, "eager"), filepath.Join(dir, "graph"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Causes) == 0 || r.Causes[0].ID != diagnose.InputLag {
		t.Fatalf("causes %v, want input_lag first", causeIDs(r.Causes))
	}
	ev := strings.Join(r.Causes[0].Evidence, "\n")
	if !strings.Contains(ev, "at each of 4 diverged steps the eager step nearest the graph's is the step before") {
		t.Errorf("input_lag without the nearest-step evidence:\n%s", ev)
	}
}

func causeIDs(cs []diagnose.Cause) []string {
	var ids []string
	for _, c := range cs {
		ids = append(ids, c.ID)
	}
	return ids
}

// TestHeldChannelsFromTheTaps compares the tapped run whose Normalize
// module's mean and standard deviation were rebound to each batch's
// (norm.mean = …) instead of copied, so that the graph keeps the
// capture batch's: the module's output is eager's scaled and shifted
// channel by channel, which no single scale does, and reassigned_tensor is
// named from that, captured_scalar not at all; so are the runs made after
// the test was written whose gain per feature (the last axis of a Linear's
// output) or per channel (a convolution's) was rebound. The runs whose
// module multiplies by a Python float frozen at capture are one scale for
// all channels: they do not get that evidence.
func TestHeldChannelsFromTheTaps(t *testing.T) {
	t.Parallel()
	compare := func(name string) []diagnose.Cause {
		dir := filepath.Join("..", "testdata", "taps", name)
		r, err := Runs(filepath.Join(dir, "eager"), filepath.Join(dir, "graph"), Options{})
		if err != nil {
			t.Fatal(err)
		}
		return r.Causes
	}
	for name, axis := range map[string]string{
		"conv_norm_reassigned": "axis 1, 3 channels", "conv_gain_reassigned": "axis 1, 6 channels", "mlp_gain_reassigned": "axis 1, 32 channels",
	} {
		cs := compare(name)
		if len(cs) == 0 || cs[0].ID != diagnose.ReassignedTensor {
			t.Errorf("%s: causes %v, want reassigned_tensor first", name, causeIDs(cs))
			continue
		}
		if ev := strings.Join(cs[0].Evidence, "\n"); !strings.Contains(ev, "is eager's scaled and shifted channel by channel ("+axis+")") {
			t.Errorf("%s: reassigned_tensor without the per-channel evidence:\n%s", name, ev)
		}
		for _, c := range cs {
			if c.ID == diagnose.CapturedScalar {
				t.Errorf("%s: captured_scalar named beside values held per channel", name)
			}
		}
	}
	for _, name := range []string{"conv_temp_float", "mlp_scale_float"} {
		for _, c := range compare(name) {
			if strings.Contains(strings.Join(c.Evidence, "\n"), "channel by channel") {
				t.Errorf("%s: %s claims per-channel values for a Python float", name, c.ID)
			}
		}
	}
}

// TestInputLagFromTheTaps compares the tapped runs whose batch was copied
// into the static input after g.replay() (made after the taps joined the
// lag test, and scored as they came): at every step after the first, the
// tapped modules' outputs are next to the eager run's step before, and
// input_lag is named first.
func TestInputLagFromTheTaps(t *testing.T) {
	t.Parallel()
	namedFromTheTaps(t, diagnose.InputLag, "tapped modules' outputs at step 4: graph vs eager step 3",
		"mlp_input_lag", "tfm_input_lag", "conv_input_lag")
}
