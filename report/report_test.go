package report

import (
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFloatJSON(t *testing.T) {
	t.Parallel()
	cases := map[float64]string{
		1.5:             "1.5",
		1e-7:            "1e-07",
		math.NaN():      "null",
		math.Inf(1):     `"inf"`,
		math.Inf(-1):    `"-inf"`,
		math.MaxFloat64: "1.7976931348623157e+308",
	}
	for v, want := range cases {
		got, err := json.Marshal(Float(v))
		if err != nil || string(got) != want {
			t.Errorf("Float(%v) = %s, %v; want %s", v, got, err, want)
		}
	}
}

func TestMarkdownEscapes(t *testing.T) {
	t.Parallel()
	if got, want := mdEscape("a|b <i> *x* _y_\nz"), `a\|b &lt;i&gt; \*x\* \_y\_ z`; got != want {
		t.Errorf("mdEscape = %q, want %q", got, want)
	}
	if got, want := mdCode("a`b|c"), `a'b\|c`; got != want {
		t.Errorf("mdCode = %q, want %q", got, want)
	}
}

func TestParseFormat(t *testing.T) {
	t.Parallel()
	if f, err := ParseFormat("junit", CompareFormats...); err != nil || f != JUnit {
		t.Errorf("junit: %v %v", f, err)
	}
	if _, err := ParseFormat("junit", Text, JSON); err == nil || !strings.Contains(err.Error(), "want text, json") {
		t.Errorf("junit for inspect: %v", err)
	}
}

// TestRemovePartial stops a report halfway, as the signal handler does:
// its temporary file is removed at once, the report is never renamed into
// place, a report finished before is kept, and later reports fail.
func TestRemovePartial(t *testing.T) {
	// not parallel: RemovePartial stops every report the process writes
	t.Cleanup(func() { partial.Lock(); partial.stopped = false; partial.Unlock() })
	dir := t.TempDir()
	done := filepath.Join(dir, "done.json")
	if err := WriteFile(done, func(w io.Writer) error { _, err := io.WriteString(w, "{}"); return err }); err != nil {
		t.Fatal(err)
	}
	started, stop := make(chan bool), make(chan bool)
	errc := make(chan error, 1)
	go func() {
		errc <- WriteFile(filepath.Join(dir, "half.json"), func(w io.Writer) error {
			io.WriteString(w, "{\"verdict\":")
			started <- true
			<-stop
			return nil
		})
	}()
	<-started
	RemovePartial()
	if entries, _ := os.ReadDir(dir); len(entries) != 1 || entries[0].Name() != "done.json" {
		t.Errorf("after RemovePartial: %v", entries)
	}
	close(stop)
	if err := <-errc; !errors.Is(err, ErrStopped) {
		t.Errorf("interrupted WriteFile: %v", err)
	}
	if err := WriteFile(filepath.Join(dir, "late.json"), func(io.Writer) error { return nil }); !errors.Is(err, ErrStopped) {
		t.Errorf("WriteFile after RemovePartial: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("left: %v", entries)
	}
}

// TestReportHasNoNameWhileWritten: while a report is being written, where
// the file system allows a file without a name (Linux's O_TMPFILE, as on
// the test's temporary directory), nothing appears in its directory, so a
// process killed by SIGKILL then leaves nothing behind; once written it is
// the only file there.
func TestReportHasNoNameWhileWritten(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if f, ok := createUnnamed(dir); !ok {
		t.Skip("no file without a name here: the report is written under a temporary name")
	} else {
		f.Close()
	}
	path := filepath.Join(dir, "r.json")
	err := WriteFile(path, func(w io.Writer) error {
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("while writing, the directory holds %v", entries)
		}
		_, err := io.WriteString(w, "{}")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	if data, err := os.ReadFile(path); err != nil || string(data) != "{}" || len(entries) != 1 {
		t.Errorf("after writing: %q (%v), directory %v", data, err, entries)
	}
}
