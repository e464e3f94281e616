package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// run runs graphdiff in-process and returns what a user would see: the exit
// status, stdout and stderr.
func run(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = Main(args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// runCompare runs graphdiff compare in-process as run does, with its
// options changed by adjust once the flags are parsed (NewCmdCompare's
// runF), and returns what a user would see.
func runCompare(adjust func(*compareOptions), args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	c := NewCmdCompare(&out, &errb, func(opts *compareOptions) error {
		adjust(opts)
		return compareRun(opts)
	})
	c.SilenceErrors, c.SilenceUsage = true, true // as the root command does
	c.SetArgs(args)
	code = exitCode(c.Execute(), &errb)
	return code, out.String(), errb.String()
}

// TestGolden runs whole command lines and compares exit status, stdout and
// stderr with testdata/NAME.golden; `go test -update` rewrites them.
func TestGolden(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		args []string
	}{
		{"inspect_tree", []string{"inspect", "../../testdata/runs/tree"}},
		{"inspect_tree_json", []string{"inspect", "--format", "json", "../../testdata/runs/tree"}},
		{"inspect_mlp_graph", []string{"inspect", "../../testdata/runs/mlp_fp32/graph"}},
		{"inspect_bf16_json", []string{"inspect", "--format=json", "../../testdata/runs/mlp_bf16/eager/step_000002"}},
		{"inspect_safetensors", []string{"inspect", "../../testdata/safetensors/all_dtypes.safetensors"}},
		{"inspect_npz_partial", []string{"inspect", "../../testdata/bad/not_npy_member.npz"}},
		{"inspect_npz_partial_json", []string{"inspect", "--format", "json", "../../testdata/bad/not_npy_member.npz"}},
		{"inspect_truncated", []string{"inspect", "../../testdata/bad/truncated.npy"}},
		{"inspect_pickle", []string{"inspect", "../../testdata/bad/object.npy"}},
		{"inspect_float8_needs_hint", []string{"inspect", "../../testdata/dtypes/float8_e4m3fn_bits.npy"}},
		{"inspect_float8_hint", []string{"inspect", "--float8", "e4m3fn", "../../testdata/dtypes/float8_e4m3fn_bits.npy"}},
		{"inspect_missing_path", []string{"inspect", "../../testdata/no/such/run"}},
		{"inspect_no_args", []string{"inspect"}},
		{"inspect_bad_format", []string{"inspect", "--format", "yaml", "../../testdata/runs/tree"}},
		{"inspect_bad_float8", []string{"inspect", "--float8", "e3m4", "../../testdata/runs/tree"}},
		{"inspect_unknown_flag", []string{"inspect", "--bogus", "../../testdata/runs/tree"}},

		{"compare_fp32_adam", []string{"compare", "--top", "5", "../../testdata/runs/mlp_fp32/eager", "../../testdata/runs/mlp_fp32/graph"}},
		{"compare_fp32_adam_json", []string{"compare", "--format", "json", "../../testdata/runs/mlp_fp32/eager/step_000003/params", "../../testdata/runs/mlp_fp32/graph/step_000003/params"}},
		{"compare_bf16_markdown", []string{"compare", "--format", "markdown", "../../testdata/runs/mlp_bf16/eager", "../../testdata/runs/mlp_bf16/graph"}},
		{"compare_missing_extra", []string{"compare", "../../testdata/runs/tree", "../../testdata/runs/flat"}},
		{"compare_missing_extra_junit", []string{"compare", "--format", "junit", "../../testdata/runs/tree", "../../testdata/runs/flat"}},
		{"compare_fortran_vs_c", []string{"compare", "../../testdata/npy/f4_fortran.npy", "../../testdata/npy/f4_corder.npy"}},
		{"compare_byte_orders", []string{"compare", "--format", "json", "../../testdata/npy/c16.npy", "../../testdata/npy/c16_be.npy"}},
		{"compare_shape_mismatch", []string{"compare", "../../testdata/npy/f4.npy", "../../testdata/npy/f4_2x3.npy"}},
		{"compare_dtype_mismatch", []string{"compare", "../../testdata/npy/f8.npy", "../../testdata/npy/f2.npy"}},
		{"compare_containers", []string{"compare", "../../testdata/npz/stored.npz", "../../testdata/safetensors/all_dtypes.safetensors"}},
		{"compare_unreadable", []string{"compare", "--format", "json", "../../testdata/bad/not_npy_member.npz", "../../testdata/bad/not_npy_member.npz"}},
		{"compare_captured_lr", []string{"compare", "--top", "8", "../../testdata/scenarios/captured_lr/eager", "../../testdata/scenarios/captured_lr/graph"}},
		{"compare_stale_input_fail_fast", []string{"compare", "--fail-fast", "--top", "5", "../../testdata/scenarios/stale_input/eager", "../../testdata/scenarios/stale_input/graph"}},
		{"compare_loss_weight_json", []string{"compare", "--format", "json", "../../testdata/scenarios/captured_loss_weight/eager", "../../testdata/scenarios/captured_loss_weight/graph"}},
		{"compare_bf16_baseline", []string{"compare", "--top", "3", "--baseline", "../../testdata/scenarios/bf16_adam/baseline", "../../testdata/scenarios/bf16_adam/eager", "../../testdata/scenarios/bf16_adam/graph"}},
		{"compare_policy", []string{"compare", "--top", "3", "--policy", "../../tolerances/testdata/example_policy.yaml", "../../testdata/scenarios/bf16_adam/eager", "../../testdata/scenarios/bf16_adam/graph"}},
		{"compare_rtol_override", []string{"compare", "--top", "3", "--rtol", "0.5", "--atol", "1", "../../testdata/scenarios/captured_loss_weight/eager", "../../testdata/scenarios/captured_loss_weight/graph"}},
		{"compare_thresholds_override", []string{"compare", "--top", "3", "--rtol", "0.5", "--atol", "1", "--max-rel-l2", "5", "../../testdata/scenarios/captured_loss_weight/eager", "../../testdata/scenarios/captured_loss_weight/graph"}},
		{"compare_bad_fraction", []string{"compare", "--max-mismatch-fraction", "1.5", "../../testdata/runs/tree", "../../testdata/runs/tree"}},
		{"compare_bad_policy", []string{"compare", "--policy", "../../testdata/runs/tree/manifest.json", "../../testdata/runs/tree", "../../testdata/runs/tree"}},
		{"compare_grad_accumulation_markdown", []string{"compare", "--format", "markdown", "--fail-fast", "../../testdata/scenarios/grad_accumulation/eager", "../../testdata/scenarios/grad_accumulation/graph"}},
		{"compare_frozen_rng_junit_causes", []string{"compare", "--format", "junit", "--fail-fast", "../../testdata/scenarios/conv_frozen_rng/eager", "../../testdata/scenarios/conv_frozen_rng/graph"}},
		{"curve_break", []string{"curve", "../../testdata/curves/drift_then_break_long/eager", "../../testdata/curves/drift_then_break_long/graph"}},
		{"curve_bf16_drift", []string{"curve", "../../testdata/curves/bf16_adam_long/eager/losses.npy", "../../testdata/curves/bf16_adam_long/graph/losses.npy"}},
		{"curve_csv_vs_tensorboard", []string{"curve", "--column", "loss", "../../testdata/curves/fp32_long/eager/loss.csv", "../../testdata/curves/fp32_long/graph/tb"}},
		{"curve_run_dirs_json", []string{"curve", "--format", "json", "../../testdata/runs/mlp_fp32/eager", "../../testdata/runs/mlp_fp32/graph"}},
		{"curve_strict_spikes", []string{"curve", "--allowed-failing-steps", "0", "--jump", "2", "../../testdata/curves/bf16_adam_long/eager", "../../testdata/curves/bf16_adam_long/graph"}},
		{"curve_bad_tag", []string{"curve", "--tag", "acc", "../../testdata/curves/fp32_long/eager/tb", "../../testdata/curves/fp32_long/graph/tb"}},
		{"curve_bad_plot_name", []string{"curve", "--plot", "x.pdf", "../../testdata/curves/fp32_long/eager", "../../testdata/curves/fp32_long/graph"}},
		{"curve_no_curve", []string{"curve", "../../testdata/npz", "../../testdata/npz"}},
		{"explain_list", []string{"explain"}},
		{"explain_stale_input", []string{"explain", "stale_input"}},
		{"explain_unknown", []string{"explain", "cosmic_rays"}},
		{"compare_one_arg", []string{"compare", "../../testdata/runs/tree"}},
		{"compare_bad_report", []string{"compare", "--report", "html", "../../testdata/runs/tree", "../../testdata/runs/tree"}},
		{"compare_bad_rtol", []string{"compare", "--rtol", "-1", "../../testdata/runs/tree", "../../testdata/runs/tree"}},
		{"compare_bad_compute_dtype", []string{"compare", "--compute-dtype", "tf32x", "../../testdata/runs/tree", "../../testdata/runs/tree"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := run(tc.args...)
			got := fmt.Sprintf("$ graphdiff %s\n-- exit %d --\n-- stdout --\n%s-- stderr --\n%s",
				strings.Join(tc.args, " "), code, stdout, stderr)
			checkGolden(t, filepath.Join("testdata", tc.name+".golden"), got)
		})
	}
}

func checkGolden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs (-want +got):\n%s", path, lineDiff(string(want), got))
	}
}

