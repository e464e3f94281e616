package failures

import (
	"strings"
	"testing"
)

// TestCodesAndMessages explains an error given as a code, a name or a
// one-line message, as a user types it after --error.
func TestCodesAndMessages(t *testing.T) {
	cases := []struct {
		name, text string
		want       []string // class IDs in order; nil: not recognised
	}{
		{"number 904", "904", []string{"capture_unjoined"}},
		{"number with spaces", "  901\n", []string{"capture_invalidated"}},
		{"runtime name", "cudaErrorStreamCaptureIsolation", []string{"capture_isolation"}},
		{"driver name", "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT", []string{"capture_implicit"}},
		{"CUDA error words", "CUDA error 900", []string{"capture_unsupported"}},
		{"error code words", "error code 905", []string{"capture_isolation"}},
		{"PyTorch message 904", "RuntimeError: CUDA error: capturing stream has unjoined work", []string{"capture_unjoined"}},
		{"two codes", "CUDA error: operation not permitted when stream is capturing ... CUDA error: operation failed due to a previous error during capture",
			[]string{"capture_unsupported", "capture_invalidated"}},
		{"generator message", "RuntimeError: Attempt to increase offset for a CUDA generator not in capture mode.", []string{"generator_unregistered"}},
		{"generator state refused", "RuntimeError: Cannot call CUDAGeneratorImpl::current_seed during CUDA graph capture.", []string{"rng_state_in_capture"}},
		{"code not in the catalogue", "902", nil},
		{"another number", "9000", nil},
		{"a number in a sentence", "loss 901 at step 3", nil},
		{"shape mismatch", "RuntimeError: mat1 and mat2 shapes cannot be multiplied (8x48 and 64x32)", nil},
		{"out of memory", "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 158.00 GiB.", nil},
		{"an .item() alone is no capture failure", "x = loss.item()", nil},
		{"empty", "", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { runCase(t, tc.text, tc.want) })
	}
}

func runCase(t *testing.T, text string, want []string) {
	t.Helper()
	d := Explain(text)
	got := ids(d)
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("Explain(%q) = %v, want %v", text, got, want)
	}
	if d.UserFrame != nil {
		t.Errorf("a message with no traceback has no user frame, got %+v", *d.UserFrame)
	}
	for _, m := range d.Matches {
		if len(m.Evidence) == 0 {
			t.Errorf("%s matched with no evidence", m.Class.ID)
		}
	}
}

// TestIsLibrary tells the user's files from PyTorch's, installed
// packages' and the standard library's.
func TestIsLibrary(t *testing.T) {
	cases := []struct {
		file string
		lib  bool
	}{
		{"/home/u/train.py", false},
		{"train.py", false},
		{"<stdin>", false},
		{"/home/u/proj/torch_utils/graphs.py", false},
		{"/usr/local/lib/python3.12/dist-packages/torch/cuda/graphs.py", true},
		{"/opt/venv/lib/python3.11/site-packages/apex/amp.py", true},
		{"/home/u/pytorch/torch/utils/checkpoint.py", true},
		{"/usr/lib/python3.12/threading.py", true},
		{"<frozen runpy>", true},
		{`C:\Python312\Lib\python3.12\threading.py`, true},
	}
	for _, tc := range cases {
		if got := IsLibrary(tc.file); got != tc.lib {
			t.Errorf("IsLibrary(%q) = %v, want %v", tc.file, got, tc.lib)
		}
	}
}

// TestCatalogue checks what every class promises: a doc-worthy meaning and
// fix, sources, and every code's class in the catalogue.
func TestCatalogue(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range Classes {
		if seen[c.ID] {
			t.Errorf("%s twice", c.ID)
		}
		seen[c.ID] = true
		if c.Title == "" || c.Meaning == "" || c.Fix == "" || len(c.Sources) == 0 {
			t.Errorf("%s: title, meaning, fix and sources are all needed", c.ID)
		}
		if _, ok := causePatterns[c.ID]; c.Role == Cause && !ok {
			t.Errorf("%s: a cause with no patterns can never match", c.ID)
		}
	}
	for _, code := range Codes {
		if c, ok := ClassByID(code.Class); !ok || c.Role != Consequence {
			t.Errorf("code %d: class %q is not a consequence in the catalogue", code.Number, code.Class)
		}
	}
}

// TestParseChained reads a chained traceback's structure. The input is
// constructed for the parser (its shape is Python's, the paths and
// messages are placeholders), not a fixture of a real failure: those are
// in testdata/errors, read by TestRealTracebacks.
func TestParseChained(t *testing.T) {
	text := strings.Join([]string{
		"Traceback (most recent call last):",
		`  File "/work/t.py", line 7, in <module>`,
		"    if loss.item() > 0:",
		"       ^^^^^^^^^^^",
		`  File "/venv/lib/python3.12/site-packages/torch/_tensor.py", line 1, in item`,
		"    return f()",
		"RuntimeError: CUDA error: operation not permitted when stream is capturing",
		"",
		"During handling of the above exception, another exception occurred:",
		"",
		"Traceback (most recent call last):",
		`  File "/work/t.py", line 5, in <module>`,
		"    with torch.cuda.graph(g):",
		`  File "/venv/lib/python3.12/site-packages/torch/cuda/graphs.py", line 2, in __exit__`,
		"    self.cuda_graph.capture_end()",
		"RuntimeError: CUDA error: operation failed due to a previous error during capture",
	}, "\n")
	tb := Parse(text)
	if len(tb.Blocks) != 2 || len(tb.Blocks[0].Frames) != 2 || len(tb.Blocks[1].Frames) != 2 {
		t.Fatalf("blocks %+v", tb.Blocks)
	}
	if f := tb.Blocks[0].Frames[0]; f.Code != "if loss.item() > 0:" || f.Line != 7 {
		t.Errorf("first frame %+v", f)
	}
	d := Explain(text)
	if got := strings.Join(ids(d), ","); got != "host_sync,capture_unsupported,capture_invalidated" {
		t.Errorf("classes %s", got)
	}
	if d.UserFrame == nil || d.UserFrame.Line != 7 || d.UserFrame.File != "/work/t.py" {
		t.Errorf("user frame %+v, want /work/t.py:7 (the .item(), not the with)", d.UserFrame)
	}
}
