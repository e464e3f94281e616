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
// break at the first replay the same way, not a bare claim.
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
			d := filepath.Join("..", "testdata", dir)
			_, rep := diagnoseDirs(t, filepath.Join(d, "eager"), filepath.Join(d, "graph"))
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
		})
	}
}