// lineDiff returns a unified-style diff of two texts: lines only in want
// start with "-", lines only in got with "+", through a longest common
// subsequence of lines.
func lineDiff(want, got string) string {
	a, b := strings.Split(want, "\n"), strings.Split(got, "\n")
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out strings.Builder
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			out.WriteString("  " + a[i] + "\n")
			i++
			j++
		case j < len(b) && (i == len(a) || lcs[i][j+1] >= lcs[i+1][j]):
			out.WriteString("+ " + b[j] + "\n")
			j++
		default:
			out.WriteString("- " + a[i] + "\n")
			i++
		}
	}
	return out.String()
}

func TestVersion(t *testing.T) {
	t.Parallel()
	code, stdout, _ := run("--version")
	if code != 0 || !strings.HasPrefix(stdout, "graphdiff ") || !strings.Contains(stdout, "go1.") {
		t.Errorf("--version: exit %d, %q", code, stdout)
	}
}

// TestCompletion checks that shell completion scripts are produced and that
// flag values complete.
func TestCompletion(t *testing.T) {
	t.Parallel()
	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		code, stdout, stderr := run("completion", shell)
		if code != 0 || len(stdout) < 100 {
			t.Errorf("completion %s: exit %d, %d bytes, %s", shell, code, len(stdout), stderr)
		}
	}
	_, stdout, _ := run("__complete", "inspect", "--format", "")
	if !strings.Contains(stdout, "text\n") || !strings.Contains(stdout, "json\n") {
		t.Errorf("--format completion: %q", stdout)
	}
	_, stdout, _ = run("__complete", "compare", "--report", "")
	if !strings.Contains(stdout, "junit=\n") || !strings.Contains(stdout, "html=\n") {
		t.Errorf("--report completion: %q", stdout)
	}
	_, stdout, _ = run("__complete", "curve", "--plot", "")
	if !strings.Contains(stdout, "svg\n") || !strings.Contains(stdout, "png\n") {
		t.Errorf("--plot completion: %q", stdout)
	}
	_, stdout, _ = run("__complete", "explain", "")
	if !strings.Contains(stdout, "stale_input\t") {
		t.Errorf("explain completion: %q", stdout)
	}
	_, stdout, _ = run("__complete", "inspect", "--float8", "")
	if !strings.Contains(stdout, "e4m3fn\n") || !strings.Contains(stdout, "e5m2\n") {
		t.Errorf("--float8 completion: %q", stdout)
	}
}

