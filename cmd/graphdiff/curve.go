package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/graphdiff/graphdiff/check"
	"github.com/graphdiff/graphdiff/curve"
	"github.com/graphdiff/graphdiff/judge"
	"github.com/graphdiff/graphdiff/loaders"
	"github.com/graphdiff/graphdiff/report"
)

type curveOptions struct {
	A, B     string
	Baseline string
	Format   string
	Plot     string
	HTML     string
	DType    string
	Compute  string
	// ReferenceGraphed accepts a REFERENCE run directory whose manifest
	// says graphed beside an OTHER whose manifest says eager.
	ReferenceGraphed bool
	analysis         curve.Options
	read             loaders.CurveOptions
	load             loadFlags

	Stdout, Stderr io.Writer
	terminal       func(io.Writer) bool
}

// NewCmdCurve returns the curve command.
func NewCmdCurve(stdout, stderr io.Writer) *cobra.Command {
	opts := &curveOptions{Stdout: stdout, Stderr: stderr, terminal: isTerminal, analysis: curve.DefaultOptions()}
	c := &cobra.Command{
		Use:   "curve REFERENCE OTHER",
		Short: "Compare two loss curves: do they agree, where do they part, sudden break or drift",
		Long: `curve reads two loss curves — 1-D .npy (index = step), run directories, CSV with
a header, JSON lines, or TensorBoard event files — aligns them by step and
says whether they agree. REFERENCE is the eager run, OTHER the graphed one:
where both are run directories whose manifest.json "run": {"graphed": ...}
says the first is graphed and the second eager, curve stops and asks to
swap them (--reference-graphed keeps the order given).

Differences are measured in rounding units of the dtype the model computed
in (ε·|loss|; give --compute-dtype for bf16 models, autocast and TF32, whose
losses are stored as float32). The curves part where something changed:
  - sudden: a step more than --jump times the largest difference of the
    previous --window steps (and beyond one unit), with more than
    --allowed-failing-steps of the five steps from it beyond it too;
  - shift: the mean difference over --window steps reaches --level standard
    errors of the reference curve's own step-to-step noise, a slow break;
    it starts where the cumulative difference began to move away;
  - beyond_baseline (with --baseline, the reference run again from weights
    one ULP apart): the relative difference passes 3× the largest the
    baseline shows plus one unit, in 3 of 5 steps.
A break that grew out of bitwise-equal curves starts at the first step that
differs; the first common step starts none (it carries whatever the runs
did before the curves begin). Drift without any passes, with how large it
got: without a baseline, drift of any size is not judged (--max-drift
makes a large drift fail). Patterns: identical, within_noise, drift,
sudden, shift, beyond_baseline, nan.

Exit status: 0 the curves agree, 1 they part, 2 usage or input error.`,
		Example: `  graphdiff curve runs/eager runs/graph
  graphdiff curve eager/metrics.csv graph/metrics.csv --column train_loss --plot curves.png
  graphdiff curve eager/tb graph/tb --tag "lm loss" --html curves.html`,
		Args: argsUsage(cobra.ExactArgs(2)),
		ValidArgsFunction: func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			return nil, cobra.ShellCompDirectiveDefault
		},
		RunE: func(c *cobra.Command, args []string) error {
			opts.A, opts.B = args[0], args[1]
			return curveRun(opts)
		},
	}
	f := c.Flags()
	f.StringVar(&opts.Format, "format", "text", "output format: "+report.FormatList(report.CurveFormats))
	f.StringVar(&opts.Plot, "plot", "", "also draw the curves and their difference to FILE (.svg or .png)")
	f.StringVar(&opts.HTML, "html", "", "also write a self-contained HTML report to FILE")
	f.StringVar(&opts.read.Column, "column", "", "CSV column of the loss (default: the first whose name contains \"loss\")")
	f.StringVar(&opts.read.Key, "key", "", "JSON-lines key of the loss (default: \"loss\", else the first containing \"loss\")")
	f.StringVar(&opts.read.Tag, "tag", "", "TensorBoard scalar tag (default: the first containing \"loss\")")
	f.StringVar(&opts.Compute, "compute-dtype", "", "dtype the model computed in: bfloat16, float16, tf32 (default: the manifests, else the model's dtype in run directories, else the losses')")
	f.Float64Var(&opts.analysis.RTol, "rtol", 0, "relative rounding unit (default: the working epsilon graphdiff compare uses for the same runs, from --compute-dtype, the manifests and the model's dtype; for losses alone, the losses' dtype's)")
	f.Float64Var(&opts.analysis.ATol, "atol", 0, "absolute floor of the rounding unit, for losses near zero")
	f.Float64Var(&opts.analysis.Jump, "jump", opts.analysis.Jump, "how many times the largest difference of the previous --window steps a step must exceed to start a break")
	f.IntVar(&opts.analysis.Window, "window", opts.analysis.Window, "how many previous steps the history and the level test look at")
	f.IntVar(&opts.analysis.AllowedFailingSteps, "allowed-failing-steps", opts.analysis.AllowedFailingSteps, "steps of the five from a candidate break that may stay under its band without it being a spike")
	f.Float64Var(&opts.analysis.Level, "level", opts.analysis.Level, "standard errors of the reference's step-to-step noise the mean difference over --window steps must reach to be a shift")
	f.Float64Var(&opts.analysis.MaxDrift, "max-drift", opts.analysis.MaxDrift, "fail a drift whose mean relative difference over --window steps passes this (default 0: drift passes)")
	f.StringVar(&opts.Baseline, "baseline", "", "a third curve, of the reference run again from weights one ULP apart: the compared curve also fails where it departs from the reference by more than 3× the baseline's largest difference (how far rounding carries this run's loss)")
	f.BoolVar(&opts.ReferenceGraphed, "reference-graphed", false,
		"analyse in the order given when REFERENCE's manifest says it is the graphed run and OTHER's that it is eager (without it graphdiff stops and asks to swap them)")
	f.StringVar(&opts.DType, "dtype", "", "dtype of the losses when the files do not say (default: guessed from the values)")
	opts.load.register(c)
	_ = c.RegisterFlagCompletionFunc("format", formatCompletion(report.CurveFormats))
	_ = c.RegisterFlagCompletionFunc("plot", fileCompletion("svg", "png"))
	_ = c.RegisterFlagCompletionFunc("html", fileCompletion("html"))
	return c
}

