package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/graphdiff/graphdiff/check"
	"github.com/graphdiff/graphdiff/report"
)

// inputMistake turns the inputs a command refused before comparing
// (check.Runs, check.Curves) into usage errors, each one line saying what
// to do, the command line to give again that of command (compare,
// curve); any other error is returned as it is.
func inputMistake(command string, err error) error {
	var line string
	if e, ok := errors.AsType[*check.SwappedRuns](err); ok {
		line = fmt.Sprintf("REFERENCE must be the eager run, but %v: swap them (graphdiff %s %s %s), "+
			"or give --reference-graphed to compare them in this order", err, command, e.Eager, e.Graphed)
	} else if e, ok := errors.AsType[*check.NoTensors](err); ok {
		side := "OTHER"
		if e.First {
			side = "REFERENCE"
		}
		line = fmt.Sprintf("%s %v: nothing to compare; give the directory the run dumped its tensors to", side, err)
	} else if _, ok := errors.AsType[*check.FileAndDirectory](err); ok {
		line = err.Error()
	} else if e, ok := errors.AsType[*check.RenameError](err); ok {
		line = fmt.Sprintf("--rename %s: in REFERENCE (%s), %v", e.Rename, e.Run, e.Err)
	} else {
		return err
	}
	return &usageError{err: errors.New(line)}
}

// outputFlag is a flag that names a file to write: the flag as given
// (--plot curves.svg), and the path.
type outputFlag struct{ flag, path string }

// checkOutputs checks, before any work, that every file a command was
// asked to write can be written (report.CheckWritable): a usage error of
// one line naming the flag otherwise.
func checkOutputs(outs ...outputFlag) error {
	for _, o := range outs {
		if o.path == "" {
			continue
		}
		if err := report.CheckWritable(o.path); err != nil {
			return &usageError{err: fmt.Errorf("%s: %w", o.flag, err)}
		}
	}
	return nil
}

// samePathNote tells on w, when REFERENCE and OTHER are one file or one
// directory (by any path: symbolic links, "./", another spelling), that
// the comparison says nothing of a graphed run: a run agrees with
// itself.
func samePathNote(w io.Writer, a, b string) {
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	if errA != nil || errB != nil || !os.SameFile(sa, sb) {
		return
	}
	what, paths := "file", report.Escape(a)
	if sa.IsDir() {
		what = "directory"
	}
	if a != b {
		paths += ", " + report.Escape(b)
	}
	fmt.Fprintf(w, "graphdiff: note: REFERENCE and OTHER are the same %s (%s): a run agrees with itself, so a PASS says nothing about the graphed run\n",
		what, paths)
}
