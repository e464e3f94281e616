package report

import (
	"fmt"
	"math"
	"strconv"

	"github.com/graphdiff/graphdiff/judge"
)

// errorRatio is a pair's error over its limit as the HTML, Markdown and
// JUnit reports show it: the measure its verdict compared over the limit
// it compared it with (judge.Decision.Ratio), so that 1 is the limit
// whatever the rule (a gradient's RMS ratio, a parameter's update ratio, a
// loss's relative L2 error); a failure that is not about numbers
// (missing, extra, shape, unreadable, a dtype change) reads as at the
// limit at least, one with no numbers as far beyond it. NaN for a passing
// pair no rule measured.
func errorRatio(t *judge.TensorResult) float64 {
	r := t.Ratio()
	switch {
	case !t.Failed():
		return r
	case t.Metrics == nil || math.IsNaN(r):
		return math.Inf(1)
	}
	return math.Max(r, 1)
}

// ratioText writes an error ratio for people: three figures, and never one
// that reads as the limit for a pair under it (0.9996 is "0.999", not
// "1").
func ratioText(r float64) string {
	s := sci(r)
	if r < 1 {
		if v, err := strconv.ParseFloat(s, 64); err == nil && v >= 1 {
			return "0.999"
		}
	}
	return s
}

// judgedText says what decided pair t: its rule, the measure the rule
// compared and the limit ("gradient RMS ratio 0.0368 against 0.0107"); "-"
// for a pair no rule measured.
func judgedText(t *judge.TensorResult) string {
	if t.Rule == "" {
		return "-"
	}
	return fmt.Sprintf("%s %s against %s", t.Rule, sci(t.Measure), sci(t.Limit))
}

// byRatio orders pairs for people as their verdicts see them: failing
// before passing, and within each the largest error over its limit
// (errorRatio) first, pairs without one last; ties keep their order.
func byRatio(ts []*judge.TensorResult) []*judge.TensorResult {
	out := append([]*judge.TensorResult(nil), ts...)
	key := func(t *judge.TensorResult) float64 {
		if r := errorRatio(t); !math.IsNaN(r) {
			return r
		}
		return math.Inf(-1)
	}
	return failingFirst(out, key)
}

// numKey writes v for a data attribute the HTML page sorts by: "" for NaN
// (no number), "Infinity" and "-Infinity" for ±Inf (as parseFloat reads
// them), else the shortest decimal that reads back as v.
func numKey(v float64) string {
	switch {
	case math.IsNaN(v):
		return ""
	case math.IsInf(v, 1):
		return "Infinity"
	case math.IsInf(v, -1):
		return "-Infinity"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
