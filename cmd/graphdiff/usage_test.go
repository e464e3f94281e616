package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// copyRun copies the run at src to a new directory under t.TempDir and
// returns its path.
func copyRun(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	return dst
}

// writeManifest writes a manifest.json at the root of run saying whether
// it is the graphed run, in the format loaders/manifest.go reads.
func writeManifest(t *testing.T, run string, graphed bool) {
	t.Helper()
	m := map[string]any{"graphdiff_manifest": 1, "run": map[string]any{"name": filepath.Base(run), "graphed": graphed}}
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(run, "manifest.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestSwappedRuns gives the graphed run first where the manifests say
// which is which: a usage error that says to swap them, not a diagnosis
// (stale_input swapped reads as frozen random values). --reference-graphed
// compares them as given; runs whose manifests do not both say, or say
// the order is right, are compared.
func TestSwappedRuns(t *testing.T) {
	t.Parallel()
	eager, graph := scenario("stale_input")
	corpusEager := copyRun(t, filepath.Join("..", "..", "testdata", "corpus", "cnn_bn", "cnn_bn_stale_input", "eager"))
	corpusGraph := copyRun(t, filepath.Join("..", "..", "testdata", "corpus", "cnn_bn", "cnn_bn_stale_input", "graph"))
	writeManifest(t, corpusEager, false)
	writeManifest(t, corpusGraph, true)
	onlyGraph := copyRun(t, graph)
	if err := os.Remove(filepath.Join(onlyGraph, "manifest.json")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		// swapped: a usage error saying to swap; else the comparison's
		// exit status
		swapped bool
		code    int
	}{
		{"scenario swapped", []string{graph, eager}, true, 0},
		{"written manifests swapped", []string{corpusGraph, corpusEager}, true, 0},
		{"scenario in order", []string{eager, graph}, false, exitDiff},
		{"swapped, accepted", []string{"--reference-graphed", graph, eager}, false, exitDiff},
		{"second says nothing", []string{graph, onlyGraph}, false, exitPass},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := run(append([]string{"compare"}, tc.args...)...)
			if tc.swapped {
				a, b := tc.args[0], tc.args[1]
				usageLine(t, code, stdout, stderr, "REFERENCE must be the eager run", a+" is the graphed run",
					"swap them (graphdiff compare "+b+" "+a+")", "--reference-graphed")
				return
			}
			if code != tc.code || strings.Contains(stderr, "swap") {
				t.Errorf("exit %d, want %d\n%s", code, tc.code, stderr)
			}
		})
	}
}

// TestCurveSwappedRuns gives curve the run directories of a real run in
// both orders: in order, the curves agree; graphed first, where their
// manifests say which is which, the same usage error as compare's, with
// the curve command line to give instead, unless --reference-graphed;
// two loss files say nothing of the order and are analysed as given.
func TestCurveSwappedRuns(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("..", "..", "testdata", "runs", "mlp_fp32")
	eager, graph := filepath.Join(dir, "eager"), filepath.Join(dir, "graph")
	for _, tc := range []struct {
		name string
		args []string
		// swapped: a usage error saying to swap; else the curves agree
		swapped bool
	}{
		{"in order", []string{eager, graph}, false},
		{"swapped", []string{graph, eager}, true},
		{"swapped, accepted", []string{"--reference-graphed", graph, eager}, false},
		{"loss files swapped", []string{filepath.Join(graph, "losses.npy"), filepath.Join(eager, "losses.npy")}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := run(append([]string{"curve"}, tc.args...)...)
			if tc.swapped {
				usageLine(t, code, stdout, stderr, "REFERENCE must be the eager run", graph+" is the graphed run and "+eager+" the eager one",
					"swap them (graphdiff curve "+eager+" "+graph+")", "or give --reference-graphed")
				return
			}
			if code != exitPass || !strings.HasPrefix(stdout, "PASS  loss curves") || stderr != "" {
				t.Errorf("exit %d, want the curves to agree\n%s%s", code, stdout, stderr)
			}
		})
	}
	if _, stdout, _ := run("curve", "--help"); !strings.Contains(stdout, "--reference-graphed") {
		t.Errorf("curve --help does not name --reference-graphed")
	}
}

