package judge

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/graphdiff/graphdiff/compare"
	"github.com/graphdiff/graphdiff/loaders"
	"github.com/graphdiff/graphdiff/tolerances"
)

// TestWilsonLower checks the interval the doc quotes.
func TestWilsonLower(t *testing.T) {
	for _, tc := range []struct {
		k, n int64
		want float64
	}{{2, 4, 0.18}, {4, 4, 0.60}, {300, 1000, 0.28}, {0, 10, 0}, {0, 0, 0}} {
		if got := wilsonLower(tc.k, tc.n); math.Abs(got-tc.want) > 0.005 {
			t.Errorf("wilson(%d, %d) = %.3f, want %.2f", tc.k, tc.n, got, tc.want)
		}
	}
}

func f32() *loaders.Meta { return &loaders.Meta{DType: loaders.Float32, Shape: []int{1000}} }

// settings are float32's defaults with the limits named.
func settings(maxRelL2, maxFraction float64) tolerances.Settings {
	return tolerances.Settings{DType: loaders.Float32, Tolerance: tolerances.For(loaders.Float32),
		MaxRelL2: maxRelL2, MaxMismatchFraction: maxFraction}
}

// TestTensor decides pairs on each side of every limit, and records the
// rule nearest to failing each, with its measure over its limit.
func TestTensor(t *testing.T) {
	bf16 := &loaders.Meta{DType: loaders.Float32, Original: loaders.BFloat16, Shape: []int{1000}}
	for _, tc := range []struct {
		name   string
		t      Pair
		status Status
		reason string // a substring of the first reason, "" for none
		rule   Rule
		ratio  float64
	}{
		{"inside", Pair{A: f32(), B: f32(), Settings: settings(1e-3, 0.01),
			Metrics: &compare.Metrics{Count: 1000, RelL2: 9e-4}}, StatusMatch, "", RuleRelL2, 0.9},
		{"rel-L2 just over", Pair{A: f32(), B: f32(), Settings: settings(1e-3, 0.01),
			Metrics: &compare.Metrics{Count: 1000, RelL2: math.Nextafter(1e-3, 1)}}, StatusMismatch, "relative L2 error", RuleRelL2, 1},
		{"norms overflow", Pair{A: f32(), B: f32(), Settings: settings(1e-3, 0.01),
			Metrics: &compare.Metrics{Count: 1000, RelL2: math.NaN()}}, StatusMismatch, "undefined", RuleRelL2, math.Inf(1)},
		{"NaN moved", Pair{A: f32(), B: f32(), Settings: settings(1e-3, 0.01),
			Metrics: &compare.Metrics{Count: 1000, SpecialMismatches: 1, NaNA: 1}}, StatusMismatch, "NaN/Inf at different positions", RuleSpecials, math.Inf(1)},
		{"many beyond, rel-L2 near the limit", Pair{A: f32(), B: f32(), Settings: settings(1e-3, 0.01),
			Metrics: &compare.Metrics{Count: 1000, Mismatched: 300, RelL2: 5e-4}}, StatusMismatch, "300 of 1000 elements", RuleMismatchFraction, wilsonLower(300, 1000) / 0.01},
		{"many beyond, rel-L2 far under the limit", Pair{A: f32(), B: f32(), Settings: settings(1e-3, 0.01),
			Metrics: &compare.Metrics{Count: 1000, Mismatched: 300, RelL2: 3e-4}}, StatusMatch, "", RuleRelL2, 0.3},
		{"baseline raises the limit", Pair{A: f32(), B: f32(), Settings: settings(1e-3, 0.01),
			Metrics: &compare.Metrics{Count: 1000, RelL2: 2e-3}, Noise: &compare.Metrics{Count: 1000, RelL2: 1e-3}}, StatusMatch, "", RuleRelL2, 2.0 / 3},
		{"effective dtypes differ: judged by the numbers", Pair{A: f32(), B: bf16, Settings: settings(1e-3, 0.01),
			Metrics: &compare.Metrics{Count: 1000}}, StatusMatch, "", RuleRelL2, 0},
		{"effective dtypes differ, and a dtype change fails", Pair{A: f32(), B: bf16, Settings: failOnDTypeChange(settings(1e-3, 0.01)),
			Metrics: &compare.Metrics{Count: 1000}}, StatusDTypeMismatch, "dtype float32 vs bfloat16", RuleRelL2, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.t
			d := Tensor(&tc.t)
			if d.Status != tc.status {
				t.Errorf("status %s, want %s (reasons %q)", d.Status, tc.status, d.Reasons)
			}
			if tc.reason == "" && len(d.Reasons) > 0 || tc.reason != "" && (len(d.Reasons) == 0 || !strings.Contains(d.Reasons[0], tc.reason)) {
				t.Errorf("reasons %q, want one with %q", d.Reasons, tc.reason)
			}
			if fmt.Sprint(tc.t) != fmt.Sprint(before) {
				t.Error("Tensor changed its input")
			}
			if r := d.Ratio(); d.Rule != tc.rule || !(r == tc.ratio || math.Abs(r-tc.ratio) <= 1e-12*tc.ratio) {
				t.Errorf("%s %g of %g (%g of it), want %s at %g of its limit", d.Rule, d.Measure, d.Limit, r, tc.rule, tc.ratio)
			}
		})
	}
}

