package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/graphdiff/graphdiff/report"
)

const (
	eagerRun = "../../testdata/runs/mlp_fp32/eager"
	graphRun = "../../testdata/runs/mlp_fp32/graph"
)

// TestReportFiles writes every format with --report in one run and checks
// each file holds what --format would print, and that no temporary file is
// left behind.
func TestReportFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	args := []string{"compare", eagerRun, graphRun}
	for _, f := range []string{"json", "junit", "markdown", "text"} {
		args = append(args, "--report", f+"="+filepath.Join(dir, "out."+f))
	}
	code, _, stderr := run(args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, f := range []string{"json", "junit", "markdown", "text"} {
		data, err := os.ReadFile(filepath.Join(dir, "out."+f))
		if err != nil {
			t.Fatal(err)
		}
		_, want, _ := run("compare", "--format", f, eagerRun, graphRun)
		if string(data) != want {
			t.Errorf("%s report differs from --format %s output", f, f)
		}
	}
	var doc struct{ Verdict string }
	data, _ := os.ReadFile(filepath.Join(dir, "out.json"))
	if err := json.Unmarshal(data, &doc); err != nil || doc.Verdict != "pass" {
		t.Errorf("json report: %v %q", err, doc.Verdict)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 4 {
		t.Errorf("%d files in the report directory, want 4", len(entries))
	}
}

// TestReportUnwritable asks for a report in a directory that does not
// exist: exit 2 at once, one line naming the flag and the directory,
// before anything is compared; no report is written, the good one
// neither, and nothing is printed on stdout.
func TestReportUnwritable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	bad := filepath.Join(dir, "missing", "bad.xml")
	code, stdout, stderr := run("compare", "--report", "junit="+bad, "--report", "json="+good, eagerRun, graphRun)
	want := "graphdiff: --report junit=" + bad + ": the directory " + filepath.Dir(bad) + " does not exist\n"
	if code != 2 || stderr != want || stdout != "" {
		t.Errorf("exit %d, stderr %q, stdout %.40q; want exit 2, stderr %q and no stdout", code, stderr, stdout, want)
	}
	if _, err := os.Stat(good); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("good report: %v, want none written", err)
	}
}

// TestWriteFileAtomic checks that a failing renderer leaves neither a
// partial file nor a temporary one, and that an existing report survives.
func TestWriteFileAtomic(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "r.json")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := report.WriteFile(path, func(w io.Writer) error {
		io.WriteString(w, "partial")
		return errors.New("renderer failed")
	})
	if err == nil {
		t.Fatal("no error")
	}
	data, _ := os.ReadFile(path)
	entries, _ := os.ReadDir(dir)
	if string(data) != "old" || len(entries) != 1 {
		t.Errorf("file %q, %d entries", data, len(entries))
	}
}

// TestProgressOnlyOnATerminal runs a comparison with stderr taken for a
// terminal and the size threshold lowered: a bar is drawn; not otherwise.
func TestProgressOnlyOnATerminal(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		terminal bool
		format   string
		want     bool
	}{{true, "text", true}, {false, "text", false}, {true, "json", false}} {
		var stdout, stderr bytes.Buffer
		opts := &compareOptions{A: eagerRun, B: graphRun, Format: tc.format, Jobs: 2, Top: 20,
			Stdout: &stdout, Stderr: &stderr, terminal: func(w io.Writer) bool { return tc.terminal && w == &stderr },
			progress: progressLimits{minBytes: 1}} // drawn at once, for any comparison
		opts.load.v2 = "bfloat16"
		if err := compareRun(opts); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(stderr.String(), "comparing"); got != tc.want {
			t.Errorf("terminal %v, --format %s: progress shown %v (%q)", tc.terminal, tc.format, got, stderr.String())
		}
		if tc.format == "json" && strings.Contains(stdout.String(), "\x1b[") {
			t.Errorf("colour in JSON output")
		}
	}
}

// TestColourOnlyOnATerminal checks that text output is coloured on a
// terminal unless NO_COLOR is set, and never otherwise. Not parallel: it
// sets NO_COLOR for the process.
func TestColourOnlyOnATerminal(t *testing.T) {
	for _, tc := range []struct {
		terminal bool
		noColor  string
		want     bool
	}{{true, "", true}, {true, "1", false}, {false, "", false}} {
		t.Setenv("NO_COLOR", tc.noColor)
		var stdout, stderr bytes.Buffer
		opts := &compareOptions{A: eagerRun, B: graphRun, Format: "text", Jobs: 1, Top: 3,
			Stdout: &stdout, Stderr: &stderr, terminal: func(w io.Writer) bool { return tc.terminal && w == &stdout }}
		opts.load.v2 = "bfloat16"
		if err := compareRun(opts); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(stdout.String(), "\x1b["); got != tc.want {
			t.Errorf("terminal %v NO_COLOR %q: colour %v", tc.terminal, tc.noColor, got)
		}
	}
}

