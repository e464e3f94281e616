package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/graphdiff/graphdiff/diagnose"
	"github.com/graphdiff/graphdiff/failures"
)

// explainOptions are the explain command's flags and argument.
type explainOptions struct {
	Cause  string // CAUSE, or ""
	Error  string // --error: a file, "-" for stdin, or the message or code itself
	Format string // --format: text or json (--error only)
	Stdin  io.Reader
}

// maxErrorText is the most of a traceback file or stdin explain reads.
const maxErrorText = 16 << 20

// NewCmdExplain returns the explain command.
func NewCmdExplain(stdout io.Writer) *cobra.Command {
	opts := &explainOptions{}
	c := &cobra.Command{
		Use:   "explain [CAUSE] | explain --error FILE|-|MESSAGE",
		Short: "Explain a likely cause, or a CUDA-graph capture error: what goes wrong and how to fix it",
		Long: `explain prints the full explanation of a cause that compare can name, or,
without an argument, the list of causes.

With --error it explains an error instead: a capture failure of CUDA graphs
(cudaErrorStreamCapture... 900-906, .item() or print inside capture, an
unregistered generator, RNG state or activation checkpointing during capture,
pinned memory and other threads, DistributedDataParallel), naming the class,
what it means, the fix, the evidence it saw and, for a traceback, the line of
your code it points at. --error takes:
  a file holding the traceback (an existing path),
  -  to read the traceback from stdin,
  anything else as the message or code itself (901, cudaErrorStreamCaptureInvalidated,
     "CUDA error: capturing stream has unjoined work").
An argument that looks like a path (a / or \ and no spaces, or ending in
.txt, .log, .out, .err) but names no file is an error, not a message.

Exit status with --error: 0 explained, 1 not recognised (nothing is
explained), 2 usage or unreadable input.`,
		Example: `  graphdiff explain
  graphdiff explain stale_input
  graphdiff explain --error 904
  graphdiff explain --error train.log --format json
  python train.py 2>&1 | graphdiff explain --error -`,
		Args: argsUsage(cobra.MaximumNArgs(1)),
		ValidArgsFunction: func(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			var ids []string
			for _, e := range diagnose.Causes {
				ids = append(ids, e.ID+"\t"+e.Title)
			}
			for _, e := range failures.Classes {
				ids = append(ids, e.ID+"\t"+e.Title)
			}
			return ids, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				opts.Cause = args[0]
			}
			opts.Stdin = cmd.InOrStdin()
			errorSet := cmd.Flags().Changed("error")
			switch {
			case errorSet && opts.Cause != "":
				return &usageError{err: errors.New("give a CAUSE or --error, not both"), help: cmd.CommandPath()}
			case !errorSet && cmd.Flags().Changed("format"):
				return &usageError{err: errors.New("--format is for --error"), help: cmd.CommandPath()}
			case errorSet:
				return explainErrorRun(stdout, opts)
			case opts.Cause == "":
				return explainList(stdout)
			}
			return explainRun(stdout, opts.Cause)
		},
	}
	c.Flags().StringVar(&opts.Error, "error", "", "explain an error: a traceback `FILE`, - for stdin, or the message or CUDA error code itself")
	c.Flags().StringVar(&opts.Format, "format", "text", "output format for --error: text or json")
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
	fmt.Fprintln(w, "\ngraphdiff explain CAUSE prints one in full.")
	fmt.Fprintln(w, "\nCapture failures (graphdiff explain --error FILE|-|MESSAGE finds them in an error):")
	for _, c := range failures.Classes {
		fmt.Fprintf(tw, "%s\t%s\n", c.ID, c.Title)
	}
	return tw.Flush()
}

