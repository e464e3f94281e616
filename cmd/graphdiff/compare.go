package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/graphdiff/graphdiff/check"
	"github.com/graphdiff/graphdiff/internal/words"
	"github.com/graphdiff/graphdiff/judge"
	"github.com/graphdiff/graphdiff/loaders"
	"github.com/graphdiff/graphdiff/outcome"
	"github.com/graphdiff/graphdiff/report"
	"github.com/graphdiff/graphdiff/tolerances"
)

type compareOptions struct {
	A, B         string
	Format       string
	Reports      []string
	RTol, ATol   float64
	MaxRelL2     float64
	MaxMismatch  float64
	set          map[string]bool // flags given on the command line
	ComputeDType string
	Policy       string
	Baseline     string
	FailFast     bool
	Strict       bool
	// FailOnDTypeChange fails pairs stored in two dtypes.
	FailOnDTypeChange bool
	Jobs              int
	Top               int
	Shard             string
	// ReferenceGraphed accepts a REFERENCE whose manifest says graphed
	// beside an OTHER whose manifest says eager.
	ReferenceGraphed bool
	// Renames are the --rename OLD=NEW values, as given.
	Renames []string
	load    loadFlags

	Stdout, Stderr io.Writer
	// terminal reports whether a writer is an interactive terminal, for
	// colour and the progress bar.
	terminal func(io.Writer) bool
	// progress says when a progress bar is drawn, shards when sharding is
	// advised: from sizes too large for tests, which lower them.
	progress progressLimits
	shards   shardAdvice
}

