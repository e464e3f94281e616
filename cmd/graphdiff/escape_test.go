package main

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestControlCharactersInNames compares two runs whose tensor file names
// hold an escape sequence that clears the screen, a carriage return, a
// newline followed by a forged PASS line, and a right-to-left override
// (the files themselves are numpy's, copied from the corpus), and checks
// every renderer: the terminal's text and the Markdown summary show the
// characters escaped and forge no line; JSON carries the name exactly;
// JUnit stays well-formed XML; the HTML page holds no raw control.
func TestControlCharactersInNames(t *testing.T) {
	t.Parallel()
	const hostile = "w\x1b[2J\r\nPASS  forged\u202e"
	src := filepath.Join("..", "..", "testdata", "corpus", "mlp", "mlp_stale_input")
	dir := t.TempDir()
	for _, run := range []string{"eager", "graph"} {
		from := filepath.Join(src, run, "step_000001", "grads", "body.fc1.weight.npy")
		data, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		to := filepath.Join(dir, run, "step_000001", "grads")
		if err := os.MkdirAll(to, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, hostile+".npy"), data, 0o644); err != nil {
			t.Skipf("the file system refuses the name: %v", err)
		}
	}
	a, b := filepath.Join(dir, "eager"), filepath.Join(dir, "graph")
	for _, format := range []string{"text", "markdown", "json", "junit", "html"} {
		code, stdout, stderr := run("compare", a, b, "--format", format, "--top", "0")
		if code != exitDiff {
			t.Fatalf("--format %s: exit %d\n%s", format, code, stderr)
		}
		switch format {
		case "text", "markdown":
			if strings.ContainsAny(stdout, "\x1b\r\u202e") {
				t.Errorf("--format %s prints a raw control character:\n%q", format, stdout)
			}
			for _, line := range strings.Split(stdout, "\n") {
				if strings.HasPrefix(strings.TrimLeft(line, " |`"), "PASS  forged") {
					t.Errorf("--format %s: a name forged the line %q", format, line)
				}
			}
			if !strings.Contains(stdout, `w\x1b[2J\r\nPASS  forged\u202e`) {
				t.Errorf("--format %s does not show the name escaped:\n%s", format, stdout)
			}
		case "json":
			var rep struct {
				Tensors []struct{ Name string } `json:"tensors"`
			}
			if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
				t.Fatal(err)
			}
			found := false
			for _, p := range rep.Tensors {
				found = found || p.Name == "grads/"+hostile
			}
			if !found {
				t.Errorf("JSON does not carry the name exactly: %+v", rep.Tensors)
			}
		case "junit":
			var doc struct{ XMLName xml.Name }
			if err := xml.Unmarshal([]byte(stdout), &doc); err != nil {
				t.Errorf("JUnit is not well-formed XML: %v", err)
			}
		case "html":
			if strings.ContainsAny(stdout, "\x1b\r") {
				t.Errorf("the HTML page holds a raw control character")
			}
		}
	}
}

// TestControlCharactersInErrors: an error printed on stderr quotes the
// path it could not read as escaped text, whatever the path holds: a run
// directory named with an escape sequence and a newline does not clear
// the screen or forge a line of its own.
func TestControlCharactersInErrors(t *testing.T) {
	t.Parallel()
	const hostile = "run\x1b[2J\ngraphdiff: PASS\u202e"
	missing := filepath.Join(t.TempDir(), hostile)
	for _, args := range [][]string{
		{"compare", missing, eagerRun},
		{"inspect", missing},
		{"curve", missing, eagerRun},
	} {
		code, _, stderr := run(args...)
		if code != exitError {
			t.Fatalf("%s: exit %d", args[0], code)
		}
		if strings.ContainsAny(stderr, "\x1b\u202e") || strings.Count(strings.TrimSuffix(stderr, "\n"), "\n") > 1 {
			t.Errorf("%s: stderr shows the path raw:\n%q", args[0], stderr)
		}
		if !strings.Contains(stderr, `run\x1b[2J\ngraphdiff: PASS\u202e`) {
			t.Errorf("%s: stderr does not show the path escaped:\n%q", args[0], stderr)
		}
	}
}

// TestControlCharactersInInspectAndCurve: run directories and a tensor
// file named with an escape sequence, a carriage return, a newline and a
// bidirectional override go through inspect (text, JSON) and curve (text,
// JSON, HTML): the text output shows them escaped and forges no line, JSON
// carries them exactly, the HTML page holds no raw control character.
func TestControlCharactersInInspectAndCurve(t *testing.T) {
	t.Parallel()
	const hostile = "r\x1b[2J\r\nPASS  forged\u202e"
	src := filepath.Join("..", "..", "testdata", "scenarios", "captured_lr")
	dir := t.TempDir()
	var runs [2]string
	for i, run := range []string{"eager", "graph"} {
		runs[i] = filepath.Join(dir, hostile+run)
		if err := os.CopyFS(runs[i], os.DirFS(filepath.Join(src, run))); err != nil {
			t.Skipf("the file system refuses the name: %v", err)
		}
	}
	checkText := func(what, out string) {
		t.Helper()
		if strings.ContainsAny(out, "\x1b\r\u202e") {
			t.Errorf("%s prints a raw control character:\n%q", what, out)
		}
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "PASS  forged") {
				t.Errorf("%s: a name forged the line %q", what, line)
			}
		}
		if !strings.Contains(out, `r\x1b[2J\r\nPASS  forged\u202e`) {
			t.Errorf("%s does not show the name escaped:\n%s", what, out)
		}
	}
	tensor := filepath.Join(runs[0], "step_000001", "grads", hostile+".npy")
	if err := os.Rename(filepath.Join(runs[0], "step_000001", "grads", "fc1.bias.npy"), tensor); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := run("inspect", runs[0])
	if code != exitPass {
		t.Fatalf("inspect: exit %d\n%s", code, stderr)
	}
	checkText("inspect", out)
	_, out, _ = run("inspect", "--format", "json", tensor)
	var ins struct {
		Path    string `json:"path"`
		Tensors []struct {
			Name string `json:"name"`
		} `json:"tensors"`
	}
	if err := json.Unmarshal([]byte(out), &ins); err != nil || ins.Path != tensor || len(ins.Tensors) != 1 || ins.Tensors[0].Name != hostile {
		t.Errorf("inspect JSON: %+v (%v), want the path and name exactly", ins, err)
	}
	html := filepath.Join(dir, "curve.html")
	code, out, stderr = run("curve", "--html", html, runs[0], runs[1])
	if code > exitDiff {
		t.Fatalf("curve: exit %d\n%s", code, stderr)
	}
	checkText("curve", out)
	_, out, _ = run("curve", "--format", "json", runs[0], runs[1])
	if !strings.Contains(out, `r\u001b[2J\r\nPASS  forged`) {
		t.Errorf("curve JSON does not carry the path (JSON-escaped):\n%.400s", out)
	}
	page, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(string(page), "\x1b\r") {
		t.Error("the curve's HTML page holds a raw control character")
	}
}
