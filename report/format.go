package report

import (
	"fmt"
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