// NewCmdCompare returns the compare command. runF, when set, is called
// with the options once the flags are parsed instead of compareRun: tests
// change what they need and run it.
func NewCmdCompare(stdout, stderr io.Writer, runF func(*compareOptions) error) *cobra.Command {
	opts := &compareOptions{Stdout: stdout, Stderr: stderr, terminal: isTerminal,
		progress: progressLimits{minBytes: progressMinBytes, delay: progressDelay},
		shards:   shardAdvice{pairsPerProcess: pairsPerProcess, listedBytesPerPair: listedBytesPerPair}}
	c := &cobra.Command{
		Use:   "compare REFERENCE OTHER",
		Short: "Compare two runs (or two files) tensor by tensor",
		Long: `compare pairs the tensors of two runs by name and step and judges them.
REFERENCE is the eager run, OTHER the graphed one: where both runs hold a
manifest.json whose "run": {"graphed": ...} says the first is graphed and
the second eager, compare stops and asks to swap them (--reference-graphed
keeps the order given).

Every pair gets elementwise statistics (the elements beyond
|OTHER - REFERENCE| <= atol + rtol*|REFERENCE|, max abs and rel error with
their index, ULP distance, NaN/Inf positions) and aggregate ones (relative L2
error, cosine similarity, error quantiles). A step's pairs are then judged
together, in units of the working epsilon eps of the dtype the model computed
in (--compute-dtype, the manifests, else the parameters' dtype):
  - gradients by the step rules: the RMS of a gradient's difference over
    max(its own RMS, the step's gradient scale: the RMS of all the step's
    reference gradients) fails above the larger of a multiple of eps and a
    growth factor times the largest such ratio of the agreeing steps before
    (the drift the runs built up while agreeing);
  - losses and outputs by their level: their relative L2 error fails above
    the larger of a multiple of eps and a growth factor times the largest of
    the agreeing steps before;
  - parameters by their update ratio: each run's update (this step's value
    minus the previous dumped step's), compared over the elements with
    healthy gradients; beta = sum((uB - uA)*uA) / sum(uA^2) fails beyond
    rounding plus what the gradients' own difference explains, and a
    parameter one run moves and the other leaves unchanged fails.
The per-tensor rule (the relative L2 error above max_rel_l2, or the fraction
of elements beyond tolerance above max_mismatch_fraction) decides only pairs
whose max_rel_l2 a policy rule or --max-rel-l2 sets, integer and bool pairs
(which must be equal), and pairs the step rules do not cover: inputs,
tensors of no kind word (optimizer state and buffers, which also fail when
their updates are the reference's times a factor), parameters without a
previous dumped step.
So --rtol and --atol change the MISMATCHED counts of every pair but the
verdict only of those pairs. NaN/Inf at different positions fail any pair;
tensors only one run holds, and differing shapes, fail too.

rtol scales |REFERENCE|, the first argument: that is the "expected" of
torch.testing.assert_close(actual, expected), its second argument, so
assert_close(graphed, eager) and graphdiff compare EAGER GRAPHED agree on
which side sets the scale.

Tensors that one run holds under another name (same step, kind, shape and
dtype) are listed as a likely rename with the --rename that pairs them, and
no cause is diagnosed from them. REFERENCE and OTHER may also be two files
(.npy, .npz, .safetensors); two single-tensor files are compared whatever
their names. A file against a directory, or a run with no tensor files, is a
usage error; a run compared with itself passes, with a note.

Exit status: 0 all pairs match, 1 some pair differs, 2 usage error or an input
that could not be read (the other pairs are still compared and reported).`,
		Example: `  graphdiff compare runs/eager runs/graph
  graphdiff compare runs/eager runs/graph --compute-dtype bf16 --baseline runs/eager2
  graphdiff compare runs/eager runs/graph --report junit=graphdiff.xml --report markdown=summary.md`,
		Args: argsUsage(cobra.ExactArgs(2)),
		ValidArgsFunction: func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			return nil, cobra.ShellCompDirectiveDefault
		},
		RunE: func(c *cobra.Command, args []string) error {
			opts.A, opts.B = args[0], args[1]
			opts.set = map[string]bool{}
			c.Flags().Visit(func(f *pflag.Flag) { opts.set[f.Name] = true })
			if runF != nil {
				return runF(opts)
			}
			return compareRun(opts)
		},
	}
	f := c.Flags()
	f.StringVar(&opts.Format, "format", "text", "output format: "+report.FormatList(report.CompareFormats))
	f.StringArrayVar(&opts.Reports, "report", nil, "also write a report file, FORMAT=PATH (repeatable), e.g. junit=out.xml")
	f.Float64Var(&opts.RTol, "rtol", 0, "relative tolerance for every tensor, scaling |REFERENCE| (torch.testing.assert_close's expected, its second argument) (default: per dtype, torch.testing's)")
	f.Float64Var(&opts.ATol, "atol", 0, "absolute tolerance for every tensor (default: per dtype, torch.testing's)")
	f.Float64Var(&opts.MaxRelL2, "max-rel-l2", 0, "judge every pair by the per-tensor rule, failing above this relative L2 error (default: the step rules; per dtype where the per-tensor rule applies)")
	f.Float64Var(&opts.MaxMismatch, "max-mismatch-fraction", 0, "fraction of elements beyond tolerance above which a pair judged by the per-tensor rule fails (default: per dtype)")
	f.StringVar(&opts.ComputeDType, "compute-dtype", "", "dtype the math ran in, e.g. bfloat16 under autocast (default: from the manifests)")
	f.StringVar(&opts.Policy, "policy", "", "YAML file of per-tensor tolerance rules")
	f.StringVar(&opts.Baseline, "baseline", "", "a second reference run whose difference from REFERENCE is the noise floor")
	f.BoolVar(&opts.FailFast, "fail-fast", false, "stop after the first step with a failing tensor")
	f.BoolVar(&opts.Strict, "strict", false, "fail on warnings too: structured differences inside the thresholds")
	f.BoolVar(&opts.FailOnDTypeChange, "fail-on-dtype-change", false, "fail pairs whose two sides are stored in different dtypes (default: compare them in the coarser)")
	f.IntVarP(&opts.Jobs, "jobs", "j", runtime.NumCPU(), "files and chunks compared in parallel (tensors under 262,144 elements: twice as many)")
	f.StringVar(&opts.Shard, "shard", "", "compare only shard I of N of the pairs (I/N, e.g. 2/8); combine the shards' JSON reports with graphdiff merge")
	f.IntVar(&opts.Top, "top", 20, "text output: how many tensors to list, worst first (0: all)")
	f.BoolVar(&opts.ReferenceGraphed, "reference-graphed", false,
		"compare in the order given when REFERENCE's manifest says it is the graphed run and OTHER's that it is eager (without it graphdiff stops and asks to swap them)")
	f.StringArrayVar(&opts.Renames, "rename", nil,
		"OLD=NEW: pair REFERENCE's tensors named with OLD (whole '/'-separated name components) with OTHER's named NEW (repeatable), e.g. fc.weight=fc1.weight pairs params/fc.weight and grads/fc.weight with params/fc1.weight and grads/fc1.weight")
	opts.load.register(c)
	_ = c.RegisterFlagCompletionFunc("format", formatCompletion(report.CompareFormats))
	_ = c.RegisterFlagCompletionFunc("compute-dtype", cobra.FixedCompletions(
		[]string{"bfloat16", "float16", "float32", "float8_e4m3fn", "float8_e5m2"}, cobra.ShellCompDirectiveNoFileComp))
	_ = c.RegisterFlagCompletionFunc("policy", fileCompletion("yaml", "yml"))
	_ = c.RegisterFlagCompletionFunc("baseline", dirCompletion)
	_ = c.RegisterFlagCompletionFunc("report", reportCompletion)
	return c
}

