package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/graphdiff/graphdiff/failures"
)

// runExplain runs graphdiff with args and stdin, returning the exit status
// and both streams.
func runExplain(stdin string, args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := Main(args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

// TestExplainErrorInputs drives explain --error as a user would: codes and
// names alone, messages, files, stdin, and the mistakes.
func TestExplainErrorInputs(t *testing.T) {
	dir := t.TempDir()
	msgFile := filepath.Join(dir, "err.log")
	if err := os.WriteFile(msgFile, []byte("RuntimeError: CUDA error: capturing stream has unjoined work\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name        string
		stdin       string
		args        []string
		exit        int
		stdout      string // a line the output must hold
		stderr      string
		notInStdout string
	}{
		{name: "code alone", args: []string{"explain", "--error", "904"}, exit: 0,
			stdout: "capture_unjoined (consequence): work forked onto a side stream was not joined back"},
		{name: "runtime name", args: []string{"explain", "--error", "cudaErrorStreamCaptureInvalidated"}, exit: 0,
			stdout: "capture_invalidated (consequence)"},
		{name: "message", args: []string{"explain", "--error", "CUDA error: operation not permitted when stream is capturing"}, exit: 0,
			stdout: "capture_unsupported"},
		{name: "file", args: []string{"explain", "--error", msgFile}, exit: 0, stdout: "capture_unjoined"},
		{name: "stdin", stdin: "RuntimeError: Attempt to increase offset for a CUDA generator not in capture mode.\n",
			args: []string{"explain", "--error", "-"}, exit: 0, stdout: "generator_unregistered (cause)"},
		{name: "unknown message", args: []string{"explain", "--error", "RuntimeError: mat1 and mat2 shapes cannot be multiplied (8x48 and 64x32)"},
			exit: 1, stdout: "not recognised", notInStdout: "How to fix"},
		{name: "unknown code", args: []string{"explain", "--error", "902"}, exit: 1, stdout: "not recognised"},
		{name: "empty stdin", args: []string{"explain", "--error", "-"}, exit: 1, stdout: "not recognised"},
		{name: "missing file", args: []string{"explain", "--error", filepath.Join(dir, "nope.txt")}, exit: 2,
			stderr: "nope.txt: no such file"},
		{name: "missing log by name", args: []string{"explain", "--error", "train.log"}, exit: 2, stderr: "train.log: no such file"},
		{name: "a directory", args: []string{"explain", "--error", dir}, exit: 2, stderr: "is a directory"},
		{name: "cause and error", args: []string{"explain", "stale_input", "--error", "904"}, exit: 2, stderr: "not both"},
		{name: "bad format", args: []string{"explain", "--error", "904", "--format", "xml"}, exit: 2, stderr: `--format "xml"`},
		{name: "format without error", args: []string{"explain", "--format", "json"}, exit: 2, stderr: "--format is for --error"},
		{name: "a class by id", args: []string{"explain", "host_sync"}, exit: 0, stdout: "host_sync: the CPU waits for the GPU"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runExplain(tc.stdin, tc.args...)
			if code != tc.exit {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.exit, stdout, stderr)
			}
			if !strings.Contains(stdout, tc.stdout) {
				t.Errorf("stdout lacks %q:\n%s", tc.stdout, stdout)
			}
			if !strings.Contains(stderr, tc.stderr) {
				t.Errorf("stderr lacks %q:\n%s", tc.stderr, stderr)
			}
			if tc.notInStdout != "" && strings.Contains(stdout, tc.notInStdout) {
				t.Errorf("stdout holds %q:\n%s", tc.notInStdout, stdout)
			}
			if tc.exit == 1 {
				for _, c := range failures.Classes {
					if strings.Contains(stdout, c.ID) {
						t.Errorf("an unrecognised error names %s:\n%s", c.ID, stdout)
					}
				}
			}
		})
	}
}

// TestExplainErrorJSON checks the JSON object a script reads.
func TestExplainErrorJSON(t *testing.T) {
	code, stdout, stderr := runExplain("", "explain", "--error", "905", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got struct {
		Recognized bool             `json:"recognized"`
		Source     string           `json:"source"`
		Classes    []map[string]any `json:"classes"`
		UserFrame  *failures.Frame  `json:"user_frame"`
	}
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("%v:\n%s", err, stdout)
	}
	if !got.Recognized || got.Source != "argument" || len(got.Classes) != 1 || got.Classes[0]["id"] != "capture_isolation" ||
		got.Classes[0]["role"] != "consequence" || got.UserFrame != nil {
		t.Errorf("got %+v", got)
	}
	for _, k := range []string{"title", "meaning", "fix", "evidence", "sources"} {
		if _, ok := got.Classes[0][k]; !ok {
			t.Errorf("class lacks %q", k)
		}
	}
	code, stdout, _ = runExplain("", "explain", "--error", "hello", "--format", "json")
	if code != 1 || !strings.Contains(stdout, `"recognized": false`) || !strings.Contains(stdout, `"classes": []`) ||
		!strings.Contains(stdout, `"user_frame": null`) {
		t.Errorf("unknown: exit %d\n%s", code, stdout)
	}
}

// TestExplainRealTraceback shows one real traceback as a user sees it, in
// text and JSON: the cause first, the line of their code, the consequence
// after.
func TestExplainRealTraceback(t *testing.T) {
	path := filepath.Join("..", "..", "testdata", "errors", "host_sync_item.txt")
	if _, err := os.Stat(path); err != nil {
		t.Skipf("no real traceback %s: generate testdata/errors on a GPU machine with "+
			"\"python3 testdata/gen/capture_errors.py testdata/errors\"", path)
	}
	code, stdout, stderr := runExplain("", "explain", "--error", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"host_sync (cause): the CPU waits for the GPU", "Your code\n", "if loss.item() > 0:", "(consequence of host_sync)"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("text lacks %q:\n%s", want, stdout)
		}
	}
	code, stdout, _ = runExplain("", "explain", "--error", path, "--format", "json")
	var got struct {
		Classes []struct {
			ID string `json:"id"`
		} `json:"classes"`
		UserFrame *failures.Frame `json:"user_frame"`
	}
	if err := json.Unmarshal([]byte(stdout), &got); code != 0 || err != nil {
		t.Fatalf("exit %d, %v", code, err)
	}
	if len(got.Classes) == 0 || got.Classes[0].ID != "host_sync" || got.UserFrame == nil || got.UserFrame.Code != "if loss.item() > 0:" {
		t.Errorf("json: %+v", got)
	}
}
