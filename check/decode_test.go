package check

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/graphdiff/graphdiff/judge"
	"github.com/graphdiff/graphdiff/loaders"
)

// TestDecodeNearTies compares the greedy decodings of
// testdata/gen/decode_flips.py: where a sequence's two best bfloat16
// logits are a rounding apart the runs' tokens flip, and from there the
// sequence is compared no further, so the correct pair passes with its
// flips listed as near ties; a stale token (the graph feeding an old
// token) flips far from the other run's best and fails at its first
// divergent step, and so does one logit offset by 1.0 in one sequence.
func TestDecodeNearTies(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		want judge.Verdict
		step int
	}{{"near_tie_ok", judge.Pass, -1}, {"stale_token", judge.Fail, 7}, {"far_flip", judge.Fail, 8}, {"masked_vocab_ok", judge.Pass, -1}} {
		dir := fixture("decode", c.name)
		r, err := Runs(filepath.Join(dir, "eager"), filepath.Join(dir, "graph"), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if r.Verdict != c.want || !r.Precision.ModelFromValues {
			t.Errorf("%s: verdict %s (want %s), bfloat16 from values %v", c.name, r.Verdict, c.want, r.Precision.ModelFromValues)
		}
		near, far := 0, 0
		for _, s := range r.Steps {
			for _, f := range s.Flips {
				if f.NearTie {
					near++
				} else if s.Step == c.step {
					far++
				}
			}
		}
		switch {
		case c.want == judge.Pass && (near == 0 || far != 0):
			t.Errorf("%s: %d near ties, %d far flips", c.name, near, far)
		case c.want == judge.Fail:
			fd := r.FirstDivergence
			if fd == nil || fd.Step != c.step || far == 0 {
				t.Fatalf("%s: first divergence %+v, %d far flips at step %d", c.name, fd, far, c.step)
			}
			var reasons []string
			for _, tr := range r.Tensors {
				if tr.Step == c.step && tr.Name == "gen/tokens" {
					reasons = tr.Reasons
				}
			}
			if !strings.Contains(strings.Join(reasons, ";"), "not a near tie") {
				t.Errorf("%s: tokens at step %d: %v", c.name, c.step, reasons)
			}
		}
	}
}