// reportCompletion completes --report: the formats, then the path.
func reportCompletion(_ *cobra.Command, _ []string, typed string) ([]string, cobra.ShellCompDirective) {
	if strings.Contains(typed, "=") { // FORMAT= typed: complete the path
		return nil, cobra.ShellCompDirectiveDefault
	}
	var out []string
	for _, f := range report.CompareFormats {
		out = append(out, string(f)+"=")
	}
	return out, cobra.ShellCompDirectiveNoSpace | cobra.ShellCompDirectiveNoFileComp
}

func formatCompletion(formats []report.Format) cobra.CompletionFunc {
	names := make([]string, len(formats))
	for i, f := range formats {
		names[i] = string(f)
	}
	return cobra.FixedCompletions(names, cobra.ShellCompDirectiveNoFileComp)
}

func fileCompletion(exts ...string) cobra.CompletionFunc {
	return func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return exts, cobra.ShellCompDirectiveFilterFileExt
	}
}

func dirCompletion(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return nil, cobra.ShellCompDirectiveDefault
}

// reportFile is one --report FORMAT=PATH.
type reportFile struct {
	format report.Format
	path   string
}

func parseReports(specs []string) ([]reportFile, error) {
	var out []reportFile
	for _, s := range specs {
		name, path, ok := strings.Cut(s, "=")
		if !ok || path == "" {
			return nil, &usageError{err: fmt.Errorf("--report %q: want FORMAT=PATH, e.g. junit=graphdiff.xml", s)}
		}
		f, err := report.ParseFormat(name, report.CompareFormats...)
		if err != nil {
			return nil, &usageError{err: fmt.Errorf("--report %q: %w", s, err)}
		}
		out = append(out, reportFile{f, path})
	}
	return out, nil
}

// checkReportPaths checks, before comparing, that every report file can be
// written (checkOutputs).
func checkReportPaths(reports []reportFile) error {
	outs := make([]outputFlag, len(reports))
	for i, r := range reports {
		outs[i] = outputFlag{flag: "--report " + string(r.format) + "=" + r.path, path: r.path}
	}
	return checkOutputs(outs...)
}

// parseRenames parses the --rename values.
func parseRenames(specs []string) ([]loaders.Rename, error) {
	var out []loaders.Rename
	for _, s := range specs {
		r, err := loaders.ParseRename(s)
		if err != nil {
			return nil, &usageError{err: fmt.Errorf("--rename %w", err)}
		}
		out = append(out, r)
	}
	return out, nil
}

// refuseInputs fails when a report would be written over one of the
// inputs (the same file, by any path): writing it would destroy what is
// being read.
func refuseInputs(reports []reportFile, inputs ...string) error {
	for _, r := range reports {
		ri, err := os.Stat(r.path)
		if err != nil {
			continue // not there yet: no input
		}
		for _, in := range inputs {
			if ii, err := os.Stat(in); err == nil && os.SameFile(ri, ii) {
				return &usageError{err: fmt.Errorf("--report %s=%s: that is the input %s: not written over", r.format, r.path, in)}
			}
		}
	}
	return nil
}

