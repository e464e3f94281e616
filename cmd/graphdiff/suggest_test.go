package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// scenario returns the eager and graph runs of a labelled scenario of
// testdata/scenarios (made by testdata/gen/scenarios.py, with manifests
// that say which run is graphed).
func scenario(name string) (eager, graph string) {
	dir := filepath.Join("..", "..", "testdata", "scenarios", name)
	return filepath.Join(dir, "eager"), filepath.Join(dir, "graph")
}

// usageLine checks a usage error as a user sees it: exit 2, nothing on
// stdout (nothing was compared), and one line on stderr holding each of
// want.
func usageLine(t *testing.T, code int, stdout, stderr string, want ...string) {
	t.Helper()
	if code != exitError || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "graphdiff: ") {
		t.Fatalf("exit %d, stdout %.80q, stderr %q: want exit 2, no stdout and one line on stderr", code, stdout, stderr)
	}
	for _, w := range want {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr %q does not say %q", stderr, w)
		}
	}
}

// TestFlagTypos mistypes flags of every command: one line naming the
// flag meant, or, with nothing close, pflag's error and where to find
// help.
func TestFlagTypos(t *testing.T) {
	t.Parallel()
	eager, graph := scenario("fp32_adam")
	for _, tc := range []struct {
		name string
		args []string
		want string // "" for no suggestion
	}{
		{"compare one letter more", []string{"compare", "--rtoll", "0.1", eager, graph}, "unknown flag: --rtoll: did you mean --rtol?"},
		{"compare swapped letters", []string{"compare", "--fromat", "json", eager, graph}, "did you mean --format?"},
		{"compare one dash", []string{"compare", "-rtol", "0.1", eager, graph}, "did you mean --rtol?"},
		{"compare capital", []string{"compare", "--Rtol", "0.1", eager, graph}, "did you mean --rtol?"},
		{"compare prefix", []string{"compare", "--max-rel", "0.1", eager, graph}, "did you mean --max-rel-l2?"},
		{"compare a format", []string{"compare", "--json", eager, graph}, "did you mean --format json?"},
		{"compare rename", []string{"compare", "--renmae", "a=b", eager, graph}, "did you mean --rename?"},
		{"curve", []string{"curve", "--plto", "x.svg", eager, graph}, "did you mean --plot?"},
		{"inspect", []string{"inspect", "--jbos", "2", eager}, "did you mean --jobs?"},
		{"merge", []string{"merge", "--reprot", "json=x.json", "a.json"}, "did you mean --report?"},
		{"docs", []string{"docs", "--mna", "dir"}, "did you mean --man?"},
		{"root", []string{"--verison"}, "did you mean --version?"},
		{"a command", []string{"compar", eager, graph}, `unknown command "compar" for "graphdiff": did you mean compare?`},
		{"no command close", []string{"frobnicate"}, ""},
		{"nothing close", []string{"compare", "--bogus", eager, graph}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := run(tc.args...)
			if tc.want != "" {
				usageLine(t, code, stdout, stderr, tc.want)
				return
			}
			if code != exitError || strings.Contains(stderr, "did you mean") || !strings.Contains(stderr, "--help' for usage") {
				t.Errorf("exit %d, stderr %q: want exit 2, no suggestion, and where help is", code, stderr)
			}
		})
	}
}
