package report

import (
	"math"
	"testing"

	"github.com/graphdiff/graphdiff/compare"
	"github.com/graphdiff/graphdiff/judge"
)

// TestErrorRatio: the ratio the reports show is the decision's, a failure
// reads as at its limit at least, and a pair with nothing to compare as
// beyond it; a passing pair's never prints as its limit.
func TestErrorRatio(t *testing.T) {
	for _, tc := range []struct {
		name string
		t    judge.TensorResult
		want float64
		text string
	}{
		{"passing by the update ratio", judge.TensorResult{Pair: judge.Pair{Metrics: someMetrics()},
			Decision: judge.Decision{Status: judge.StatusMatch, MaxRelL2: 3e-4, Rule: judge.RuleUpdateRatio, Measure: 0.0369, Limit: 0.134}}, 0.0369 / 0.134, "0.275"},
		{"just under its limit", judge.TensorResult{Pair: judge.Pair{Metrics: someMetrics()},
			Decision: judge.Decision{Status: judge.StatusMatch, Rule: judge.RuleRelL2, Measure: 0.9996, Limit: 1}}, 0.9996, "0.999"},
		{"failing by a gradient ratio", judge.TensorResult{Pair: judge.Pair{Metrics: someMetrics()},
			Decision: judge.Decision{Status: judge.StatusMismatch, Rule: judge.RuleGradRatio, Measure: 0.0128, Limit: 0.0107}}, 0.0128 / 0.0107, "1.2"},
		{"a dtype change its numbers pass", judge.TensorResult{Pair: judge.Pair{Metrics: someMetrics()},
			Decision: judge.Decision{Status: judge.StatusDTypeMismatch, Rule: judge.RuleRelL2, Measure: 1e-5, Limit: 3e-4}}, 1, "1"},
		{"missing", judge.TensorResult{Decision: judge.Decision{Status: judge.StatusMissing}}, math.Inf(1), "+Inf"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := errorRatio(&tc.t)
			if math.Abs(got-tc.want) > 1e-12*tc.want && got != tc.want {
				t.Errorf("%g, want %g", got, tc.want)
			}
			if s := ratioText(got); s != tc.text {
				t.Errorf("shown as %q, want %q", s, tc.text)
			}
		})
	}
}

// someMetrics are the numbers of a compared pair whose relative L2 error
// is far beyond float32's default max_rel_l2.
func someMetrics() *compare.Metrics { return &compare.Metrics{Count: 8, RelL2: 0.02} }
