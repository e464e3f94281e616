package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestREADMEExamples runs every example of README.md, a fenced block whose
// first line is "$ graphdiff ...", from a directory whose testdata is the
// repository's, and checks that the block shows what the command prints:
// its lines are the output's first lines, where a line "..." stands for
// lines left out, so an example cannot go stale. Files the examples write
// land in a temporary directory.
func TestREADMEExamples(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	testdata, err := filepath.Abs("../../testdata")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Symlink(testdata, filepath.Join(dir, "testdata")); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	examples := 0
	blocks := strings.Split(string(readme), "```")
	for i := 1; i < len(blocks); i += 2 { // the insides of fenced blocks
		lines := strings.Split(strings.TrimPrefix(blocks[i], "\n"), "\n")
		if len(lines) == 0 || !strings.HasPrefix(lines[0], "$ graphdiff ") {
			continue
		}
		examples++
		args := strings.Fields(strings.TrimPrefix(lines[0], "$ graphdiff "))
		want := strings.TrimRight(strings.Join(lines[1:], "\n"), "\n")
		_, stdout, stderr := run(args...)
		if !shows(stdout, want) {
			t.Errorf("README example %q prints\n%s%s\nnot what the README shows:\n%s", lines[0], stdout, stderr, want)
		}
	}
	if examples < 3 {
		t.Errorf("%d README examples found, want the compare, curve and inspect ones", examples)
	}
}

// shows reports whether out begins with the lines of want, a want line
// "..." standing for any number of output lines.
func shows(out, want string) bool {
	got := strings.Split(out, "\n")
	i := 0
	lines := strings.Split(want, "\n")
	for k := 0; k < len(lines); k++ {
		if lines[k] != "..." {
			if i >= len(got) || got[i] != lines[k] {
				return false
			}
			i++
			continue
		}
		if k+1 == len(lines) {
			return true
		}
		for i < len(got) && got[i] != lines[k+1] {
			i++
		}
		if i == len(got) {
			return false
		}
	}
	return true
}
