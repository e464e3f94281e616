package check_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/graphdiff/graphdiff/check"
	"github.com/graphdiff/graphdiff/judge"
	"github.com/graphdiff/graphdiff/loaders"
	"github.com/graphdiff/graphdiff/report"
)

// FuzzMerge runs the merge path end to end on two arbitrary reports:
// read as graphdiff JSON reports, merged (their runs pointed at paths that
// do not exist, so the merge works from the reports alone), and the merged
// comparison written in every format. Nothing panics; what is read is
// either refused with an error or merged.
func FuzzMerge(f *testing.F) {
	seeds, _ := filepath.Glob("../report/testdata/compare_json/*.json")
	if len(seeds) == 0 {
		f.Fatal("no seed reports")
	}
	var data [][]byte
	for _, p := range seeds {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		data = append(data, b)
	}
	for i := range data {
		f.Add(data[i], data[(i+1)%len(data)])
	}
	one, err1 := os.ReadFile("../report/testdata/compare_json/stale_input_shard1of2.json")
	two, err2 := os.ReadFile("../report/testdata/compare_json/stale_input_shard2of2.json")
	if err1 != nil || err2 != nil {
		f.Fatal(err1, err2)
	}
	f.Add(one, two) // a merge that succeeds
	dec1, err1 := os.ReadFile("../report/testdata/compare_json/masked_vocab_shard1of2.json")
	dec2, err2 := os.ReadFile("../report/testdata/compare_json/masked_vocab_shard2of2.json")
	if err1 != nil || err2 != nil {
		f.Fatal(err1, err2)
	}
	f.Add(dec1, dec2) // a decoding, its near ties and masks in one shard
	missing := filepath.Join(f.TempDir(), "no-such-run")
	f.Fuzz(func(t *testing.T, x, y []byte) {
		var parts []*judge.Result
		for _, b := range [][]byte{x, y} {
			sr, err := report.ReadCompareJSON(bytes.NewReader(b))
			if err != nil {
				return
			}
			sr.Result.A, sr.Result.B = missing+"/a", missing+"/b"
			parts = append(parts, sr.Result)
		}
		c, _, err := check.Merge(parts, false, &loaders.Options{})
		if err != nil {
			return
		}
		var out bytes.Buffer
		for _, format := range report.CompareFormats {
			out.Reset()
			if err := report.Compare(&out, format, c, report.TextOptions{}); err != nil {
				t.Fatalf("%s: %v", format, err)
			}
		}
	})
}