func curveRun(opts *curveOptions) error {
	format, err := report.ParseFormat(opts.Format, report.CurveFormats...)
	if err != nil {
		return &usageError{err: fmt.Errorf("--format: %w", err)}
	}
	plotFormat := ""
	if opts.Plot != "" {
		if plotFormat, err = report.PlotFormat(opts.Plot); err != nil {
			return &usageError{err: fmt.Errorf("--plot: %w", err)}
		}
	}
	if err := checkOutputs(outputFlag{"--plot " + opts.Plot, opts.Plot}, outputFlag{"--html " + opts.HTML, opts.HTML}); err != nil {
		return err
	}
	a := opts.analysis
	if !(a.RTol >= 0) || !(a.ATol >= 0) || !(a.Jump >= 1) || a.Window < 2 || a.AllowedFailingSteps < 0 || a.AllowedFailingSteps > 4 || !(a.Level > 0) || !(a.MaxDrift >= 0) {
		return &usageError{err: fmt.Errorf("bad analysis settings: want --rtol, --atol ≥ 0, --jump ≥ 1, --window ≥ 2, --allowed-failing-steps 0 to 4, --level > 0, --max-drift ≥ 0")}
	}
	switch c := strings.ToLower(strings.TrimSpace(opts.Compute)); c {
	case "":
	case "tf32": // float32 math, which the working epsilon already allows to be TF32's
		a.ComputeDType = loaders.Float32
	default:
		if a.ComputeDType, err = loaders.ParseDType(c); err != nil || !a.ComputeDType.IsFloat() {
			return &usageError{err: fmt.Errorf("--compute-dtype: %q is no floating-point dtype (want bfloat16, float16, tf32, float32)", opts.Compute)}
		}
	}
	if opts.DType != "" {
		if a.DType, err = loaders.ParseDType(opts.DType); err != nil {
			return &usageError{err: fmt.Errorf("--dtype: %w", err)}
		}
	}
	if opts.read.Options, err = opts.load.options(); err != nil {
		return err
	}
	res, err := check.Curves(opts.A, opts.B, check.CurvesOptions{Read: opts.read, Analysis: a, Baseline: opts.Baseline,
		ReferenceGraphed: opts.ReferenceGraphed})
	if err != nil {
		return inputMistake("curve", err)
	}
	var writeErr error
	if opts.Plot != "" {
		writeErr = report.WriteFile(opts.Plot, func(w io.Writer) error { return report.CurvePlot(w, res, plotFormat) })
	}
	if opts.HTML != "" && writeErr == nil {
		writeErr = report.WriteFile(opts.HTML, func(w io.Writer) error { return report.CurveHTML(w, res) })
	}
	text := report.TextOptions{Color: colorOn(opts.terminal, opts.Stdout)}
	if err := report.Curve(opts.Stdout, format, res, text); err != nil {
		return err
	}
	if writeErr != nil {
		return writeErr
	}
	if res.Verdict != judge.Pass {
		return errDifference
	}
	return nil
}
