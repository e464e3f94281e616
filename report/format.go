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
