package loaders

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestCurveFormatsAgree reads the same real curves from each format the
// generator wrote them in — numpy, Python's csv and json, and PyTorch's
// SummaryWriter, with scalars as simple values (tb/) and as one-element
// tensors (tb_tensor/, new_style=True) — and checks that steps and values agree exactly (the
// losses are float32, which TensorBoard stores exactly).
func TestCurveFormatsAgree(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"fp32_long", "frozen_scalar_long", "drift_then_break_long"} {
		dir := fixture("curves", name, "graph")
		ref, err := ReadCurve(filepath.Join(dir, "losses.npy"), CurveOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(ref.Steps) != 1000 || ref.DType != Float32 {
			t.Fatalf("%s: %d steps, dtype %s", name, len(ref.Steps), ref.DType)
		}
		for _, src := range []string{"loss.csv", "loss.jsonl", "tb", "tb/events.out.tfevents.1700000000.graphdiff", "tb_tensor", ""} {
			c, err := ReadCurve(filepath.Join(dir, src), CurveOptions{})
			if err != nil {
				t.Errorf("%s/%s: %v", name, src, err)
				continue
			}
			if !reflect.DeepEqual(c.Steps, ref.Steps) || !reflect.DeepEqual(c.Values, ref.Values) {
				t.Errorf("%s/%s: differs from losses.npy", name, src)
			}
		}
	}
}

// TestCurveChoices picks columns, keys and tags, and reads run directories
// of per-step loss tensors.
func TestCurveChoices(t *testing.T) {
	t.Parallel()
	dir := fixture("curves", "frozen_scalar_long", "eager")
	lr, err := ReadCurve(filepath.Join(dir, "loss.csv"), CurveOptions{Column: "lr"})
	if err != nil || lr.Values[0] != 0.05 || lr.Values[999] != 0.025 {
		t.Errorf("lr column: %v %v", err, lr)
	}
	tbLR, err := ReadCurve(filepath.Join(dir, "tb"), CurveOptions{Tag: "train/lr"})
	if err != nil || len(tbLR.Steps) != 20 || tbLR.Steps[1] != 50 {
		t.Errorf("lr tag: %v %+v", err, tbLR)
	}
	for _, tc := range []struct {
		opts CurveOptions
		path string
		want string
	}{
		{CurveOptions{Column: "accuracy"}, "loss.csv", `no column "accuracy" (columns: step, loss, lr)`},
		{CurveOptions{Tag: "train/acc"}, "tb", `no scalar tag "train/acc" (tags: train/loss, train/lr)`},
		{CurveOptions{Key: "acc"}, "loss.jsonl", `no "acc" values`},
	} {
		if _, err := ReadCurve(filepath.Join(dir, tc.path), tc.opts); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %+v: error %v, want %q", tc.path, tc.opts, err, tc.want)
		}
	}
	run, err := ReadCurve(fixture("runs", "mlp_fp32", "graph"), CurveOptions{})
	if err != nil || len(run.Steps) != 4 || run.Values[0] != 1.0775501728057861 {
		t.Errorf("run directory: %v %+v", err, run)
	}
}

// copyCurveFile copies a real curve file into a temporary directory for
// damaging.
func copyCurveFile(t *testing.T, src string) (string, []byte) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	return dst, data
}

// TestCurveDamage damages real files: a TensorBoard file cut mid-record (a
// run still writing) reads up to the cut with a note; a flipped byte fails
// its checksum; CSV and JSON lines with a bad value name the line.
func TestCurveDamage(t *testing.T) {
	t.Parallel()
	tb := fixture("curves", "fp32_long", "eager", "tb", "events.out.tfevents.1700000000.graphdiff")
	path, data := copyCurveFile(t, tb)
	if err := os.WriteFile(path, data[:len(data)-7], 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := ReadCurve(path, CurveOptions{})
	if err != nil || len(c.Steps) == 0 || len(c.Steps) >= 1000 || !strings.Contains(strings.Join(c.Notes, " "), "last record cut short") {
		t.Errorf("cut file: %v, %d steps, notes %q", err, len(c.Steps), c.Notes)
	}
	bad := append([]byte(nil), data...)
	bad[len(bad)/2] ^= 0x40
	if err := os.WriteFile(path, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadCurve(path, CurveOptions{}); err == nil || !strings.Contains(err.Error(), "checksum mismatch") {
		t.Errorf("flipped byte: %v", err)
	}

	csvPath, csvData := copyCurveFile(t, fixture("curves", "fp32_long", "eager", "loss.csv"))
	damaged := strings.Replace(string(csvData), "\n3,", "\n3,oops,", 1)
	os.WriteFile(csvPath, []byte(damaged), 0o644)
	if _, err := ReadCurve(csvPath, CurveOptions{}); err == nil || !strings.Contains(err.Error(), `line 5: value "oops" is not a number`) {
		t.Errorf("bad CSV value: %v", err)
	}

	jPath, jData := copyCurveFile(t, fixture("curves", "fp32_long", "eager", "loss.jsonl"))
	lines := strings.Split(string(jData), "\n")
	lines[2] = `{"step": 2, "loss": NaN}` // as Python's json.dumps writes it
	lines[5] = `{"step": 5, "loss": `
	os.WriteFile(jPath, []byte(strings.Join(lines, "\n")), 0o644)
	if _, err := ReadCurve(jPath, CurveOptions{}); err == nil || !strings.Contains(err.Error(), "line 6: not a JSON object") {
		t.Errorf("bad JSON line: %v", err)
	}
	lines[5] = `{"step": 5, "loss": 0.5}`
	os.WriteFile(jPath, []byte(strings.Join(lines, "\n")), 0o644)
	if c, err := ReadCurve(jPath, CurveOptions{}); err != nil || c.Values[2] == c.Values[2] {
		t.Errorf("Python NaN token: %v", err)
	}
}