// TestRatio: a measure over its limit, a rule's limit of 0, a measure the
// norms left undefined, and a pair no rule measured.
func TestRatio(t *testing.T) {
	for _, tc := range []struct {
		name string
		d    Decision
		want float64
	}{
		{"under", Decision{Rule: RuleGradRatio, Measure: 0.5, Limit: 2}, 0.25},
		{"over", Decision{Rule: RuleRelL2, Measure: 3, Limit: 2}, 1.5},
		{"nothing against nothing", Decision{Rule: RuleSpecials}, 0},
		{"something against nothing", Decision{Rule: RuleSpecials, Measure: 1}, math.Inf(1)},
		{"undefined measure", Decision{Rule: RuleRelL2, Measure: math.NaN(), Limit: 1}, math.Inf(1)},
		{"no rule", Decision{Status: StatusMissing}, math.NaN()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.d.Ratio(); got != tc.want && !(math.IsNaN(got) && math.IsNaN(tc.want)) {
				t.Errorf("%g, want %g", got, tc.want)
			}
		})
	}
}

// TestRun checks the verdict's precedence and the first divergence's
// order: earliest step, step-less pairs last, pair order within a step.
func TestRun(t *testing.T) {
	pair := func(step int, name string, s Status) *TensorResult {
		return &TensorResult{Pair: Pair{Name: name, Step: step}, Decision: Decision{Status: s}}
	}
	for _, tc := range []struct {
		name    string
		ts      []*TensorResult
		errs    []error
		verdict Verdict
		first   string
	}{
		{"all match", []*TensorResult{pair(0, "loss", StatusMatch)}, nil, Pass, ""},
		{"no pairs", nil, nil, Pass, ""},
		{"a tensor one run lacks is where they depart", []*TensorResult{pair(1, "b", StatusMismatch), pair(0, "a", StatusMissing)}, nil, Fail, "a"},
		{"unreadable fails but does not diverge", []*TensorResult{pair(0, "a", StatusError)}, nil, Error, ""},
		{"earliest step first", []*TensorResult{pair(loaders.NoStep, "curve", StatusMismatch),
			pair(2, "b", StatusMismatch), pair(1, "c", StatusShapeMismatch), pair(1, "d", StatusMismatch)}, nil, Fail, "c"},
		{"unreadable pair is an error", []*TensorResult{pair(0, "a", StatusMismatch), pair(1, "b", StatusError)}, nil, Error, "a"},
		{"discovery error is an error", []*TensorResult{pair(0, "a", StatusMatch)}, []error{errors.New("x")}, Error, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, first := Run(tc.ts, tc.errs)
			name := ""
			if first != nil {
				name = first.Name
			}
			if v != tc.verdict || name != tc.first {
				t.Errorf("verdict %s, first %q; want %s, %q", v, name, tc.verdict, tc.first)
			}
		})
	}
}

func failOnDTypeChange(s tolerances.Settings) tolerances.Settings {
	s.FailOnDTypeChange = true
	return s
}
