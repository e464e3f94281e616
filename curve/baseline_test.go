package curve

import (
	"path/filepath"
	"testing"

	"github.com/graphdiff/graphdiff/judge"
	"github.com/graphdiff/graphdiff/loaders"
)

// userloopsCurve reads one of testdata/curves/userloops/FAMILY/NAME's
// loss.csv curves: which is eager, graph or baseline.
func userloopsCurve(t *testing.T, family, name, which string) *loaders.Curve {
	t.Helper()
	c, err := loaders.ReadCurve(filepath.Join("..", "testdata", "curves", "userloops", family, name, which, "loss.csv"), loaders.CurveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestBaselineCatchesASlowBreak: a slow cosine on a Python float lr that
// the graph froze at capture (fp32, dumps after the warm-up) grows as
// smoothly as drift; without a baseline it is found only when its level
// has moved by 8 standard errors of the batches' noise (a shift from step
// 1514); the eager run again from weights one ULP apart never drifts past
// 2.3e-4, and the graph's curve parts from that at step 1101. A baseline
// that repeats the reference measures nothing and changes nothing. A
// correct autocast run, chaotic (its curves drift to 3.8× apart at one
// step), stays within its baseline's limit.
func TestBaselineCatchesASlowBreak(t *testing.T) {
	a, b := userloopsCurve(t, "vit", "vit_curve_cosine_frozen", "eager"), userloopsCurve(t, "vit", "vit_curve_cosine_frozen", "graph")
	base := userloopsCurve(t, "vit", "vit_curve_cosine_frozen", "baseline")
	if r := Analyze(a, b, DefaultOptions()); r.Pattern != PatternShift || *r.FirstDivergentStep != 1514 {
		t.Errorf("without a baseline: %s %s at %v (the first dumped step starts no break)", r.Verdict, r.Pattern, r.FirstDivergentStep)
	}
	r := AnalyzeBaseline(a, b, base, DefaultOptions())
	if r.Verdict != judge.Fail || r.Pattern != PatternBeyondBaseline || *r.FirstDivergentStep != 1101 ||
		r.Baseline.MaxRel > 2.3e-4 || r.Baseline.Identical {
		t.Errorf("with the baseline: %s %s at %v, baseline %+v", r.Verdict, r.Pattern, r.FirstDivergentStep, r.Baseline)
	}
	if r := AnalyzeBaseline(a, b, a, DefaultOptions()); r.Pattern != PatternShift || *r.FirstDivergentStep != 1514 || !r.Baseline.Identical {
		t.Errorf("the reference as its own baseline: %s, baseline %+v", r.Verdict, r.Baseline)
	}

	o := DefaultOptions()
	o.ComputeDType = loaders.BFloat16
	a, b = userloopsCurve(t, "vit", "vit_curve_autocast_cosine_ok", "eager"), userloopsCurve(t, "vit", "vit_curve_autocast_cosine_ok", "graph")
	base = userloopsCurve(t, "vit", "vit_curve_autocast_cosine_ok", "baseline")
	if r := AnalyzeBaseline(a, b, base, o); r.Verdict != judge.Pass || r.MaxRel < 0.5 || r.Baseline.Limit < r.MaxRel {
		t.Errorf("correct autocast run: %s %s at %v, max rel %g, baseline %+v", r.Verdict, r.Pattern, r.FirstDivergentStep, r.MaxRel, r.Baseline)
	}
}