// TestNothingToCompare gives a side that holds no tensor: an empty
// directory, a directory of other files. Exit 2 naming it, before
// anything is compared, on either side; never a missing_steps diagnosis.
func TestNothingToCompare(t *testing.T) {
	t.Parallel()
	eager, _ := scenario("fp32_adam")
	empty := t.TempDir()
	notes := t.TempDir()
	if err := os.WriteFile(filepath.Join(notes, "notes.txt"), []byte("no tensors here\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, a, b string
		// side and path the error names
		side, path string
	}{
		{"empty other", eager, empty, "OTHER", empty},
		{"empty reference", empty, eager, "REFERENCE", empty},
		{"both empty", empty, empty, "REFERENCE", empty},
		{"no tensor files", eager, notes, "OTHER", notes},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := run("compare", tc.a, tc.b)
			usageLine(t, code, stdout, stderr, tc.side+" "+tc.path+" holds no tensor files", "nothing to compare")
		})
	}
}

// TestFileAgainstDirectory compares a file with a run directory: a usage
// error, in either order, not missing steps.
func TestFileAgainstDirectory(t *testing.T) {
	t.Parallel()
	eager, graph := scenario("fp32_adam")
	file := filepath.Join(eager, "losses.npy")
	code, stdout, stderr := run("compare", file, graph)
	usageLine(t, code, stdout, stderr, file+" is a file and "+graph+" a directory", "compare two run directories, or two files")
	code, stdout, stderr = run("compare", graph, file)
	usageLine(t, code, stdout, stderr, graph+" is a directory and "+file+" a file")
}

// TestSamePathTwice compares a run, and a file, with itself under several
// spellings (the same path, a trailing slash, a symbolic link): compared,
// and passing, with a note on stderr that the pass says nothing.
func TestSamePathTwice(t *testing.T) {
	t.Parallel()
	eager, graph := scenario("fp32_adam")
	link := filepath.Join(t.TempDir(), "eager-link")
	abs, err := filepath.Abs(eager)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(abs, link); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(eager, "losses.npy")
	const note = "graphdiff: note: REFERENCE and OTHER are the same "
	for _, tc := range []struct {
		name, a, b string
		same       bool
	}{
		{"same directory", eager, eager, true},
		{"trailing slash", eager, eager + "/", true},
		{"symbolic link", eager, link, true},
		{"same file", file, file, true},
		{"two runs", eager, graph, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := run("compare", tc.a, tc.b)
			if !tc.same {
				if strings.Contains(stderr, note) {
					t.Errorf("a note for two runs: %q", stderr)
				}
				return
			}
			if code != exitPass || !strings.HasPrefix(stdout, "PASS") {
				t.Errorf("exit %d, stdout %.60q: want a pass", code, stdout)
			}
			if !strings.HasPrefix(stderr, note) || !strings.Contains(stderr, "a PASS says nothing about the graphed run") ||
				strings.Count(stderr, "\n") != 1 {
				t.Errorf("stderr %q: want one note that both sides are the same path", stderr)
			}
		})
	}
}

