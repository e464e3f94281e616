package failures

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// anchor is what any recognised text must contain: a capture code's
// number, or words about capture or generators. Text without one is
// unknown.
var anchor = regexp.MustCompile(`(?i)9\d\d|captur|generator|cudaError|CUDA_ERROR`)

// FuzzExplain feeds arbitrary text to Explain: it never panics, a text
// without an anchor is never recognised, a user frame is one the text
// names, and every match carries evidence.
func FuzzExplain(f *testing.F) {
	f.Add("904")
	f.Add("CUDA error: operation not permitted when stream is capturing")
	f.Add("Traceback (most recent call last):\n  File \"t.py\", line 3, in <module>\n    x.item()\nRuntimeError: CUDA error 900")
	f.Add("Traceback (most recent call last):\n  File \"t.py\", line 99999999999999999999, in f\n")
	if files, _ := filepath.Glob(filepath.Join(fixtureDir, "*.txt")); len(files) > 0 {
		for _, p := range files {
			if b, err := os.ReadFile(p); err == nil {
				f.Add(string(b))
			}
		}
	}
	f.Fuzz(func(t *testing.T, text string) {
		d := Explain(text)
		if d.Recognized() && !anchor.MatchString(text) {
			t.Fatalf("recognised %v in a text with no anchor: %q", ids(d), text)
		}
		for _, m := range d.Matches {
			if len(m.Evidence) == 0 {
				t.Fatalf("%s matched with no evidence", m.Class.ID)
			}
		}
		if d.UserFrame != nil && !strings.Contains(text, `File "`+d.UserFrame.File+`"`) {
			t.Fatalf("user frame %q not in the text", d.UserFrame.File)
		}
	})
}
