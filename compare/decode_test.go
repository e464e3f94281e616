package compare

import (
	"path/filepath"
	"testing"

	"github.com/graphdiff/graphdiff/loaders"
	"github.com/graphdiff/graphdiff/tolerances"
)

// decodeStep opens the tokens and logits of one decoding step of
// testdata/decode/NAME (run eager or graph, gen_STEP.npz).
func decodeStep(t *testing.T, name, run, file string) (tok, logits *loaders.Tensor) {
	t.Helper()
	ts, _, err := loaders.OpenFile(filepath.Join("..", "testdata", "decode", name, run, file), loaders.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range ts {
		switch filepath.Base(x.Name) {
		case "tokens":
			tok = x
		case "logits":
			logits = x
		}
	}
	if tok == nil || logits == nil {
		t.Fatalf("%s/%s/%s: no tokens and logits in %d tensors", name, run, file, len(ts))
	}
	return tok, logits
}

// TestMeasureDecode: at step 2 of the near-tie pair, sequence 2's greedy
// token is 2 in the reference and 3 in the compared run, whose bfloat16
// logits for the two are equal in the reference and one bfloat16 unit
// (2^-7 at 1.4) apart in the compared run; with that row parted, nothing
// flips and its logits are left out.
func TestMeasureDecode(t *testing.T) {
	ta, la := decodeStep(t, "near_tie_ok", "eager", "gen_002.npz")
	tb, lb := decodeStep(t, "near_tie_ok", "graph", "gen_002.npz")
	job := DecodeJob{TokA: ta, TokB: tb, LogA: la, LogB: lb, Tolerance: tolerances.Tolerance{RTol: 0x1p-7}}
	d, err := MeasureDecode(job)
	if err != nil {
		t.Fatal(err)
	}
	if d.Rows != 4 || d.Vocab != 64 || !d.BFloat16 || len(d.Flips) != 1 || d.LogitsCount != 256 {
		t.Fatalf("%+v", d)
	}
	if f := d.Flips[0]; f.Row != 2 || f.TokenA != 2 || f.TokenB != 3 || f.GapA != 0 || f.GapB != 0x1p-7 || f.Scale < 1 || f.Scale > 2 {
		t.Errorf("flip %+v", f)
	}
	job.Parted = []bool{false, false, true, false}
	if d, err = MeasureDecode(job); err != nil || len(d.Flips) != 0 || d.Parted != 1 || d.LogitsCount != 192 {
		t.Errorf("row 2 parted: %+v, %v", d, err)
	}
	job.Parted = []bool{true}
	if _, err = MeasureDecode(job); err == nil {
		t.Error("a parted mask of 1 row for 4 sequences was accepted")
	}
}
