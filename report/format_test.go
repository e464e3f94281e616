package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/graphdiff/graphdiff/curve"
	"github.com/graphdiff/graphdiff/loaders"
	"github.com/graphdiff/graphdiff/outcome"
)

// TestFormatList words format lists as the flags' help does.
func TestFormatList(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		fs   []Format
		want string
	}{
		{[]Format{Text}, "text"},
		{[]Format{Text, JSON}, "text or json"},
		{CompareFormats, "text, json, junit, markdown or html"},
		{nil, ""},
	} {
		if got := FormatList(tc.fs); got != tc.want {
			t.Errorf("FormatList(%v) = %q, want %q", tc.fs, got, tc.want)
		}
	}
}

// TestEveryRendererWrites renders a real comparison, a curve analysis and
// an inspection in every format of their tables: each writes something,
// and a format a table lacks is an error naming the report.
func TestEveryRendererWrites(t *testing.T) {
	t.Parallel()
	f, err := os.Open(filepath.Join("testdata", "compare_json", "missing_extra.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sr, err := ReadCompareJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	steps, values := []int64{0, 1, 2, 3}, []float64{2, 1.5, 1.2, 1}
	c := &loaders.Curve{Steps: steps, Values: values, Source: "a"}
	cv := curve.Analyze(c, &loaders.Curve{Steps: steps, Values: values, Source: "b"}, curve.DefaultOptions())
	write := map[string]func(w *bytes.Buffer, f Format) error{
		"compare": func(w *bytes.Buffer, f Format) error {
			return Compare(w, f, &outcome.Comparison{Result: sr.Result}, TextOptions{})
		},
		"curve":   func(w *bytes.Buffer, f Format) error { return Curve(w, f, cv, TextOptions{}) },
		"inspect": func(w *bytes.Buffer, f Format) error { return Inspection(w, f, outcome.Inspection{Root: "run"}) },
	}
	for kind, formats := range map[string][]Format{"compare": CompareFormats, "curve": CurveFormats, "inspect": InspectFormats} {
		for _, f := range formats {
			var buf bytes.Buffer
			if err := write[kind](&buf, f); err != nil || buf.Len() == 0 {
				t.Errorf("%s as %s: %d bytes, error %v", kind, f, buf.Len(), err)
			}
		}
		var buf bytes.Buffer
		if err := write[kind](&buf, "yaml"); err == nil || !strings.Contains(err.Error(), kind+" has no yaml output") {
			t.Errorf("%s as yaml: error %v", kind, err)
		}
	}
}
