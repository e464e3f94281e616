package report

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Format is an output format.
type Format string

// The output formats.
const (
	Text Format = "text"
	JSON Format = "json"
)

// renderer is one output format of one kind of report: the format and the
// function that writes a finished value in it.
type renderer[T any] struct {
	format Format
	write  func(io.Writer, T, TextOptions) error
}

// renderers is the table of one kind of report's output formats, in the
// order help and completion list them. Adding a format to a report is a
// file with its writer and one entry in that report's table.
type renderers[T any] []renderer[T]

// formats returns the table's formats, in order.
func (rs renderers[T]) formats() []Format {
	out := make([]Format, len(rs))
	for i, r := range rs {
		out[i] = r.format
	}
	return out
}

// write writes v in format f; kind names the report in the error for a
// format the table lacks.
func (rs renderers[T]) write(w io.Writer, f Format, v T, o TextOptions, kind string) error {
	for _, r := range rs {
		if r.format == f {
			return checked(w, func(w io.Writer) error { return r.write(w, v, o) })
		}
	}
	return checked(w, func(io.Writer) error { return fmt.Errorf("%s has no %s output", kind, f) })
}

// plain adapts a writer that takes no text options to the table's type.
func plain[T any](write func(io.Writer, T) error) func(io.Writer, T, TextOptions) error {
	return func(w io.Writer, v T, _ TextOptions) error { return write(w, v) }
}

// FormatList words formats for help text: "text", "text or json",
// "text, json, junit, markdown or html".
func FormatList(fs []Format) string {
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = string(f)
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// ParseFormat returns the format named s if it is one of allowed.
func ParseFormat(s string, allowed ...Format) (Format, error) {
	names := make([]string, len(allowed))
	for i, f := range allowed {
		if string(f) == s {
			return f, nil
		}
		names[i] = string(f)
	}
	return "", fmt.Errorf("unknown format %q (want %s)", s, strings.Join(names, ", "))
}

// number formats a statistic for text output: 6 significant digits, "-"
// for a value that does not exist (NaN).
func number(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return strconv.FormatFloat(v, 'g', 6, 64)
}

// optional returns a pointer to v, or nil when v is NaN, for JSON fields
// that are null when the value does not exist.
func optional(v float64) *float64 {
	if math.IsNaN(v) {
		return nil
	}
	return &v
}

// errWriter remembers the first write error, so that writers built on
// fmt.Fprintf (which drops errors) still report a full disk or a closed
// pipe.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

// checked runs write on w and returns its error or, failing that, the
// first error w returned.
func checked(w io.Writer, write func(io.Writer) error) error {
	ew := &errWriter{w: w}
	if err := write(ew); err != nil {
		return err
	}
	if ew.err != nil {
		return fmt.Errorf("writing the report: %w", ew.err)
	}
	return nil
}
