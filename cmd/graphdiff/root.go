package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
)

// Main runs graphdiff with the given arguments and streams and returns its
// exit status.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := NewCmdRoot(stdout, stderr)
	root.SetIn(stdin)
	root.SetArgs(args)
	return exitCode(oneLine(root.Execute()), stderr)
}

// NewCmdRoot returns the graphdiff command with its subcommands.
func NewCmdRoot(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "graphdiff",
		Short: "Check that a CUDA-graphed PyTorch run computes what the eager run does",
		Long: `graphdiff reads tensor dumps (.npy, .npz, .safetensors, torch.save) of an
eager PyTorch run and of the same run with CUDA graphs, compares them with
dtype-aware tolerances, and says whether they agree, where they first
diverged and the most likely cause.

Exit status, every command: 0 pass, 1 difference found, 2 usage or input error,
130 interrupted (reports already written are kept, none is left half-written).`,
		Version:       versionString(),
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetVersionTemplate("graphdiff {{.Version}}\n")
	root.SetFlagErrorFunc(flagError)
	root.AddCommand(NewCmdInspect(stdout, stderr), NewCmdCompare(stdout, stderr, nil), NewCmdMerge(stdout, stderr), NewCmdExplain(stdout), NewCmdCurve(stdout, stderr), NewCmdDocs(stdout))
	return root
}

// oneLine puts cobra's error for a word that names no command on one
// line, with the commands it may have meant, as a usage error (with
// none close, it points to help, as a flag nothing is close to does; cobra
// spreads it over lines, which the printed error would show as escapes);
// any other error is returned as it is.
func oneLine(err error) error {
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	first, rest, _ := strings.Cut(msg, "\n")
	if !strings.HasPrefix(first, "unknown command ") {
		return err
	}
	var meant []string
	for _, l := range strings.Split(rest, "\n") {
		if w, ok := strings.CutPrefix(l, "\t"); ok && w != "" {
			meant = append(meant, w)
		}
	}
	if len(meant) == 0 { // nothing close: where help is, as for flags
		return &usageError{err: errors.New(first), help: "graphdiff"}
	}
	return &usageError{err: fmt.Errorf("%s: did you mean %s?", first, strings.Join(meant, " or "))}
}

// argsUsage wraps a positional-argument check so that its failure is a
// usage error with a pointer to help.
func argsUsage(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if err := check(c, args); err != nil {
			return &usageError{err: err, help: c.CommandPath()}
		}
		return nil
	}
}
