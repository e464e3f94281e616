package check

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/graphdiff/graphdiff/judge"
	"github.com/graphdiff/graphdiff/loaders"
)

// labelledRun is the part of a labelled run's label.json that says how
// graphdiff compares it (../shared/score/README.md).
type labelledRun struct {
	Kind         string   `json:"kind"`
	ComputeDType string   `json:"compute_dtype"`
	Args         []string `json:"args"`
}

// labelledOptions returns the options a labelled run in dir is compared
// with: its compute dtype and the flags its label gives.
func labelledOptions(t *testing.T, dir string, l labelledRun) Options {
	t.Helper()
	var opts Options
	dtype := l.ComputeDType
	for i := 0; i < len(l.Args); i += 2 {
		if i+1 == len(l.Args) {
			t.Fatalf("%s: args %q: a flag without its value", dir, l.Args)
		}
		switch l.Args[i] {
		case "--compute-dtype":
			dtype = l.Args[i+1]
		case "--baseline":
			opts.Baseline = filepath.Join(dir, l.Args[i+1])
		default:
			t.Fatalf("%s: args %q: the test does not know %s", dir, l.Args, l.Args[i])
		}
	}
	if dtype != "" {
		d, err := loaders.ParseDType(dtype)
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		opts.Resolver.Overrides.ComputeDType = d
	}
	return opts
}

// TestJudgedRatioAgreesWithStatus compares every labelled run of
// testdata/corpus, testdata/scenarios and testdata/userloops as the score
// does and checks, for every compared pair, the number the reports show as
// its error over its limit (Decision.Ratio): below 1 for every pair that
// passed, whichever rule passed it (a parameter by the step's update ratio,
// a gradient by the gradient RMS ratio, a parameter without an update by
// the step's gradients), and 1 or more for every pair that failed by its
// numbers. It checks too that the runs hold passing pairs whose relative
// L2 error is beyond their dtype's max_rel_l2, the pairs that number used
// to show at or beyond their limit, and pairs of each step rule.
func TestJudgedRatioAgreesWithStatus(t *testing.T) {
	t.Parallel()
	var dirs []string
	var labels []labelledRun
	for _, set := range []string{"corpus", "scenarios", "userloops"} {
		err := filepath.WalkDir(fixture(set), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.Name() != "label.json" {
				return err
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			var l labelledRun
			if err := json.Unmarshal(data, &l); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			if l.Kind == "" || l.Kind == "compare" {
				dirs, labels = append(dirs, filepath.Dir(path)), append(labels, l)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(dirs) < 200 {
		t.Fatalf("%d labelled runs, want the corpus's, the scenarios' and the user loops'", len(dirs))
	}
	passedByRule := map[judge.Rule]int{}
	failed, beyondDefault := 0, 0
	for k, dir := range dirs {
		c, err := Runs(filepath.Join(dir, "eager"), filepath.Join(dir, "graph"), labelledOptions(t, dir, labels[k]))
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		for _, p := range c.Tensors {
			if p.Metrics == nil {
				continue
			}
			r := p.Ratio()
			switch p.Status {
			case judge.StatusMatch:
				if !(r < 1) {
					t.Errorf("%s: step %d, %s passes with %s %.4g of its limit %.4g (%.4g of it)", dir, p.Step, p.Name, p.Rule, p.Measure, p.Limit, r)
				}
				passedByRule[p.Rule]++
				if p.Metrics.RelL2 > p.Settings.MaxRelL2 {
					beyondDefault++
				}
			case judge.StatusMismatch:
				failed++
				if !(r >= 1) {
					t.Errorf("%s: step %d, %s fails (%q) with %s %.4g of its limit %.4g (%.4g of it)", dir, p.Step, p.Name, p.Reasons, p.Rule, p.Measure, p.Limit, r)
				}
			}
		}
	}
	for _, rule := range []judge.Rule{judge.RuleRelL2, judge.RuleGradRatio, judge.RuleUpdateRatio, judge.RuleStepGradients, judge.RuleStepMoments, judge.RuleOptimizerState, judge.RuleTokenGap} {
		if passedByRule[rule] == 0 {
			t.Errorf("no pair passed by the %s rule", rule)
		}
	}
	if failed == 0 || beyondDefault == 0 {
		t.Errorf("%d failing pairs, %d passing beyond their dtype's max_rel_l2: want some of each", failed, beyondDefault)
	}
	t.Logf("%d runs: %d pairs failed; passed by rule %v, %d of them beyond their dtype's max_rel_l2", len(dirs), failed, passedByRule, beyondDefault)
}