// TestInputTokensAreNoDecoding: the same near-tie pair dumped under
// inputs/ is what the graph read, not what it decoded: its differing
// tokens fail as integers, with no flip forgiven.
func TestInputTokensAreNoDecoding(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for _, run := range []string{"eager", "graph"} {
		if err := os.CopyFS(filepath.Join(root, run, "inputs"), os.DirFS(fixture("decode", "near_tie_ok", run))); err != nil {
			t.Fatal(err)
		}
	}
	r, err := Runs(filepath.Join(root, "eager"), filepath.Join(root, "graph"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	flips := 0
	for _, s := range r.Steps {
		flips += len(s.Flips)
	}
	if r.Verdict != judge.Fail || flips != 0 || r.FirstDivergence == nil || r.FirstDivergence.Kind != loaders.KindInput {
		t.Errorf("verdict %s, %d flips, first divergence %+v", r.Verdict, flips, r.FirstDivergence)
	}
}

// TestMaskedLogits: a vocabulary padded with positions masked by
// bfloat16's min (-3.39e38) swamps a norm over the whole tensor, where a
// logit lowered by 2.0 is a difference of 1e-38; measured without the
// masks, the logits fail at the step the bug starts (5), though no greedy
// token changes, and the report shows the numbers the verdict read.
func TestMaskedLogits(t *testing.T) {
	t.Parallel()
	dir := fixture("decode", "masked_low_logit")
	r, err := Runs(filepath.Join(dir, "eager"), filepath.Join(dir, "graph"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	fd := r.FirstDivergence
	if r.Verdict != judge.Fail || fd == nil || fd.Step != 5 || fd.Name != "gen/logits" || fd.Metrics.RelL2 < 0.1 ||
		fd.Decode == nil || fd.Decode.Masked == 0 || !strings.Contains(strings.Join(fd.Reasons, ";"), "masks left out") {
		t.Fatalf("verdict %s, first divergence %+v", r.Verdict, fd)
	}
	for _, tr := range r.Tensors {
		if tr.Name == "gen/tokens" && tr.Status != judge.StatusMatch {
			t.Errorf("step %d: the tokens fail: %v", tr.Step, tr.Reasons)
		}
	}
}

// TestMasksWithoutTokens: with the logits alone dumped (no tokens to pair
// them with), a pair whose norm says it holds masks is measured again
// without them, and the never-chosen logit lowered by 2.0 fails at step 5,
// the bug's first, where a norm over the masks called it 1e-38.
func TestMasksWithoutTokens(t *testing.T) {
	t.Parallel()
	dir := fixture("decode", "masked_logits_only")
	r, err := Runs(filepath.Join(dir, "eager"), filepath.Join(dir, "graph"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	fd := r.FirstDivergence
	if r.Verdict != judge.Fail || fd == nil || fd.Step != 5 || fd.Masked != 64 || fd.Metrics.RelL2 < 0.1 ||
		!strings.Contains(strings.Join(fd.Reasons, ";"), "without its 64 masks") {
		t.Fatalf("verdict %s, first divergence %+v", r.Verdict, fd)
	}
}

// TestDecodeShapes pairs tokens with logits of their rows and a
// vocabulary, dimensions of size 1 aside, or with the rows' sequences so
// far (the step's token last), and nothing else.
func TestDecodeShapes(t *testing.T) {
	for _, c := range []struct {
		tok, lg []int
		width   int // 0: no pair
	}{
		{[]int{4}, []int{4, 64}, 1},
		{[]int{4}, []int{4, 1, 64}, 1},    // a causal LM's logits of one position
		{[]int{4, 1}, []int{4, 64}, 1},    // next_tokens[:, None]
		{[]int{4, 1}, []int{4, 1, 64}, 1}, // both kept
		{[]int{}, []int{64}, 1},           // one sequence
		{[]int{1}, []int{1, 64}, 1},
		{[]int{4, 9}, []int{4, 64}, 9},    // the generated ids so far
		{[]int{4, 9}, []int{4, 1, 64}, 9}, // beside one position's logits
		{[]int{4, 9}, []int{4, 9, 64}, 1}, // every position's logits: 36 rows
		{[]int{4}, []int{4, 9, 64}, 1},    // a whole sequence's logits, the last position the step's
		{[]int{4}, []int{4, 1}, 0},        // a vocabulary of one
		{[]int{4}, []int{64, 4}, 0},       // rows last
		{[]int{3}, []int{2, 2, 64}, 0},
		{[]int{4}, []int{}, 0},
		{[]int{2, 3}, []int{3, 2, 8}, 0},
	} {
		width, _, ok := decodeShapes(c.tok, c.lg)
		if !ok {
			width = 0
		}
		if width != c.width {
			t.Errorf("decodeShapes(%v, %v) = %d, %v; want width %d", c.tok, c.lg, width, ok, c.width)
		}
	}
}

// TestDecodeShapesPositions reads the step's logits at the last position
// of a whole sequence's logits.
func TestDecodeShapesPositions(t *testing.T) {
	if w, p, ok := decodeShapes([]int{4}, []int{4, 9, 64}); !ok || w != 1 || p != 9 {
		t.Errorf("decodeShapes([4], [4 9 64]) = %d, %d, %v; want 1, 9, true", w, p, ok)
	}
	if w, p, ok := decodeShapes([]int{4}, []int{4, 64}); !ok || w != 1 || p != 1 {
		t.Errorf("decodeShapes([4], [4 64]) = %d, %d, %v; want 1, 1, true", w, p, ok)
	}
}
