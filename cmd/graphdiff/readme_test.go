package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestREADMEExamples runs every example of README.md and of the pages
// under docs/, a fenced block whose first line is "$ graphdiff ...", from
// a directory whose testdata is the repository's, and checks that the
// block shows what the command prints: its lines are the output's first
// lines, where a line "..." stands for lines left out, so an example
// cannot go stale. Files the examples write land in a temporary
// directory. Not parallel: it changes the process's working directory.
func TestREADMEExamples(t *testing.T) {
	pages, err := filepath.Glob("../../docs/*.md")
	if err != nil || len(pages) == 0 {
		t.Fatalf("no pages under docs/ (%v)", err)
	}
	pages = append([]string{"../../README.md"}, pages...)
	texts := make(map[string]string, len(pages))
	for _, p := range pages {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		texts[p] = string(data)
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
	examples := map[string]int{}
	for _, p := range pages {
		blocks := strings.Split(texts[p], "```")
		for i := 1; i < len(blocks); i += 2 { // the insides of fenced blocks
			lines := strings.Split(strings.TrimPrefix(blocks[i], "\n"), "\n")
			if len(lines) == 0 || !strings.HasPrefix(lines[0], "$ graphdiff ") {
				continue
			}
			examples[filepath.Base(p)]++
			args := strings.Fields(strings.TrimPrefix(lines[0], "$ graphdiff "))
			want := strings.TrimRight(strings.Join(lines[1:], "\n"), "\n")
			_, stdout, stderr := run(args...)
			if !shows(stdout, want) {
				t.Errorf("%s: example %q prints\n%s%s\nnot what the page shows:\n%s", filepath.Base(p), lines[0], stdout, stderr, want)
			}
		}
	}
	// the pages that show the compare, curve and inspect commands
	for _, page := range []string{"README.md", "compare.md", "curve.md", "dumps.md"} {
		if examples[page] == 0 {
			t.Errorf("no example found in %s (found: %v)", page, examples)
		}
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

// TestREADMEScores builds graphdiff, scores the labelled corpora with
// ../shared/score/score.py as the README says (all of testdata, by
// harness, and the second harness alone), and checks that the README's
// tables are what it prints.
func TestREADMEScores(t *testing.T) {
	t.Parallel()
	score, err := filepath.Abs("../../../shared/score/score.py")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(score); err != nil {
		t.Skip("no ../shared/score/score.py beside the repository")
	}
	py := "/usr/bin/python3"
	if _, err := os.Stat(py); err != nil {
		t.Skip("no /usr/bin/python3")
	}
	bin := filepath.Join(t.TempDir(), "graphdiff")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"testdata"}, {"testdata", "--by", "harness"}, {"testdata/userloops"}} {
		cmd := exec.Command(py, append([]string{score, bin}, args...)...)
		cmd.Dir = "../.."
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("score.py %v: %v\n%s", args, err, out)
		}
		if !strings.Contains(string(readme), "```\n"+strings.TrimRight(string(out), "\n")+"\n```") {
			t.Errorf("the README's score table is not what `score.py ./graphdiff %s` prints:\n%s", strings.Join(args, " "), out)
		}
	}
}
