package diagnose_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/graphdiff/graphdiff/diagnose"
)

// TestOneStepBreak diagnoses two runs that agree and then break at one
// step, neither with inputs or outputs dumped: an epoch's last batch of 6
// rows copied into the static batch of 32 breaks one step, the next one's
// loss differing by 0.046 of the break's (a batch of another size); a
// Python if decided at capture keeps the loss's difference from its
// break on (a branch).
func TestOneStepBreak(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		dir, first, evidence string
	}{
		{"userloops/resnet_bn/resnet_bn_partial_batch", diagnose.DynamicShape,
			"at step 1207 the per-step losses differ by 0.0464 of that: the graph computed another function at step 1206 alone"},
		{"corpus/mlp/mlp_captured_branch", diagnose.CapturedBranch, "step 3 breaks"},
	} {
		t.Run(filepath.Base(c.dir), func(t *testing.T) {
			t.Parallel()
			d := filepath.Join("..", "testdata", c.dir)
			_, rep := diagnoseDirs(t, filepath.Join(d, "eager"), filepath.Join(d, "graph"))
			if len(rep.Causes) == 0 || rep.Causes[0].ID != c.first {
				t.Fatalf("causes %+v, want %s first", rep.Causes, c.first)
			}
			if ev := strings.Join(rep.Causes[0].Evidence, "\n"); !strings.Contains(ev, c.evidence) {
				t.Errorf("evidence does not say %q:\n%s", c.evidence, ev)
			}
		})
	}
}