func explainRun(w io.Writer, id string) error {
	if c, ok := failures.ClassByID(id); ok {
		writeClass(w, failures.Match{Class: c}, "", nil)
		return nil
	}
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

// errorInput is the text --error names and where it came from.
type errorInput struct {
	Source string // "argument", "file" or "stdin"
	Path   string // the file, for "file"
	Text   string
}

// readErrorInput decides what --error ARG is: "-" is stdin; an existing
// path is a file; an argument that looks like a path but names none is a
// usage error; anything else is the message itself.
func readErrorInput(arg string, stdin io.Reader) (errorInput, error) {
	if arg == "-" {
		b, err := io.ReadAll(io.LimitReader(stdin, maxErrorText))
		if err != nil {
			return errorInput{}, fmt.Errorf("--error -: reading stdin: %w", err)
		}
		return errorInput{Source: "stdin", Text: string(b)}, nil
	}
	if st, err := os.Stat(arg); err == nil {
		if st.IsDir() {
			return errorInput{}, &usageError{err: fmt.Errorf("--error %s: is a directory; give the file holding the traceback", arg)}
		}
		f, err := os.Open(arg)
		if err != nil {
			return errorInput{}, fmt.Errorf("--error %s: %w", arg, err)
		}
		defer f.Close()
		b, err := io.ReadAll(io.LimitReader(f, maxErrorText))
		if err != nil {
			return errorInput{}, fmt.Errorf("--error %s: %w", arg, err)
		}
		return errorInput{Source: "file", Path: arg, Text: string(b)}, nil
	}
	if looksLikePath(arg) {
		return errorInput{}, &usageError{err: fmt.Errorf("--error %s: no such file (to explain a message, give the message itself; - reads stdin)", arg)}
	}
	return errorInput{Source: "argument", Text: arg}, nil
}

// looksLikePath says whether an argument that names no file was meant as
// one: no spaces, and a path separator or a log file's extension.
func looksLikePath(arg string) bool {
	if arg == "" || strings.ContainsAny(arg, " \t\n") {
		return false
	}
	if strings.ContainsAny(arg, `/\`) {
		return true
	}
	switch strings.ToLower(filepath.Ext(arg)) {
	case ".txt", ".log", ".out", ".err":
		return true
	}
	return false
}

// errNotRecognized is explain --error's result for a text showing no known
// failure: exit status 1, after the output said so.
var errNotRecognized = fmt.Errorf("%w: the error is not a capture failure graphdiff knows", errDifference)

func explainErrorRun(w io.Writer, opts *explainOptions) error {
	if opts.Format != "text" && opts.Format != "json" {
		return &usageError{err: fmt.Errorf("--format %q: one of text, json", opts.Format)}
	}
	in, err := readErrorInput(opts.Error, opts.Stdin)
	if err != nil {
		return err
	}
	d := failures.Explain(in.Text)
	if opts.Format == "json" {
		err = writeDiagnosisJSON(w, in, d)
	} else {
		err = writeDiagnosisText(w, d)
	}
	if err != nil {
		return err
	}
	if !d.Recognized() {
		return errNotRecognized
	}
	return nil
}

func writeDiagnosisText(w io.Writer, d failures.Diagnosis) error {
	if !d.Recognized() {
		_, err := fmt.Fprintln(w, "not recognised: this error shows none of the CUDA-graph capture failures graphdiff knows;\n"+
			"nothing is explained. graphdiff explain lists them.")
		return err
	}
	for i, m := range d.Matches {
		if i > 0 {
			fmt.Fprintln(w)
		}
		role := m.Class.Role.String()
		if i > 0 && m.Class.Role == failures.Consequence && d.Matches[0].Class.Role == failures.Cause {
			role = "consequence of " + d.Matches[0].Class.ID
		}
		var frame *failures.Frame
		if i == 0 {
			frame = d.UserFrame
		}
		writeClass(w, m, role, frame)
	}
	return nil
}

// writeClass writes a matched class: its title, the user's frame when
// given, what it means, the fix, the evidence and the sources.
func writeClass(w io.Writer, m failures.Match, role string, frame *failures.Frame) {
	head := m.Class.ID
	if role != "" {
		head += " (" + role + ")"
	}
	fmt.Fprintf(w, "%s: %s\n", head, m.Class.Title)
	if frame != nil {
		writeFrame(w, *frame)
	}
	sections := []struct {
		head  string
		lines []string
	}{
		{"What it means", strings.Split(m.Class.Meaning, "\n")},
		{"How to fix", strings.Split(m.Class.Fix, "\n")},
		{"Evidence", m.Evidence},
		{"Sources", m.Class.Sources},
	}
	for _, sec := range sections {
		if len(sec.lines) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s\n", sec.head)
		for _, l := range sec.lines {
			fmt.Fprintf(w, "  %s\n", oneLineText(l))
		}
	}
}

func writeFrame(w io.Writer, f failures.Frame) {
	fmt.Fprintf(w, "\nYour code\n  %s:%d, in %s\n", oneLineText(f.File), f.Line, oneLineText(f.Function))
	if f.Code != "" {
		fmt.Fprintf(w, "    %s\n", oneLineText(f.Code))
	}
}

// oneLineText keeps text quoted from the input to one printable line: a
// pasted traceback may hold escape sequences.
func oneLineText(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
}

// diagnosisJSON is explain --error --format json's one object.
type diagnosisJSON struct {
	Recognized bool            `json:"recognized"`
	Source     string          `json:"source"`
	Path       string          `json:"path,omitempty"`
	Classes    []classJSON     `json:"classes"`
	UserFrame  *failures.Frame `json:"user_frame"`
}

type classJSON struct {
	ID       string   `json:"id"`
	Title    string   `json:"title"`
	Role     string   `json:"role"`
	Meaning  string   `json:"meaning"`
	Fix      string   `json:"fix"`
	Evidence []string `json:"evidence"`
	Sources  []string `json:"sources"`
}

func writeDiagnosisJSON(w io.Writer, in errorInput, d failures.Diagnosis) error {
	out := diagnosisJSON{Recognized: d.Recognized(), Source: in.Source, Path: in.Path,
		Classes: []classJSON{}, UserFrame: d.UserFrame}
	for _, m := range d.Matches {
		out.Classes = append(out.Classes, classJSON{ID: m.Class.ID, Title: m.Class.Title, Role: m.Class.Role.String(),
			Meaning: m.Class.Meaning, Fix: m.Class.Fix, Evidence: m.Evidence, Sources: m.Class.Sources})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