func compareRun(opts *compareOptions) error {
	format, err := report.ParseFormat(opts.Format, report.CompareFormats...)
	if err != nil {
		return &usageError{err: fmt.Errorf("--format: %w", err)}
	}
	reports, err := parseReports(opts.Reports)
	if err != nil {
		return err
	}
	if err := refuseInputs(reports, opts.A, opts.B, opts.Baseline, opts.Policy); err != nil {
		return err
	}
	if err := checkReportPaths(reports); err != nil {
		return err
	}
	renames, err := parseRenames(opts.Renames)
	if err != nil {
		return err
	}
	if opts.Jobs < 1 {
		return &usageError{err: fmt.Errorf("--jobs must be at least 1, not %d", opts.Jobs)}
	}
	resolver, err := opts.resolver()
	if err != nil {
		return err
	}
	lo, err := opts.load.options()
	if err != nil {
		return err
	}
	copts := check.Options{Load: lo, Resolver: resolver, Jobs: opts.Jobs, FailFast: opts.FailFast,
		Baseline: opts.Baseline, Strict: opts.Strict, ReferenceGraphed: opts.ReferenceGraphed, Renames: renames}
	if opts.Shard != "" {
		if copts.Shard, err = loaders.ParseShard(opts.Shard); err != nil {
			return &usageError{err: fmt.Errorf("--shard: %w", err)}
		}
		if opts.FailFast {
			return &usageError{err: errors.New("--fail-fast cannot be combined with --shard: a shard cannot see the other shards' failures")}
		}
	}
	if opts.terminal(opts.Stderr) && format == report.Text {
		// a bar needs every file's header read before comparing: not
		// asked for where none would show
		copts.Progress = func(total int64) (func(int64), func()) {
			bar := startProgress(opts.Stderr, true, total, opts.progress)
			return bar.add, bar.finish
		}
	}
	if copts.Shard == (loaders.Shard{}) {
		copts.Load.Found = heap.files
		copts.Planned = func(pairs int) {
			opts.shards.advise(opts.Stderr, pairs)
			heap.expect(int64(pairs) * bytesPerPair)
		}
	} else {
		heap.holdTo(shardHeapLimit)
	}
	full, err := check.Runs(opts.A, opts.B, copts)
	if err != nil {
		return inputMistake("compare", err)
	}
	samePathNote(opts.Stderr, opts.A, opts.B)
	return writeComparison(full, format, reports, report.TextOptions{Top: opts.Top, TableOnPass: opts.set["top"]}, opts.terminal, opts.Stdout)
}

// shardAdvice says when a comparison is too large for one process; the
// zero shardAdvice never advises.
type shardAdvice struct {
	// pairsPerProcess is how many tensor pairs one comparison holds
	// within 256 MiB of resident memory (see the constant); 0 for no
	// limit.
	pairsPerProcess int
	// listedBytesPerPair is what every shard holds for each pair of the
	// whole comparison (see the constant).
	listedBytesPerPair int64
}

const (
	// pairsPerProcess is how many tensor pairs one comparison holds within
	// 256 MiB of resident memory, with a margin for the machine's noise and
	// for more processors' buffers (bench/README.md).
	pairsPerProcess = 40_000
	// listedBytesPerPair is what every shard holds for each pair of the
	// whole comparison, whichever shard the pair is in: a shard reads the
	// header of every file of both runs (its discovery errors, and the
	// precision the model computes in, must be the same in every shard)
	// (bench/README.md).
	listedBytesPerPair = 1 << 10
)

