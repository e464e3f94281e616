package diagnose_test

import (
	"math"
	"strings"
	"testing"

	"github.com/graphdiff/graphdiff/diagnose"
)

// TestForwardScaleMustExplainMost checks the rule that names a value
// acting inside the network from gradients close to a scale of eager's:
// the scale must explain at least half of the square of the difference
// (a fit of 1 − 1/√2). A numpy dropout mask frozen at capture (the gnn
// family's, whose gradients are eager's × 1.07 at cosine 0.992 but whose
// scale removes 9% of the difference) and a Python if decided at capture
// (2%) are not named from their scale; a Python temperature frozen at
// capture, the labelled run whose scale fits least (40%), still is.
func TestForwardScaleMustExplainMost(t *testing.T) {
	t.Parallel()
	fromScale := func(c diagnose.Cause) bool {
		return strings.Contains(strings.Join(c.Evidence, "\n"), "close to a scale but not one up to rounding")
	}
	for _, tc := range []struct{ run, want string }{
		{"userloops/gnn/gnn_numpy_dropout", diagnose.FrozenRNG},
		{"taps/mlp_clip_branch", diagnose.CapturedBranch},
	} {
		_, rep := diagnoseRun(t, tc.run)
		if len(rep.Causes) == 0 || rep.Causes[0].ID != tc.want {
			t.Errorf("%s: causes %+v, want %s first", tc.run, rep.Causes, tc.want)
		}
		for _, c := range rep.Causes {
			if fromScale(c) {
				t.Errorf("%s: %s named from a scale that fits %.2f", tc.run, c.ID, c.Fit)
			}
		}
	}
	_, rep := diagnoseRun(t, "corpus/embed/embed_temp_float")
	if len(rep.Causes) == 0 || rep.Causes[0].ID != diagnose.CapturedScalar || !fromScale(rep.Causes[0]) || rep.Causes[0].Fit < 1-1/math.Sqrt2 {
		t.Fatalf("embed_temp_float: causes %+v, want captured_scalar first from a scale that fits at least 1 − 1/√2", rep.Causes)
	}
}
