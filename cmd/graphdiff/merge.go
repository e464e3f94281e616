package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/graphdiff/graphdiff/check"
	"github.com/graphdiff/graphdiff/judge"
	"github.com/graphdiff/graphdiff/loaders"
	"github.com/graphdiff/graphdiff/report"
)

type mergeOptions struct {
	Reports     []string
	Format      string
	ReportFiles []string
	Top         int
	topSet      bool // --top given: the table shows on a pass too
	// ReadRuns loads the two runs the reports name again, for the
	// likely causes' samples and the curve analysis.
	ReadRuns bool
	load     loadFlags

	Stdout, Stderr io.Writer
	terminal       func(io.Writer) bool
}

// NewCmdMerge returns the merge command.
func NewCmdMerge(stdout, stderr io.Writer) *cobra.Command {
	opts := &mergeOptions{Stdout: stdout, Stderr: stderr, terminal: isTerminal}
	c := &cobra.Command{
		Use:   "merge REPORT.json...",
		Short: "Combine the JSON reports of a sharded comparison into one report",
		Long: `merge reads the JSON reports of every shard of one comparison
(graphdiff compare --shard I/N --format json, or --report json=PATH) and
writes the report an unsharded comparison gives: the same pairs, verdict,
first divergence, likely causes and loss-curve analysis.

The pairs' metrics come from the shard reports, and every step is judged
again from them with all shards' pairs in hand; merge reads no other file
unless asked. The likely causes then come from the metrics alone, with no
loss-curve analysis (a note on stderr says so). With --read-runs, merge
loads the two runs again at the paths the reports name (run it where those
paths resolve, as the shards did), renames REFERENCE's tensors with the
--rename values the shards were compared with (their reports record them),
and recomputes the causes from samples of the dumps, and the curve
analysis: the report an unsharded comparison gives. When they cannot be
loaded, it says so and goes on from the metrics.

merge fails (exit 2) when a shard is missing or given twice, or when the
reports come from different comparisons (other runs, baseline, --rename
values, shard count or precision), so that no pair goes unreported.

Exit status: as compare's, for the merged verdict.`,
		Example: `  graphdiff merge shard-*.json
  graphdiff merge --read-runs shard-*.json
  graphdiff merge shard-*.json --format markdown --report junit=graphdiff.xml`,
		Args: argsUsage(cobra.MinimumNArgs(1)),
		ValidArgsFunction: func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			return []string{"json"}, cobra.ShellCompDirectiveFilterFileExt
		},
		RunE: func(c *cobra.Command, args []string) error {
			opts.Reports = args
			opts.topSet = c.Flags().Changed("top")
			return mergeRun(opts)
		},
	}
	f := c.Flags()
	f.StringVar(&opts.Format, "format", "text", "output format: "+report.FormatList(report.CompareFormats))
	f.StringArrayVar(&opts.ReportFiles, "report", nil, "also write a report file, FORMAT=PATH (repeatable), e.g. junit=out.xml")
	f.IntVar(&opts.Top, "top", 20, "text output: how many tensors to list, worst first (0: all)")
	f.BoolVar(&opts.ReadRuns, "read-runs", false, "load the two runs the reports name, for likely causes from samples and the loss-curve analysis")
	opts.load.register(c)
	_ = c.RegisterFlagCompletionFunc("format", formatCompletion(report.CompareFormats))
	_ = c.RegisterFlagCompletionFunc("report", reportCompletion)
	return c
}

func mergeRun(opts *mergeOptions) error {
	format, err := report.ParseFormat(opts.Format, report.CompareFormats...)
	if err != nil {
		return &usageError{err: fmt.Errorf("--format: %w", err)}
	}
	reports, err := parseReports(opts.ReportFiles)
	if err != nil {
		return err
	}
	if err := refuseInputs(reports, opts.Reports...); err != nil {
		return err
	}
	if err := checkReportPaths(reports); err != nil {
		return err
	}
	lo, err := opts.load.options()
	if err != nil {
		return err
	}
	var parts []*judge.Result
	strict := false
	for _, path := range opts.Reports {
		sr, err := readShardReport(path)
		if err != nil {
			return &usageError{err: err}
		}
		parts = append(parts, sr.Result)
		strict = strict || sr.Strict
	}
	var readWith *loaders.Options
	if opts.ReadRuns {
		readWith = &lo
	}
	full, warning, err := check.Merge(parts, strict, readWith)
	if err != nil {
		return &usageError{err: err}
	}
	switch {
	case warning != nil:
		fmt.Fprintf(opts.Stderr, "graphdiff merge: %s: likely causes are diagnosed from the metrics alone, and there is no curve analysis\n", report.Escape(warning.Error()))
	case !opts.ReadRuns:
		fmt.Fprintln(opts.Stderr, "graphdiff merge: note: the runs were not read (--read-runs reads them): likely causes come from the metrics alone, and there is no curve analysis")
	}
	return writeComparison(full, format, reports, report.TextOptions{Top: opts.Top, TableOnPass: opts.topSet}, opts.terminal, opts.Stdout)
}

func readShardReport(path string) (*report.ShardReport, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sr, err := report.ReadCompareJSON(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if sr.Shard.Count == 0 {
		// an unsharded report records no run-level rules or model dtype
		// to judge its pairs again with: merged, every difference failed
		return nil, fmt.Errorf("%s: not a shard report (written by compare without --shard): merge combines the JSON reports of compare --shard I/N", path)
	}
	return sr, nil
}