// advise tells the user on w how to shard a comparison of more pairs than
// a.pairsPerProcess: memory grows linearly with the pairs, and shards each
// hold their part, within shardHeapLimit (holdTo). Where what every shard
// holds of the whole comparison (a.listedBytesPerPair) leaves no room
// under that limit, it says so.
func (a shardAdvice) advise(w io.Writer, pairs int) {
	if a.pairsPerProcess <= 0 || pairs <= a.pairsPerProcess {
		return
	}
	k := (pairs + a.pairsPerProcess - 1) / a.pairsPerProcess
	fmt.Fprintf(w, "graphdiff: %s to compare: about %d MiB in one process (some %d KiB a pair); "+
		"to stay under 256 MiB with room to spare, compare in %d shards (--shard 1/%d ... --shard %d/%d, each with --report json=FILE) "+
		"and combine them with graphdiff merge\n", words.Plural(pairs, "pair"), pairs*bytesPerPair>>20, bytesPerPair>>10, k, k, k, k)
	if listed := int64(pairs) * a.listedBytesPerPair; listed > shardHeapLimit {
		fmt.Fprintf(w, "graphdiff: but each shard reads the header of every file of both runs, about %d MiB for this comparison: "+
			"shards of it will not stay under 256 MiB\n", listed>>20)
	}
}

// writeComparison writes the report files and the report on stdout, and
// turns the verdict into the exit status.
func writeComparison(full *outcome.Comparison, format report.Format, reports []reportFile, files report.TextOptions,
	terminal func(io.Writer) bool, stdout io.Writer) error {
	text := files
	text.Color = colorOn(terminal, stdout)
	var writeErrs []error
	for _, rf := range reports {
		err := report.WriteFile(rf.path, func(w io.Writer) error {
			return report.Compare(w, rf.format, full, files)
		})
		writeErrs = append(writeErrs, err)
	}
	if err := report.Compare(stdout, format, full, text); err != nil {
		return err
	}
	if err := errors.Join(writeErrs...); err != nil {
		return err
	}
	switch result := full.Result; result.Verdict {
	case judge.Error:
		if result.NothingCompared != "" {
			return fmt.Errorf("nothing was compared: %s", result.NothingCompared)
		}
		return &inputError{count: len(result.AllErrors())}
	case judge.Fail:
		return errDifference
	}
	return nil
}

// resolver builds the tolerance resolver from the flags and the policy.
func (opts *compareOptions) resolver() (tolerances.Resolver, error) {
	var r tolerances.Resolver
	for _, f := range []struct {
		name string
		val  *float64
		max  float64
		dst  **float64
	}{
		{"rtol", &opts.RTol, math.Inf(1), &r.Overrides.RTol},
		{"atol", &opts.ATol, math.Inf(1), &r.Overrides.ATol},
		{"max-rel-l2", &opts.MaxRelL2, math.Inf(1), &r.Overrides.MaxRelL2},
		{"max-mismatch-fraction", &opts.MaxMismatch, 1, &r.Overrides.MaxMismatchFraction},
	} {
		if !opts.set[f.name] {
			continue
		}
		if !(*f.val >= 0 && *f.val <= f.max) {
			limit := "≥ 0"
			if !math.IsInf(f.max, 1) {
				limit = fmt.Sprintf("between 0 and %g", f.max)
			}
			return r, &usageError{err: fmt.Errorf("--%s must be %s, not %g", f.name, limit, *f.val)}
		}
		*f.dst = f.val
	}
	if opts.set["fail-on-dtype-change"] {
		r.Overrides.FailOnDTypeChange = &opts.FailOnDTypeChange
	}
	if opts.ComputeDType != "" {
		d, err := loaders.ParseDType(opts.ComputeDType)
		if err != nil {
			return r, &usageError{err: fmt.Errorf("--compute-dtype: %w", err)}
		}
		r.Overrides.ComputeDType = d
	}
	if opts.Policy != "" {
		p, err := tolerances.ReadPolicy(opts.Policy)
		if err != nil {
			return r, &usageError{err: err}
		}
		r.Policy = p
	}
	return r, nil
}

// colorOn reports whether text for w gets colour: on a terminal, unless
// NO_COLOR is set (https://no-color.org).
func colorOn(terminal func(io.Writer) bool, w io.Writer) bool {
	return terminal(w) && os.Getenv("NO_COLOR") == ""
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
