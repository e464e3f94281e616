package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/graphdiff/graphdiff/diagnose"
)

// NewCmdExplain returns the explain command.
func NewCmdExplain(stdout io.Writer) *cobra.Command {
	c := &cobra.Command{
		Use:   "explain [CAUSE]",
		Short: "Explain a likely cause: what goes wrong, how it shows, how to confirm and fix it",
		Long: `explain prints the full explanation of a cause that compare can name, or,
without an argument, the list of causes.`,
		Example: `  graphdiff explain
  graphdiff explain stale_input`,
		Args: argsUsage(cobra.MaximumNArgs(1)),
		ValidArgsFunction: func(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			var ids []string
			for _, e := range diagnose.Causes {
				ids = append(ids, e.ID+"\t"+e.Title)
			}
			return ids, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return explainList(stdout)
			}
			return explainRun(stdout, args[0])
		},
	}
	return c
}

func explainList(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, e := range diagnose.Causes {
		fmt.Fprintf(tw, "%s\t%s\n", e.ID, e.Title)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, "\ngraphdiff explain CAUSE prints one in full.")
	return err
}

func explainRun(w io.Writer, id string) error {
	e, ok := diagnose.Explain(id)
	if !ok {
		ids := make([]string, len(diagnose.Causes))
		for i, c := range diagnose.Causes {
			ids[i] = c.ID
		}
		return &usageError{err: fmt.Errorf("unknown cause %q (one of %s)", id, strings.Join(ids, ", "))}
	}
	fmt.Fprintf(w, "%s: %s\n", e.ID, e.Title)
	for _, sec := range []struct{ head, text string }{
		{"What goes wrong", e.What}, {"How it shows in dumps", e.Signature},
		{"How to confirm", e.Confirm}, {"How to fix", e.Fix},
	} {
		fmt.Fprintf(w, "\n%s\n", sec.head)
		for _, line := range strings.Split(sec.text, "\n") {
			fmt.Fprintf(w, "  %s\n", line)
		}
	}
	return nil
}
