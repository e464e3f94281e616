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
		not                  string // a cause that must not be named at all
	}{
		// logits appended by reference and saved after the loop, with a
		// padded vocabulary masked at float32's min: the masks would swamp
		// the samples' norms and hide that every step equals the last
		// (values that never change repeat for any input token: no frozen
		// position)
		{"userloops/kv_decoder/kv_decoder_output_aliasing", "output_aliasing", "identical at all 12 steps", "captured_scalar"},
		// the decode position a Python int in the captured step: each
		// replay's logits depend on its input token alone
		{"userloops/kv_decoder/kv_decoder_captured_pos", "captured_scalar", "(24 of 24 such pairs of steps)", ""},
		// the input token rebound instead of copied: the graph's logits
		// change little from step to step, fed one token
		{"userloops/kv_decoder/kv_decoder_stale_token", "stale_input", "outputs change from step to step 0.181×", ""},
		// the same in a recurrent decoder, whose state moves on: its
		// logits change 0.6× as much, but its tokens repeat
		{"decode/stale_token", "stale_input", "repeats the step before's in 9 of 24 rows after step 7, the eager run's in 0 of 24", ""},
		// the same with tokens [4] beside logits [4, 1, 64]
		{"decode/stale_token_keepdim", "stale_input", "repeats the step before's in 9 of 24 rows after step 7", ""},
		// one logit of one sequence off by 1.0, and the smallest logit of
		// a padded row lowered by 2.0 with the logits alone dumped: less
		// than a row differs
		{"decode/far_flip", "uninitialized_memory", "6 elements differ beyond rounding, fewer than one row of 64", ""},
		{"decode/masked_logits_only", "uninitialized_memory", "1 element differs beyond rounding, fewer than one row of 80", ""},
		// the ids generated so far dumped whole at each step
		{"decode/far_flip_sequence", "uninitialized_memory", "6 elements differ beyond rounding, fewer than one row of 64", ""},
	} {
		t.Run(filepath.Base(c.dir), func(t *testing.T) {
			t.Parallel()
			r, rep := diagnoseRun(t, c.dir)
			if r.Verdict != judge.Fail || len(rep.Causes) == 0 || rep.Causes[0].ID != c.cause {
				t.Fatalf("verdict %s, causes %+v, want %s first", r.Verdict, rep.Causes, c.cause)
			}
			if ev := strings.Join(rep.Causes[0].Evidence, "\n"); !strings.Contains(ev, c.evidence) {
				t.Errorf("evidence does not say %q:\n%s", c.evidence, ev)
			}
			for _, other := range rep.Causes {
				if c.not != "" && other.ID == c.not {
					t.Errorf("%s named too: %+v", c.not, other)
				}
			}
		})
	}
}

// TestLossTermCauses diagnoses the two MoE runs whose aux-loss term the
// graph keeps after eager changes it (eager drops it at step 1005; eager
// lowers its weight there): the gradients agree, the loss does not, and
// the dumps cannot tell a branch from a weight frozen at capture. Both
// are named at one confidence, with the dump that would decide.
func TestLossTermCauses(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"moe_aux_branch_captured", "moe_aux_weight_captured"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join("..", "testdata", "userloops", "moe", name)
			_, rep := diagnoseDirs(t, filepath.Join(dir, "eager"), filepath.Join(dir, "graph"))
			if len(rep.Causes) < 2 || rep.Causes[0].ID != "captured_branch" || rep.Causes[1].ID != "captured_scalar" ||
				rep.Causes[0].Confidence != rep.Causes[1].Confidence {
				t.Fatalf("causes %+v, want captured_branch and captured_scalar at one confidence", rep.Causes)
			}
			for _, c := range rep.Causes[:2] {
				if ev := strings.Join(c.Evidence, "\n"); !strings.Contains(ev, "the loss's terms apart") {
					t.Errorf("%s: evidence does not name the dump that decides:\n%s", c.ID, ev)
				}
			}
		})
	}
}
