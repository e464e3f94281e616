package failures

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// fixtureDir holds the real tracebacks testdata/gen/capture_errors.py
// produced on a GPU machine, and its index.
const fixtureDir = "../testdata/errors"

// generateCommand is how fixtureDir is made (from the repository root, on a
// machine with an NVIDIA GPU and PyTorch).
const generateCommand = "python3 testdata/gen/capture_errors.py testdata/errors"

// fixtureIndex is the part of index.json the tests read.
type fixtureIndex struct {
	Torch    string `json:"torch"`
	Device   string `json:"device"`
	Fixtures []struct {
		Name      string  `json:"name"`
		Class     *string `json:"class"`
		File      string  `json:"file"`
		Produced  bool    `json:"produced"`
		Why       string  `json:"why"`
		UserFrame struct {
			File string `json:"file"`
			Line int    `json:"line"`
			Code string `json:"code"`
		} `json:"user_frame"`
	} `json:"fixtures"`
}

// loadIndex reads the fixtures' index, skipping the test when the fixtures
// were never generated.
func loadIndex(t *testing.T) fixtureIndex {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtureDir, "index.json"))
	if os.IsNotExist(err) {
		t.Skipf("no real tracebacks in %s: generate them on a GPU machine with %q (see testdata/gen/capture_errors.py)", fixtureDir, generateCommand)
	}
	if err != nil {
		t.Fatal(err)
	}
	var idx fixtureIndex
	if err := json.Unmarshal(b, &idx); err != nil {
		t.Fatalf("index.json: %v", err)
	}
	return idx
}

// TestRealTracebacks classifies every real traceback: a capture failure as
// its class (first, the likely cause), with the user frame the generator
// marked; an error that is not a capture failure as unknown.
func TestRealTracebacks(t *testing.T) {
	idx := loadIndex(t)
	for _, fx := range idx.Fixtures {
		if !fx.Produced {
			continue
		}
		t.Run(fx.Name, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join(fixtureDir, fx.File))
			if err != nil {
				t.Fatal(err)
			}
			d := Explain(string(b))
			if fx.Class == nil {
				if d.Recognized() {
					t.Fatalf("not a capture failure, but explained as %s (evidence %q)", d.Matches[0].Class.ID, d.Matches[0].Evidence)
				}
				return
			}
			if !d.Recognized() {
				t.Fatalf("class %s: not recognised", *fx.Class)
			}
			if got := d.Matches[0].Class.ID; got != *fx.Class {
				t.Errorf("first class %s, want %s (all: %v)", got, *fx.Class, ids(d))
			}
			if d.UserFrame == nil {
				t.Fatalf("no user frame, want %s:%d", fx.UserFrame.File, fx.UserFrame.Line)
			}
			if d.UserFrame.File != fx.UserFrame.File || d.UserFrame.Line != fx.UserFrame.Line {
				t.Errorf("user frame %s:%d, want %s:%d", d.UserFrame.File, d.UserFrame.Line, fx.UserFrame.File, fx.UserFrame.Line)
			}
			if d.UserFrame.Code != "" && d.UserFrame.Code != fx.UserFrame.Code {
				t.Errorf("user code %q, want %q", d.UserFrame.Code, fx.UserFrame.Code)
			}
		})
	}
}

// TestEveryClassHasARealFixture says, class by class, whether a real
// traceback exists; a class without one is skipped with the generator's
// reason, never given a made-up traceback.
func TestEveryClassHasARealFixture(t *testing.T) {
	idx := loadIndex(t)
	for _, c := range Classes {
		t.Run(c.ID, func(t *testing.T) {
			var why []string
			for _, fx := range idx.Fixtures {
				if fx.Class == nil || *fx.Class != c.ID {
					continue
				}
				if fx.Produced {
					return
				}
				why = append(why, fx.Name+": "+fx.Why)
			}
			t.Skipf("no real fixture exists for %s (torch %s, %s); generator's reasons: %q", c.ID, idx.Torch, idx.Device, why)
		})
	}
}

func ids(d Diagnosis) []string {
	var out []string
	for _, m := range d.Matches {
		out = append(out, m.Class.ID)
	}
	return out
}

// TestRankPrefixedTracebacks: every real traceback, each line prefixed as
// a distributed run prints it ("[rank0]: " from torch.distributed's
// exception hook, "[default3]:" from torchrun), is explained as the
// traceback itself is: the same classes, the same user frame.
func TestRankPrefixedTracebacks(t *testing.T) {
	idx := loadIndex(t)
	for _, fx := range idx.Fixtures {
		if !fx.Produced {
			continue
		}
		b, err := os.ReadFile(filepath.Join(fixtureDir, fx.File))
		if err != nil {
			t.Fatal(err)
		}
		want := Explain(string(b))
		for _, prefix := range []string{"[rank0]: ", "[default3]:"} {
			lines := strings.Split(string(b), "\n")
			for i := range lines {
				lines[i] = prefix + lines[i]
			}
			got := Explain(strings.Join(lines, "\n"))
			if !slices.Equal(ids(got), ids(want)) || !reflect.DeepEqual(got.UserFrame, want.UserFrame) {
				t.Errorf("%s with %q before each line: classes %v, frame %+v; without: %v, %+v", fx.Name, prefix, ids(got), got.UserFrame, ids(want), want.UserFrame)
			}
		}
	}
}
