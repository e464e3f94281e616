package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/graphdiff/graphdiff/report"
)

// Exit statuses, the same for every command.
const (
	exitPass  = 0 // everything checked agrees
	exitDiff  = 1 // a difference was found
	exitError = 2 // bad usage, or an input could not be read
)

// usageError is a mistake on the command line: a bad flag value or a
// missing argument. With help set, its message ends with where to find
// help.
type usageError struct {
	err  error
	help string // command path whose --help to point to, or ""
}

func (e *usageError) Error() string {
	if e.help != "" {
		return fmt.Sprintf("%v\nRun '%s --help' for usage.", e.err, e.help)
	}
	return e.err.Error()
}

// printed is how err is shown on stderr: its message escaped
// (report.Escape), as it may quote a file name or a path from a report
// holding an escape sequence or a newline; a usage error's line of help
// follows on a line of its own.
func printed(err error) string {
	if u, ok := err.(*usageError); ok && u.help != "" {
		return fmt.Sprintf("%s\nRun '%s --help' for usage.", report.Escape(u.err.Error()), u.help)
	}
	return report.Escape(err.Error())
}
func (e *usageError) Unwrap() error { return e.err }

// inputError says that some inputs could not be read; the report, already
// written, lists them and the results for the rest.
type inputError struct{ count int }

func (e *inputError) Error() string {
	if e.count == 1 {
		return "1 input could not be read (listed in the report)"
	}
	return fmt.Sprintf("%d inputs could not be read (listed in the report)", e.count)
}

// errDifference is returned by a command that found a difference; its
// report has already said what.
var errDifference = errors.New("difference found")

// exitCode decides the exit status from a command's error, in this one
// place: nil passes (0), errDifference is a difference (1), anything else
// (usage, unreadable input, a report that could not be written) is 2 and is
// printed to stderr with the program name.
func exitCode(err error, stderr io.Writer) int {
	switch {
	case err == nil:
		return exitPass
	case errors.Is(err, errDifference):
		return exitDiff
	}
	fmt.Fprintf(stderr, "graphdiff: %s\n", printed(err))
	return exitError
}
