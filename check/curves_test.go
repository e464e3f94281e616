package check

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/graphdiff/graphdiff/curve"
)

// TestCurvesInTheComparisonsPrecision: `graphdiff curve` on two run
// directories analyses their losses as the comparison of the same runs
// does, in the same rounding unit: bfloat16 and autocast models whose
// losses are float32, a float32 model, and losses alone.
func TestCurvesInTheComparisonsPrecision(t *testing.T) {
	t.Parallel()
	for _, dir := range []string{
		fixture("corpus", "mlp", "mlp_bf16_adamw_ok"),
		fixture("corpus", "cnn_bn", "cnn_bn_autocast_adam_cosine_ok"),
		fixture("corpus", "mlp", "mlp_captured_lr"),
		fixture("curves", "fp32_long"),
	} {
		a, b := filepath.Join(dir, "eager"), filepath.Join(dir, "graph")
		c, err := Runs(a, b, Options{})
		if err != nil || c.Curve == nil {
			t.Fatalf("%s: %v, curve %v", dir, err, c.Curve)
		}
		alone, err := Curves(a, b, CurvesOptions{Analysis: curve.DefaultOptions()})
		if err != nil {
			t.Fatal(err)
		}
		describe := func(r *curve.Result) string {
			step := int64(-1)
			if r.FirstDivergentStep != nil {
				step = *r.FirstDivergentStep
			}
			return fmt.Sprintf("unit %g, compute %s, %s %s at step %d: %q", r.Options.RTol, r.Options.ComputeDType, r.Verdict, r.Pattern, step, r.Evidence)
		}
		if got, want := describe(alone), describe(c.Curve); got != want {
			t.Errorf("%s: graphdiff curve says\n%s\ngraphdiff compare says\n%s", dir, got, want)
		}
	}
}