// renamed copies the run at src and renames, at every step, the files of
// the tensor old under params/ and grads/ to new: a layer renamed between
// the two runs.
func renamed(t *testing.T, src, old, to string) string {
	t.Helper()
	dst := copyRun(t, src)
	steps, err := filepath.Glob(filepath.Join(dst, "step_*"))
	if err != nil || len(steps) == 0 {
		t.Fatalf("no steps in %s: %v", dst, err)
	}
	for _, step := range steps {
		for _, kind := range []string{"params", "grads"} {
			from, target := filepath.Join(step, kind, old+".npy"), filepath.Join(step, kind, to+".npy")
			if err := os.Rename(from, target); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dst
}

// renameReport is what TestRenamedParameter reads of a JSON report.
type renameReport struct {
	Verdict string `json:"verdict"`
	Causes  []struct {
		ID string `json:"id"`
	} `json:"causes"`
	Renames []struct {
		Reference, Other, Kind, DType, Rename, Hint string
		Shape, Steps                                []int
	} `json:"renames"`
}

// TestRenamedParameter compares runs in which a layer's parameter and
// gradient have another name in the second run: the report lists them as
// a likely rename with the --rename that pairs them, and diagnoses no
// cause from them (grads_zero_not_none read the renamed gradient as one
// only the graph has); the verdict stays fail. --rename pairs them and
// the runs pass; a real bug beside the rename keeps its cause.
func TestRenamedParameter(t *testing.T) {
	t.Parallel()
	eager, graph := scenario("fp32_adam")
	other := renamed(t, graph, "fc1.weight", "layer1.weight")

	code, stdout, stderr := run("compare", eager, other)
	hint := "grads/fc1.weight in REFERENCE and grads/layer1.weight in OTHER have the same shape (32, 16) and dtype float32 at 8 steps, 0 to 7 " +
		"(1 more pair of names too): a rename? give --rename fc1.weight=layer1.weight"
	if code != exitDiff || !strings.Contains(stdout, "likely rename: "+hint+"\n") {
		t.Errorf("exit %d, want 1 and the rename in the text report:\n%s%s", code, stdout, stderr)
	}
	if strings.Contains(stdout, "likely cause") || strings.Contains(stdout, "grads_zero_not_none") {
		t.Errorf("a cause diagnosed from a rename:\n%s", stdout)
	}

	code, stdout, _ = run("compare", "--format", "json", eager, other)
	var rep renameReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if code != exitDiff || rep.Verdict != "fail" || len(rep.Causes) != 0 || len(rep.Renames) != 2 {
		t.Fatalf("exit %d, verdict %s, causes %v, renames %+v: want fail, no cause, two renames", code, rep.Verdict, rep.Causes, rep.Renames)
	}
	for i, want := range []string{"grads", "params"} {
		r := rep.Renames[i]
		if r.Reference != want+"/fc1.weight" || r.Other != want+"/layer1.weight" || r.Rename != "fc1.weight=layer1.weight" ||
			r.DType != "float32" || len(r.Shape) != 2 || len(r.Steps) != 8 || !strings.Contains(r.Hint, "a rename? give --rename fc1.weight=layer1.weight") {
			t.Errorf("rename %d: %+v", i, r)
		}
	}

	code, stdout, stderr = run("compare", "--rename", "fc1.weight=layer1.weight", eager, other)
	if code != exitPass || !strings.HasPrefix(stdout, "PASS") {
		t.Errorf("--rename: exit %d, want a pass\n%s%s", code, stdout, stderr)
	}

	// a real bug beside the rename: its cause is still named, the
	// rename beside it
	bugEager, bugGraph := scenario("captured_lr")
	bugOther := renamed(t, bugGraph, "fc2.weight", "mid.weight")
	code, stdout, _ = run("compare", bugEager, bugOther)
	if code != exitDiff || !strings.Contains(stdout, "likely rename: grads/fc2.weight in REFERENCE and grads/mid.weight in OTHER") ||
		!strings.Contains(stdout, "likely cause: captured_scalar") {
		t.Errorf("a bug beside a rename: exit %d\n%s", code, stdout)
	}
	if code, _, stderr := run("compare", "--rename", "fc2.weight=mid.weight", bugEager, bugOther); code != exitDiff {
		t.Errorf("--rename beside a bug: exit %d, want 1\n%s", code, stderr)
	}
}

// TestRenameMistakes gives --rename values that cannot apply: a usage
// error of one line each, before comparing.
func TestRenameMistakes(t *testing.T) {
	t.Parallel()
	eager, graph := scenario("fp32_adam")
	for _, tc := range []struct {
		name, rename string
		want         []string
	}{
		{"no equals sign", "fc1.weight", []string{`--rename "fc1.weight": want OLD=NEW`}},
		{"empty side", "fc1.weight=", []string{"want OLD=NEW"}},
		{"renames nothing", "fc9.weight=fc1.weight", []string{"--rename fc9.weight=fc1.weight: in REFERENCE (" + eager + "), no tensor name holds fc9.weight"}},
		{"part of a component", "fc1=layer1", []string{"no tensor name holds fc1 as whole '/'-separated components (it is part of grads/fc1.bias"}},
		{"two tensors one name", "fc1.weight=fc2.weight", []string{"--rename fc1.weight=fc2.weight", "would both be grads/fc2.weight at step 0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := run("compare", "--rename", tc.rename, eager, graph)
			usageLine(t, code, stdout, stderr, tc.want...)
		})
	}
}

// TestOutputPathsCheckedFirst names report and plot files in a directory
// that does not exist, for every command that writes one: exit 2 with one
// line naming the flag, before anything is compared or read (the inputs
// here are not even there).
func TestOutputPathsCheckedFirst(t *testing.T) {
	t.Parallel()
	missing := filepath.Join(t.TempDir(), "no", "such", "dir")
	nowhere := filepath.Join(t.TempDir(), "not-there")
	eager, graph := scenario("fp32_adam")
	for _, tc := range []struct {
		name string
		args []string
		flag string
	}{
		{"compare html report", []string{"compare", "--report", "html=" + missing + "/x.html", eager, graph}, "--report html=" + missing + "/x.html"},
		{"compare json report", []string{"compare", "--report", "json=" + missing + "/x.json", nowhere, nowhere}, "--report json="},
		{"merge report", []string{"merge", "--report", "junit=" + missing + "/x.xml", nowhere}, "--report junit="},
		{"curve plot", []string{"curve", "--plot", missing + "/c.svg", nowhere, nowhere}, "--plot " + missing + "/c.svg"},
		{"curve html", []string{"curve", "--html", missing + "/c.html", nowhere, nowhere}, "--html "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := run(tc.args...)
			usageLine(t, code, stdout, stderr, tc.flag, "the directory "+missing+" does not exist")
		})
	}
}

// TestCompareHelpStatesTheRules checks that compare --help says which
// rule judges what, and which side rtol scales, as torch users know it.
func TestCompareHelpStatesTheRules(t *testing.T) {
	t.Parallel()
	code, stdout, _ := run("compare", "--help")
	if code != exitPass {
		t.Fatalf("exit %d", code)
	}
	help := strings.Join(strings.Fields(stdout), " ")
	for _, want := range []string{
		"gradients by the step rules",
		"losses and outputs by their level",
		"parameters by their update ratio",
		"The per-tensor rule",
		"decides only pairs whose max_rel_l2 a policy rule or --max-rel-l2 sets, integer and bool pairs",
		"rtol scales |REFERENCE|, the first argument",
		"torch.testing.assert_close(actual, expected), its second argument",
		"--reference-graphed",
		"--rename",
	} {
		if !strings.Contains(help, want) {
			t.Errorf("compare --help does not say %q", want)
		}
	}
}

// TestSingleFilesOfOtherShapes compares two single-tensor files of
// different shapes: a genuine comparison (paired whatever their names),
// failing as a shape mismatch, but no dynamic_shape cause: two tensors
// outside any step show no batch of another size at some steps.
func TestSingleFilesOfOtherShapes(t *testing.T) {
	t.Parallel()
	eager, graph := scenario("fp32_adam")
	a, b := filepath.Join(eager, "losses.npy"), filepath.Join(graph, "step_000001", "params", "fc1.weight.npy")
	code, stdout, stderr := run("compare", "--format", "json", a, b)
	var rep struct {
		Verdict string `json:"verdict"`
		Causes  []struct {
			ID string `json:"id"`
		} `json:"causes"`
		Tensors []struct {
			Status string `json:"status"`
		} `json:"tensors"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if code != exitDiff || rep.Verdict != "fail" || len(rep.Tensors) != 1 || rep.Tensors[0].Status != "shape_mismatch" {
		t.Errorf("exit %d, verdict %s, pairs %+v: want one shape mismatch, failing", code, rep.Verdict, rep.Tensors)
	}
	for _, c := range rep.Causes {
		if c.ID == "dynamic_shape" {
			t.Errorf("dynamic_shape named for two single files")
		}
	}
}
