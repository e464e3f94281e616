package main

import (
	"fmt"
	"io"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/graphdiff/graphdiff/check"
	"github.com/graphdiff/graphdiff/report"
)

type inspectOptions struct {
	Path   string
	Format string
	Jobs   int
	load   loadFlags

	Stdout io.Writer
	Stderr io.Writer
}

// NewCmdInspect returns the inspect command.
func NewCmdInspect(stdout, stderr io.Writer) *cobra.Command {
	opts := &inspectOptions{Stdout: stdout, Stderr: stderr}
	c := &cobra.Command{
		Use:   "inspect PATH",
		Short: "List the tensors of a dump: a run directory, a container or one file",
		Long: `inspect lists every tensor under PATH (a run directory, an .npz or
.safetensors container, or one .npy file) with its step, kind, dtype, shape
and statistics: min, max, mean and std of the finite elements, NaN and Inf
counts, and the fraction of zeros.

Files that cannot be read are listed after the tensors, and the exit status is
then 2; the other tensors are still reported.`,
		Example: `  graphdiff inspect testdata/runs/mlp_fp32/graph
  graphdiff inspect step_000003/state.safetensors --format json`,
		Args: argsUsage(cobra.ExactArgs(1)),
		ValidArgsFunction: func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			return nil, cobra.ShellCompDirectiveDefault
		},
		RunE: func(c *cobra.Command, args []string) error {
			opts.Path = args[0]
			return inspectRun(opts)
		},
	}
	c.Flags().StringVar(&opts.Format, "format", "text", "output format: "+report.FormatList(report.InspectFormats))
	c.Flags().IntVarP(&opts.Jobs, "jobs", "j", runtime.NumCPU(), "files and chunks read in parallel")
	opts.load.register(c)
	_ = c.RegisterFlagCompletionFunc("format", formatCompletion(report.InspectFormats))
	return c
}

func inspectRun(opts *inspectOptions) error {
	format, err := report.ParseFormat(opts.Format, report.InspectFormats...)
	if err != nil {
		return &usageError{err: fmt.Errorf("--format: %w", err)}
	}
	if opts.Jobs < 1 {
		return &usageError{err: fmt.Errorf("--jobs must be at least 1, not %d", opts.Jobs)}
	}
	lo, err := opts.load.options()
	if err != nil {
		return err
	}
	ins, err := check.Inspect(opts.Path, lo, opts.Jobs)
	if err != nil {
		return err
	}
	if err := report.Inspection(opts.Stdout, format, ins); err != nil {
		return err
	}
	if len(ins.Errors) > 0 {
		return &inputError{count: len(ins.Errors)}
	}
	return nil
}