// TestStrictFailsOnWarnings compares the first five steps of a real run
// whose graph froze a learning rate the eager run lowers by 0.01% a step,
// with a policy whose update limit is loose enough to let that through:
// it passes with a captured_scalar warning, and --strict turns the warning
// into a failure.
func TestStrictFailsOnWarnings(t *testing.T) {
	t.Parallel()
	src := "../../testdata/scenarios/lr_decay_tiny"
	var dirs []string
	for _, run := range []string{"eager", "graph"} {
		dir := t.TempDir()
		for step := 0; step <= 4; step++ {
			name := fmt.Sprintf("step_%06d", step)
			if err := os.CopyFS(filepath.Join(dir, name), os.DirFS(filepath.Join(src, run, name))); err != nil {
				t.Fatal(err)
			}
		}
		dirs = append(dirs, dir)
	}
	for _, tc := range []struct {
		strict  bool
		code    int
		verdict string
	}{{false, 0, "pass"}, {true, 1, "fail"}} {
		policy := filepath.Join(t.TempDir(), "loose.yaml")
		if err := os.WriteFile(policy, []byte("run:\n  update: 100\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		args := []string{"compare", "--format", "json", "--policy", policy, dirs[0], dirs[1]}
		if tc.strict {
			args = append(args, "--strict")
		}
		code, stdout, stderr := run(args...)
		var doc struct {
			Verdict  string
			Causes   []struct{ ID string }
			Warnings []struct {
				ID       string
				Evidence []string
			}
		}
		if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
			t.Fatalf("%v: %s", err, stderr)
		}
		if code != tc.code || doc.Verdict != tc.verdict || len(doc.Warnings) != 1 || doc.Warnings[0].ID != "captured_scalar" {
			t.Errorf("strict %v: exit %d, verdict %s, warnings %+v", tc.strict, code, doc.Verdict, doc.Warnings)
		}
		if tc.strict && (len(doc.Causes) == 0 || doc.Causes[0].ID != "captured_scalar") {
			t.Errorf("strict: causes %+v", doc.Causes)
		}
	}
}

// TestCurvePlotFiles draws a real curve pair to SVG and to PNG and checks
// that each file is what its name says.
func TestCurvePlotFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, name := range []string{"curves.svg", "curves.png"} {
		path := filepath.Join(dir, name)
		code, _, stderr := run("curve", "--plot", path,
			"../../testdata/curves/frozen_scalar_long/eager", "../../testdata/curves/frozen_scalar_long/graph")
		if code != 1 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		switch filepath.Ext(name) {
		case ".svg":
			if !bytes.Contains(data, []byte("<svg")) || !bytes.Contains(data, []byte("divergence at step 501")) {
				t.Errorf("SVG lacks the plot or its divergence marker")
			}
		case ".png":
			img, err := png.Decode(bytes.NewReader(data))
			if err != nil || img.Bounds().Dx() < 800 {
				t.Errorf("PNG: %v", err)
			}
		}
	}
}

// TestLoadErrorOrder: the two runs load at the same time, but an error of
// run A is still the one reported when both fail, and an error of run B
// when only B fails.
func TestLoadErrorOrder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := "../../testdata/runs/mlp_fp32/graph"
	missA, missB := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	for _, c := range []struct{ a, b, want string }{
		{missA, missB, missA},
		{good, missB, missB},
		{missA, good, missA},
	} {
		code, _, stderr := run("compare", c.a, c.b)
		if code != 2 || !strings.Contains(stderr, c.want+": stat: no such file") || strings.Count(stderr, "\n") != 1 {
			t.Errorf("compare %s %s: exit %d, stderr %q; want exit 2 and one line naming %s", c.a, c.b, code, stderr, c.want)
		}
	}
}

// TestShardAdvice compares a run of more pairs than one process should
// hold (the bound lowered for the test): stderr says how many shards to
// compare in and how, and a shard of the same comparison is not told.
// Where what every shard holds of the whole comparison leaves no room
// under 256 MiB (its cost per pair raised for the test), it says so too.
func TestShardAdvice(t *testing.T) {
	t.Parallel()
	_, out, _ := run("compare", "--format", "json", eagerRun, graphRun)
	var doc struct{ Summary struct{ Pairs int } }
	if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.Summary.Pairs < 10 {
		t.Fatalf("%v: %d pairs", err, doc.Summary.Pairs)
	}
	pairs := doc.Summary.Pairs
	advice := shardAdvice{pairsPerProcess: (pairs + 2) / 3, listedBytesPerPair: listedBytesPerPair} // three shards' worth
	compare := func(args ...string) (int, string) {
		code, _, stderr := runCompare(func(opts *compareOptions) { opts.shards = advice }, args...)
		return code, stderr
	}
	code, stderr := compare(eagerRun, graphRun)
	want := fmt.Sprintf("graphdiff: %d pairs to compare", pairs)
	if code != 0 || !strings.Contains(stderr, want) || !strings.Contains(stderr, "compare in 3 shards (--shard 1/3 ... --shard 3/3") ||
		!strings.Contains(stderr, "graphdiff merge") {
		t.Errorf("exit %d, stderr %q: want advice of 3 shards, starting %q", code, stderr, want)
	}
	if strings.Contains(stderr, "will not stay") {
		t.Errorf("stderr %q: shards said not to help", stderr)
	}
	advice.listedBytesPerPair = shardHeapLimit/int64(pairs) + 1
	if _, stderr := compare(eagerRun, graphRun); !strings.Contains(stderr, "compare in 3 shards") ||
		!strings.Contains(stderr, "but each shard reads the header of every file of both runs") ||
		!strings.Contains(stderr, "shards of it will not stay under 256 MiB") {
		t.Errorf("stderr %q: want the advice, and that its shards will not stay under 256 MiB", stderr)
	}
	if _, stderr := compare(eagerRun, graphRun, "--shard", "1/3"); strings.Contains(stderr, "shards") {
		t.Errorf("a shard was advised to shard: %q", stderr)
	}
	advice.pairsPerProcess = pairs
	if _, stderr := compare(eagerRun, graphRun); stderr != "" {
		t.Errorf("a run within the bound was advised: %q", stderr)
	}
}
