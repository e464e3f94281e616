package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"strings"
	"testing"

	"github.com/graphdiff/graphdiff/judge"
	"github.com/graphdiff/graphdiff/loaders"
	"github.com/graphdiff/graphdiff/outcome"
)

// TestRenamesListedInEveryFormat renders a comparison of seven likely
// renames, one named with a terminal escape and a newline: the text,
// Markdown, HTML and JUnit reports each name the first five, one line for
// each --rename, and say that two more are in the JSON report, which
// lists all seven; the name shows escaped where a terminal or a Markdown
// renderer would act on it, and JUnit stays well-formed XML.
func TestRenamesListedInEveryFormat(t *testing.T) {
	const hostile = "fc0\x1b[2J\nPASS"
	var rs []outcome.Rename
	res := &judge.Result{A: "eager", B: "graph", Verdict: judge.Fail}
	for i := range 7 {
		old := fmt.Sprintf("fc%d", i)
		if i == 0 {
			old = hostile
		}
		to := fmt.Sprintf("layer%d", i)
		r := outcome.Rename{A: "grads/" + old, B: "grads/" + to, Kind: loaders.KindGrad, Shape: []int{4}, DType: loaders.Float32,
			Steps: []int{0}, Flag: loaders.Rename{Old: old, New: to}}
		rs = append(rs, r)
		m := &loaders.Meta{DType: loaders.Float32, Shape: []int{4}}
		res.Tensors = append(res.Tensors,
			&judge.TensorResult{Pair: judge.Pair{Name: r.A, Kind: r.Kind, A: m}, Decision: judge.Decision{Status: judge.StatusMissing}},
			&judge.TensorResult{Pair: judge.Pair{Name: r.B, Kind: r.Kind, B: m}, Decision: judge.Decision{Status: judge.StatusExtra}})
	}
	c := &outcome.Comparison{Result: res, Renames: rs}
	for _, f := range CompareFormats {
		t.Run(string(f), func(t *testing.T) {
			var buf bytes.Buffer
			if err := Compare(&buf, f, c, TextOptions{}); err != nil {
				t.Fatal(err)
			}
			out := buf.String()
			if f == JSON {
				var doc CompareJSON
				if err := json.Unmarshal(buf.Bytes(), &doc); err != nil || len(doc.Renames) != 7 || doc.Renames[0].Reference != "grads/"+hostile {
					t.Errorf("JSON: %v, %d renames, want 7, the first named exactly", err, len(doc.Renames))
				}
				return
			}
			listed := out
			if f == JUnit { // the suite's properties and system-out; each renamed pair's failure names its own
				listed = out[:strings.Index(out, "<testcase")] + out[strings.Index(out, "<system-out>"):]
			}
			for i := range 7 {
				flag := fmt.Sprintf("--rename fc%d=layer%d", i, i)
				if shown := strings.Contains(listed, flag); shown != (i >= 1 && i < 5) {
					t.Errorf("%s listed: %v, want the first five renames only", flag, shown)
				}
			}
			if !strings.Contains(out, "and 2 more renames (the JSON report lists them all)") {
				t.Errorf("no word of the renames left out:\n%s", out)
			}
			switch f {
			case Text, Markdown:
				if strings.Contains(out, "\x1b") || !strings.Contains(out, `fc0\x1b[2J\nPASS=layer0`) {
					t.Errorf("the hostile name is not shown escaped:\n%q", out)
				}
			case HTML:
				if strings.Contains(out, "\x1b") || !strings.Contains(out, `<code>--rename fc0\x1b[2J\nPASS=layer0</code>`) {
					t.Errorf("the page does not show the hostile name escaped")
				}
			case JUnit:
				var doc struct{ XMLName xml.Name }
				if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
					t.Errorf("JUnit is not well-formed XML: %v", err)
				}
			}
		})
	}
}
