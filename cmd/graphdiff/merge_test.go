package main

import (
	"archive/zip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// shardAndMerge runs compare with --shard i/n for every i, writing each
// shard's JSON report, then merges them in reverse order. It returns the
// merge's exit status and stdout.
func shardAndMerge(t *testing.T, n int, format string, compareArgs ...string) (int, string) {
	t.Helper()
	dir := t.TempDir()
	var reports []string
	for i := n; i >= 1; i-- {
		path := filepath.Join(dir, fmt.Sprintf("shard-%d.json", i))
		args := append([]string{"compare", "--shard", fmt.Sprintf("%d/%d", i, n), "--report", "json=" + path}, compareArgs...)
		if code, _, stderr := run(args...); code == 2 && !strings.Contains(stderr, "could not be read") {
			t.Fatalf("shard %d/%d: exit 2: %s", i, n, stderr)
		}
		reports = append(reports, path)
	}
	code, stdout, stderr := run(append([]string{"merge", "--read-runs", "--top", "0", "--format", format}, reports...)...)
	if strings.Contains(stderr, "diagnosed from the metrics alone") {
		t.Fatalf("merge could not read the dumps again: %s", stderr)
	}
	return code, stdout
}

// TestMergeEqualsUnsharded shards real comparisons 2, 3 and 7 ways (more
// shards than some runs have steps, so some shards are nearly empty) and
// checks that merging the shards' reports gives exactly the report, byte
// for byte, and the exit status of the unsharded comparison: the same
// pairs, verdict, first divergence, causes, warnings and curve analysis.
func TestMergeEqualsUnsharded(t *testing.T) {
	t.Parallel()
	type tc struct {
		name string
		args []string
	}
	var cases []tc
	scenarios, err := filepath.Glob("../../testdata/scenarios/*/graph")
	if err != nil || len(scenarios) < 20 {
		t.Fatalf("scenarios: %v, %d found", err, len(scenarios))
	}
	for _, graph := range scenarios {
		dir := filepath.Dir(graph)
		cases = append(cases, tc{filepath.Base(dir), []string{filepath.Join(dir, "eager"), graph}})
	}
	// corpus runs whose verdict needs a whole step in hand: parameters
	// that drift where gradients are noise (safetensors, bf16), and a
	// frozen learning rate found by the update ratio (torch.save)
	for _, dir := range []string{"gpt2/gpt2_bf16_adamw_ok", "cnn_bn/cnn_bn_captured_lr", "embed/embed_fp32_adam_ok"} {
		dir = filepath.Join("../../testdata/corpus", dir)
		cases = append(cases, tc{filepath.Base(dir), []string{filepath.Join(dir, "eager"), filepath.Join(dir, "graph")}})
	}
	// users' layouts: a flat directory of step_<k>.pt (state_dict kinds,
	// parameters at the first dumped step judged by the gradients),
	// float32 .npz files holding a bfloat16 model (precision from values)
	// and the general-checkpoint recipe, no gradients: the optimizer's
	// moments stand in for them in another shard than the parameters'
	for _, dir := range []string{"vit/vit_recipe_fp32_ok", "unet_gn/unet_gn_resume_bf16_ema_ok", "moe/moe_tutorial_ok", "gnn/gnn_tutorial_input_lag"} {
		dir = filepath.Join("../../testdata/userloops", dir)
		cases = append(cases, tc{filepath.Base(dir), []string{filepath.Join(dir, "eager"), filepath.Join(dir, "graph")}})
	}
	// served probabilities scaled by a temperature frozen at capture
	// (failing; and inside the bf16 limit, a warning), and learning rates
	// dropped between sparse dumps, named from the steps' update facts
	for _, c := range []struct{ dir, dtype string }{{"infer/infer_temp_captured", ""}, {"infer/infer_tab_temp_captured", ""},
		{"infer/infer_resnet_autocast_temp_captured", "bf16"}, {"moe/moe_every2_lr_drop_captured", ""}, {"tab/tab_every4_lr_drop_captured", ""}} {
		dir := filepath.Join("../../testdata/userloops", c.dir)
		args := []string{filepath.Join(dir, "eager"), filepath.Join(dir, "graph")}
		if c.dtype != "" {
			args = append([]string{"--compute-dtype", c.dtype}, args...)
		}
		cases = append(cases, tc{filepath.Base(dir), args})
	}
	// decoding: tokens beside their logits, judged by the near-tie rule
	// with every earlier step of each sequence (a parted sequence is left
	// out from then on), masked vocabularies left out of the norms
	decoding, err := filepath.Glob("../../testdata/decode/*/graph")
	if err != nil || len(decoding) < 6 {
		t.Fatalf("decode: %v, %d found", err, len(decoding))
	}
	for _, dir := range []string{"kv_decoder_bf16_ok", "kv_decoder_autocast_ok", "kv_decoder_stale_token", "kv_decoder_uninit_pad", "kv_decoder_captured_pos"} {
		decoding = append(decoding, filepath.Join("../../testdata/userloops/kv_decoder", dir, "graph"))
	}
	for _, graph := range decoding {
		dir := filepath.Dir(graph)
		cases = append(cases, tc{filepath.Base(dir), []string{filepath.Join(dir, "eager"), graph}})
	}
	// the same as one .npy file per tensor (a directory per step)
	npy := t.TempDir()
	for _, run := range []string{"eager", "graph"} {
		npzToTree(t, filepath.Join("../../testdata/decode/near_tie_ok", run), filepath.Join(npy, run))
	}
	cases = append(cases, tc{"near_tie_npy", []string{filepath.Join(npy, "eager"), filepath.Join(npy, "graph")}})
	broken := brokenRun(t)
	// a real bug beside a layer renamed in the graphed run, paired by
	// --rename: merge --read-runs reads REFERENCE's samples of it under
	// the new name, as the unsharded comparison does
	capturedLR := "../../testdata/scenarios/captured_lr"
	renamedGraph := renamed(t, filepath.Join(capturedLR, "graph"), "fc2.weight", "mid.weight")
	cases = append(cases,
		tc{"rename", []string{"--rename", "fc2.weight=mid.weight", filepath.Join(capturedLR, "eager"), renamedGraph}},
		tc{"missing_extra", []string{"../../testdata/runs/tree", "../../testdata/runs/flat"}},
		tc{"baseline", []string{"--baseline", "../../testdata/scenarios/bf16_adam/baseline",
			"../../testdata/scenarios/bf16_adam/eager", "../../testdata/scenarios/bf16_adam/graph"}},
		tc{"policy", []string{"--policy", "../../tolerances/testdata/example_policy.yaml",
			"../../testdata/scenarios/bf16_adam/eager", "../../testdata/scenarios/bf16_adam/graph"}},
		tc{"strict", []string{"--strict", "../../testdata/scenarios/lr_decay_tiny/eager", "../../testdata/scenarios/lr_decay_tiny/graph"}},
		tc{"compute_dtype", []string{"--compute-dtype", "bfloat16", eagerRun, graphRun}},
		tc{"unreadable", []string{eagerRun, broken}},
		tc{"unreadable_pair", []string{eagerRun, truncatedRun(t)}},
	)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			wantCode, want, stderr := run(append([]string{"compare", "--format", "json"}, c.args...)...)
			if wantCode == 2 && !strings.HasPrefix(c.name, "unreadable") {
				t.Fatalf("unsharded: exit 2: %s", stderr)
			}
			for _, n := range []int{2, 3, 7} {
				code, got := shardAndMerge(t, n, "json", c.args...)
				if code != wantCode {
					t.Errorf("%d shards: exit %d, unsharded %d", n, code, wantCode)
				}
				if got != want {
					t.Errorf("%d shards: merged report differs from the unsharded one:\n%s", n, lineDiff(want, got))
				}
			}
		})
	}
	// The text report too, on a failing run with causes and a curve.
	args := []string{"../../testdata/scenarios/captured_lr/eager", "../../testdata/scenarios/captured_lr/graph"}
	_, want, _ := run(append([]string{"compare", "--top", "0"}, args...)...)
	if _, got := shardAndMerge(t, 4, "text", args...); got != want {
		t.Errorf("merged text report differs:\n%s", lineDiff(want, got))
	}
}

// brokenRun copies the fp32 graph run and adds a truncated file to it.
func brokenRun(t *testing.T) string {
	dir := filepath.Join(t.TempDir(), "graph")
	if err := os.CopyFS(dir, os.DirFS(graphRun)); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile("../../testdata/bad/truncated.npy")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "step_000002", "grads", "extra.npy"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// truncatedRun copies the fp32 graph run and truncates one of its files,
// so that one pair is unreadable in the second run.
func truncatedRun(t *testing.T) string {
	dir := filepath.Join(t.TempDir(), "graph")
	if err := os.CopyFS(dir, os.DirFS(graphRun)); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "step_000002", "grads", "fc1.weight.npy")
	if err := os.Truncate(file, 200); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestMergeRefuses checks that merge will not report a comparison with a
// shard missing, a shard given twice, or shards of different comparisons,
// and that --shard refuses bad values and --fail-fast.
func TestMergeRefuses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	shard := func(spec, a, b string) string {
		path := filepath.Join(dir, strings.ReplaceAll(spec, "/", "of")+filepath.Base(filepath.Dir(b))+".json")
		if code, _, stderr := run("compare", "--shard", spec, "--report", "json="+path, a, b); code == 2 {
			t.Fatalf("shard %s: %s", spec, stderr)
		}
		return path
	}
	a, b := "../../testdata/scenarios/captured_lr/eager", "../../testdata/scenarios/captured_lr/graph"
	s1, s2, s3 := shard("1/3", a, b), shard("2/3", a, b), shard("3/3", a, b)
	other := shard("3/3", "../../testdata/scenarios/input_lag/eager", "../../testdata/scenarios/input_lag/graph")
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"missing", []string{s1, s3}, "missing shard 2/3"},
		{"twice", []string{s1, s2, s3, s2}, "shard 2/3 given twice"},
		{"other comparison", []string{s1, s2, other}, "input_lag"},
		{"not a report", []string{s1, s2, "../../testdata/runs/tree/manifest.json"}, "not a graphdiff compare JSON report"},
		{"no file", []string{s1, s2, filepath.Join(dir, "nope.json")}, "nope.json"},
	} {
		code, _, stderr := run(append([]string{"merge"}, c.args...)...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 and %q", c.name, code, stderr, c.want)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--shard", "0/3"}, "want 1 ≤ I ≤ N"},
		{[]string{"--shard", "4/3"}, "want 1 ≤ I ≤ N"},
		{[]string{"--shard", "two"}, "want I/N"},
		{[]string{"--shard", "1/2", "--fail-fast"}, "cannot be combined"},
	} {
		code, _, stderr := run(append(append([]string{"compare"}, c.args...), a, b)...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("compare %v: exit %d, stderr %q; want exit 2 and %q", c.args, code, stderr, c.want)
		}
	}
}

// TestShardsSplitThePairs checks that every pair lands in exactly one
// shard and that the shards are not lopsided.
func TestShardsSplitThePairs(t *testing.T) {
	t.Parallel()
	a, b := "../../testdata/scenarios/captured_lr/eager", "../../testdata/scenarios/captured_lr/graph"
	_, full, _ := run("compare", "--format", "json", a, b)
	var doc struct{ Tensors []struct{ Name string } }
	if err := json.Unmarshal([]byte(full), &doc); err != nil {
		t.Fatal(err)
	}
	total, n := 0, 4
	for i := 1; i <= n; i++ {
		_, out, _ := run("compare", "--format", "json", "--shard", fmt.Sprintf("%d/%d", i, n), a, b)
		var s struct {
			Tensors []struct{ Name string }
			Shard   struct{ Index, Count int }
		}
		if err := json.Unmarshal([]byte(out), &s); err != nil {
			t.Fatal(err)
		}
		if s.Shard.Index != i || s.Shard.Count != n {
			t.Errorf("shard %d/%d reports itself as %+v", i, n, s.Shard)
		}
		if k := len(s.Tensors); k < len(doc.Tensors)/n/2 || k > 2*len(doc.Tensors)/n {
			t.Errorf("shard %d/%d holds %d of %d pairs", i, n, k, len(doc.Tensors))
		}
		total += len(s.Tensors)
	}
	if total != len(doc.Tensors) {
		t.Errorf("shards hold %d pairs, the comparison %d", total, len(doc.Tensors))
	}
}

// TestMergeWithoutDumps merges shard reports after the dumps are gone:
// the verdict and first divergence still come from the reports. Without
// --read-runs merge never looks for the runs (no warning that they are
// gone, a note that they were not read); with it, it says that it could
// not load them and diagnosed from the metrics alone. Either way the
// report is the same.
func TestMergeWithoutDumps(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, run := range []string{"eager", "graph"} {
		if err := os.CopyFS(filepath.Join(dir, run), os.DirFS(filepath.Join("../../testdata/scenarios/captured_lr", run))); err != nil {
			t.Fatal(err)
		}
	}
	a, b := filepath.Join(dir, "eager"), filepath.Join(dir, "graph")
	_, want, _ := run("compare", "--format", "json", a, b)
	var reports []string
	for i := 1; i <= 2; i++ {
		path := filepath.Join(dir, fmt.Sprintf("shard-%d.json", i))
		run("compare", "--shard", fmt.Sprintf("%d/2", i), "--report", "json="+path, a, b)
		reports = append(reports, path)
	}
	if err := os.RemoveAll(a); err != nil {
		t.Fatal(err)
	}
	code, unread, stderr := run(append([]string{"merge", "--format", "json"}, reports...)...)
	if code != 1 || strings.Contains(stderr, "diagnosed from the metrics alone") || !strings.Contains(stderr, "the runs were not read") {
		t.Fatalf("without --read-runs: exit %d, stderr %q", code, stderr)
	}
	code, got, stderr := run(append([]string{"merge", "--read-runs", "--format", "json"}, reports...)...)
	if code != 1 || !strings.Contains(stderr, a) || !strings.Contains(stderr, "diagnosed from the metrics alone") {
		t.Fatalf("with --read-runs: exit %d, stderr %q", code, stderr)
	}
	if unread != got {
		t.Errorf("the reports merged with and without --read-runs differ:\n%s", lineDiff(got, unread))
	}
	type doc struct {
		Verdict         string
		FirstDivergence json.RawMessage `json:"first_divergence"`
		Tensors         json.RawMessage
	}
	var w, g doc
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatal(err)
	}
	if g.Verdict != w.Verdict || string(g.FirstDivergence) != string(w.FirstDivergence) || string(g.Tensors) != string(w.Tensors) {
		t.Errorf("merged without dumps: verdict %s (want %s), first divergence %s (want %s), tensors equal %v",
			g.Verdict, w.Verdict, g.FirstDivergence, w.FirstDivergence, string(g.Tensors) == string(w.Tensors))
	}
}

// TestMergeDistrustsShards takes the two shard reports of a real passing
// comparison and tampers with one the way a broken or hostile producer
// would: impossible shard indexes and counts, negative steps and shapes,
// counts that do not fit the shape, metrics forged to pass, a report of
// no tensors. merge refuses each (exit 2, saying what is wrong, at once)
// or re-judges it from its metrics (a forged status fails), and a merge
// that compared nothing is never a pass.
func TestMergeDistrustsShards(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var reports [2]string
	for i := range 2 {
		reports[i] = filepath.Join(dir, fmt.Sprintf("shard-%d.json", i+1))
		if code, _, stderr := run("compare", "--shard", fmt.Sprintf("%d/2", i+1), "--report", "json="+reports[i], eagerRun, graphRun); code != 0 {
			t.Fatalf("shard %d: exit %d %s", i+1, code, stderr)
		}
	}
	original, err := os.ReadFile(reports[0])
	if err != nil {
		t.Fatal(err)
	}
	tamper := func(edit func(doc map[string]any)) string {
		var doc map[string]any
		if err := json.Unmarshal(original, &doc); err != nil {
			t.Fatal(err)
		}
		edit(doc)
		data, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "tampered.json")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	tensors := func(doc map[string]any) []any { return doc["tensors"].([]any) }
	firstCompared := func(doc map[string]any) map[string]any {
		for _, x := range tensors(doc) {
			if m := x.(map[string]any); m["metrics"] != nil {
				return m
			}
		}
		t.Fatal("no compared tensor in the shard report")
		return nil
	}
	for _, tc := range []struct {
		name string
		edit func(doc map[string]any)
		code int
		want string
	}{
		{"index beyond count", func(d map[string]any) { d["shard"].(map[string]any)["index"] = 3 }, 2, "want 1 ≤ index ≤ count"},
		{"negative count", func(d map[string]any) { d["shard"].(map[string]any)["count"] = -1 }, 2, "want 1 ≤ index ≤ count"},
		{"count of 2^62", func(d map[string]any) { d["shard"].(map[string]any)["count"] = float64(1 << 62) }, 2, "want 1 ≤ index ≤ count"},
		{"negative step", func(d map[string]any) { firstCompared(d)["step"] = -3 }, 2, "step -3 is negative"},
		{"negative shape", func(d map[string]any) { firstCompared(d)["shape"] = []any{-4, 2} }, 2, "negative dimension"},
		{"count of 3e8", func(d map[string]any) { firstCompared(d)["metrics"].(map[string]any)["count"] = 3e8 }, 2, "is not the"},
		{"forged status", func(d map[string]any) {
			m := firstCompared(d)
			m["metrics"].(map[string]any)["rel_l2"] = 5.0
			m["status"] = "match"
		}, 1, "relative L2 error 5"},
		{"no tensors", func(d map[string]any) { d["tensors"] = []any{}; d["shard"].(map[string]any)["count"] = 1 }, 2, "nothing was compared"},
		{"rename of no name", func(d map[string]any) { d["renamed"] = []any{"fc1.weight"} }, 2, `renamed[0]: "fc1.weight": want OLD=NEW`},
		{"rename of its own shard", func(d map[string]any) { d["renamed"] = []any{"fc1.weight=layer1.weight"} }, 2,
			"shard 2/2 was compared with no --rename, shard 1/2 with --rename fc1.weight=layer1.weight: compare every shard with the same --rename values"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"merge", tamper(tc.edit)}
			if tc.name != "no tensors" {
				args = append(args, reports[1])
			}
			start := time.Now()
			code, stdout, stderr := run(args...)
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("took %v", took)
			}
			if code != tc.code || !strings.Contains(stdout+stderr, tc.want) {
				t.Errorf("exit %d, want %d with %q:\n%s%s", code, tc.code, tc.want, stdout, stderr)
			}
		})
	}
}

// npzToTree writes the members of each gen_<k>.npz in dir (numpy's .npy
// bytes, as np.savez stored them) to out/step_<k>/<member>.npy.
func npzToTree(t *testing.T, dir, out string) {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "gen_*.npz"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("%s: %v, %d archives", dir, err, len(paths))
	}
	for _, p := range paths {
		step := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(p), "gen_"), ".npz")
		zr, err := zip.OpenReader(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range zr.File {
			r, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			data, err := io.ReadAll(r)
			r.Close()
			if err != nil {
				t.Fatal(err)
			}
			target := filepath.Join(out, "step_"+step, f.Name)
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(target, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		zr.Close()
	}
}