// TestDocs writes the command reference as man pages and Markdown, one file
// per command.
func TestDocs(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"man", "markdown"} {
		dir := t.TempDir()
		code, _, stderr := run("docs", "--"+kind, dir)
		if code != 0 {
			t.Fatalf("docs --%s: exit %d %s", kind, code, stderr)
		}
		want := map[string]string{"man": "graphdiff-compare.1", "markdown": "graphdiff_compare.md"}[kind]
		data, err := os.ReadFile(filepath.Join(dir, want))
		if err != nil || !strings.Contains(string(data), "max-mismatch-fraction") {
			t.Errorf("docs --%s: %s: %v", kind, want, err)
		}
	}
	if code, _, _ := run("docs"); code != 2 {
		t.Errorf("docs without a directory: exit %d", code)
	}
	// a symbolic link at a page's name is not written through
	dir := t.TempDir()
	target := filepath.Join(t.TempDir(), "elsewhere")
	if err := os.WriteFile(target, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(dir, "graphdiff-compare.1")); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := run("docs", "--man", dir); code != 2 || !strings.Contains(stderr, "graphdiff-compare.1") {
		t.Errorf("docs --man over a symbolic link: exit %d, stderr %q; want 2 naming the page", code, stderr)
	}
	if got, err := os.ReadFile(target); err != nil || string(got) != "keep" {
		t.Errorf("the link's target changed: %q (%v)", got, err)
	}
}
