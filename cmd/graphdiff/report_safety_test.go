package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestReportsNeverDestroy: a report is not written over a symbolic link,
// a named pipe or an input of the command (merge's shard reports,
// compare's files), and a new report takes 0666 less the umask, an
// existing one keeps its mode.
func TestReportsNeverDestroy(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	corpus := filepath.Join("..", "..", "testdata", "corpus", "mlp", "mlp_stale_input")
	a, b := filepath.Join(corpus, "eager"), filepath.Join(corpus, "graph")
	shard := filepath.Join(dir, "s1.json")
	if code, _, stderr := run("compare", a, b, "--shard", "1/1", "--report", "json="+shard); code != exitDiff {
		t.Fatalf("compare --shard 1/1: exit %d\n%s", code, stderr)
	}
	before, err := os.ReadFile(shard)
	if err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(dir, "target.txt")
	if err := os.WriteFile(target, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"merge over its input", []string{"merge", shard, "--report", "json=" + shard}, "that is the input"},
		{"compare over a symbolic link", []string{"compare", a, b, "--report", "json=" + link}, "not a regular file"},
		{"compare over a named pipe", []string{"compare", a, b, "--report", "json=" + fifo}, "not a regular file"},
	} {
		code, _, stderr := run(tc.args...)
		if code != exitError || !strings.Contains(stderr, tc.want) {
			t.Errorf("%s: exit %d, stderr %q; want %d saying %q", tc.name, code, stderr, exitError, tc.want)
		}
	}
	if after, err := os.ReadFile(shard); err != nil || string(after) != string(before) {
		t.Errorf("the shard report changed (%v)", err)
	}
	if got, err := os.ReadFile(target); err != nil || string(got) != "keep" {
		t.Errorf("the link's target changed: %q (%v)", got, err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link is no longer a link (%v)", err)
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the named pipe is no longer one (%v)", err)
	}

	// modes: an existing report keeps its own
	kept := filepath.Join(dir, "kept.json")
	if err := os.WriteFile(kept, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := run("compare", a, b, "--report", "json="+kept); code != exitDiff {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if fi, err := os.Stat(kept); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("an existing 0600 report: mode %v (%v), want it kept", fi.Mode().Perm(), err)
	}
}
