package report

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/graphdiff/graphdiff/judge"
	"github.com/graphdiff/graphdiff/outcome"
)

// TestReadCompareJSONRoundTrip reads reports that graphdiff wrote back into
// results and writes them again: every pair, the summary, the errors, the
// ignored pairs, the first divergence and the renames a shard was
// compared with come out as they went in.
func TestReadCompareJSONRoundTrip(t *testing.T) {
	t.Parallel()
	paths, err := filepath.Glob("testdata/compare_json/*.json")
	if err != nil || len(paths) < 4 {
		t.Fatalf("%v, %d reports", err, len(paths))
	}
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		sr, err := ReadCompareJSON(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		var in, out map[string]json.RawMessage
		if err := json.Unmarshal(data, &in); err != nil {
			t.Fatal(err)
		}
		again, err := json.Marshal(NewCompareJSON(&outcome.Comparison{Result: sr.Result, Strict: sr.Strict}))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(again, &out); err != nil {
			t.Fatal(err)
		}
		for _, field := range []string{"a", "b", "summary", "tensors", "ignored", "errors", "stopped_after_step", "compute_dtype", "shard", "renamed"} {
			if !jsonEqual(t, in[field], out[field]) {
				t.Errorf("%s: %s changed:\n in: %.300s\nout: %.300s", path, field, in[field], out[field])
			}
		}
	}
}

func jsonEqual(t *testing.T, a, b json.RawMessage) bool {
	t.Helper()
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	var x, y bytes.Buffer
	if err := json.Compact(&x, a); err != nil {
		t.Fatal(err)
	}
	if err := json.Compact(&y, b); err != nil {
		t.Fatal(err)
	}
	return bytes.Equal(x.Bytes(), y.Bytes())
}

// FuzzReadCompareJSON feeds arbitrary bytes to the report reader: it
// returns an error or a result whose steps can be judged again (as merge
// does) and that can be written again, never panics.
func FuzzReadCompareJSON(f *testing.F) {
	paths, _ := filepath.Glob("testdata/compare_json/*.json")
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sr, err := ReadCompareJSON(bytes.NewReader(data))
		if err != nil {
			return
		}
		// judge every step again, as merge does with shards' reports
		steps := map[int][]judge.Pair{}
		for _, t := range sr.Tensors {
			if t.Metrics != nil && (t.Status == judge.StatusMatch || t.Status == judge.StatusMismatch) {
				steps[t.Step] = append(steps[t.Step], t.Pair)
			}
		}
		ctx := judge.NewContext(sr.Precision, sr.Rules)
		for _, group := range steps {
			f, _ := judge.Step(group, ctx)
			ctx = ctx.Next(f)
		}
		var buf bytes.Buffer
		for _, format := range CompareFormats {
			buf.Reset()
			if err := Compare(&buf, format, &outcome.Comparison{Result: sr.Result}, TextOptions{}); err != nil {
				t.Fatalf("%s: %v", format, err)
			}
		}
	})
}

// TestReadCompareJSONRefusesForgedDecode reads a shard's report of a
// decoding (near ties, a masked vocabulary) with its partial.decode and
// partial.masked altered to what no decoding step of the pair can be:
// each is refused with the field named, and the report as written is read.
func TestReadCompareJSONRefusesForgedDecode(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("testdata/compare_json/masked_vocab_shard2of2.json")
	if err != nil {
		t.Fatal(err)
	}
	sr, err := ReadCompareJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	flips := 0
	for _, tr := range sr.Result.Tensors {
		if tr.Decode != nil {
			flips += len(tr.Decode.Flips)
		}
	}
	if flips == 0 {
		t.Fatal("the report read back holds no flipped row")
	}
	for _, c := range []struct{ name, old, new, want string }{
		{"flip row outside the rows", `"row": 2,`, `"row": 7,`, "partial.decode: flip row 7"},
		{"more parted rows than rows", `"parted": 0,`, `"parted": 5,`, "partial.decode: 4 rows, vocabulary 80, 5 parted"},
		{"masks beyond the logits", `"masked": 64,`, `"masked": 300,`, "partial.decode: 4 rows, vocabulary 80, 0 parted, 0 flips, 256 logits, 300 masked"},
	} {
		forged := bytes.Replace(data, []byte(c.old), []byte(c.new), 1)
		if bytes.Equal(forged, data) {
			t.Fatalf("%s: %q is not in the report", c.name, c.old)
		}
		if _, err := ReadCompareJSON(bytes.NewReader(forged)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want it to say %q", c.name, err, c.want)
		}
	}
}

// TestJudgedByRoundTrip reads a shard's report of a real comparison,
// judges its steps again as merge does, writes the report and reads it
// back: every compared pair carries the rule that decided it, its measure
// and its limit, in the JSON text and as read back, bit for bit.
func TestJudgedByRoundTrip(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("testdata/compare_json/stale_input_shard1of2.json")
	if err != nil {
		t.Fatal(err)
	}
	sr, err := ReadCompareJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	steps := map[int][]*judge.TensorResult{}
	var order []int
	for _, p := range sr.Tensors {
		if p.Metrics != nil && (p.Status == judge.StatusMatch || p.Status == judge.StatusMismatch) {
			if steps[p.Step] == nil {
				order = append(order, p.Step)
			}
			steps[p.Step] = append(steps[p.Step], p)
		}
	}
	ctx := judge.NewContext(sr.Precision, sr.Rules)
	judged := 0
	for _, k := range order {
		pairs := make([]judge.Pair, len(steps[k]))
		for i, p := range steps[k] {
			pairs[i] = p.Pair
		}
		f, ds := judge.Step(pairs, ctx)
		for i, p := range steps[k] {
			p.Decision = ds[i]
			judged++
		}
		ctx = ctx.Next(f)
	}
	if judged == 0 {
		t.Fatal("the report holds no compared pair")
	}
	var buf bytes.Buffer
	if err := Compare(&buf, JSON, &outcome.Comparison{Result: sr.Result, Strict: sr.Strict}, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(buf.String(), `"judged_by": {`); n != judged {
		t.Errorf("%d pairs with judged_by in the report, want the %d compared", n, judged)
	}
	again, err := ReadCompareJSON(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Tensors) != len(sr.Tensors) {
		t.Fatalf("%d pairs read back, %d written", len(again.Tensors), len(sr.Tensors))
	}
	for i, p := range sr.Tensors {
		q := again.Tensors[i]
		if q.Rule != p.Rule || !sameFloat(q.Measure, p.Measure) || !sameFloat(q.Limit, p.Limit) {
			t.Errorf("step %d, %s: %s %g of %g read back as %s %g of %g", p.Step, p.Name, p.Rule, p.Measure, p.Limit, q.Rule, q.Measure, q.Limit)
		}
	}
}

func sameFloat(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }
