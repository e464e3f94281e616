package diagnose_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/graphdiff/graphdiff/judge"
)

// TestDecodingCauses diagnoses outputs-only decoding runs (tokens and
// logits per position, no gradients or parameters): each bug's top cause
// is its label's, and its evidence quotes what shows it.
func TestDecodingCauses(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		dir, cause, evidence string
	}{
		// logits appended by reference and saved after the loop, with a
		// padded vocabulary masked at float32's min: the masks would swamp
		// the samples' norms and hide that every step equals the last
		{"userloops/kv_decoder/kv_decoder_output_aliasing", "output_aliasing", "identical at all 12 steps"},
		// the decode position a Python int in the captured step: each
		// replay's logits depend on its input token alone
		{"userloops/kv_decoder/kv_decoder_captured_pos", "captured_scalar", "(24 of 24 such pairs of steps)"},
		// the input token rebound instead of copied: the graph's logits
		// change little from step to step, fed one token
		{"userloops/kv_decoder/kv_decoder_stale_token", "stale_input", "outputs change from step to step 0.181×"},
	} {
		t.Run(filepath.Base(c.dir), func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join("..", "testdata", c.dir)
			r, rep := diagnoseDirs(t, filepath.Join(dir, "eager"), filepath.Join(dir, "graph"))
			if r.Verdict != judge.Fail || len(rep.Causes) == 0 || rep.Causes[0].ID != c.cause {
				t.Fatalf("verdict %s, causes %+v, want %s first", r.Verdict, rep.Causes, c.cause)
			}
			if ev := strings.Join(rep.Causes[0].Evidence, "\n"); !strings.Contains(ev, c.evidence) {
				t.Errorf("evidence does not say %q:\n%s", c.evidence, ev)
			}
		})
	}
}
