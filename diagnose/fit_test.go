package diagnose

import (
	"math"
	"testing"
)

func TestFitOf(t *testing.T) {
	a := vec{1, 2, 3, 4}
	b := vec{2, 4, 6, 8} // b = 2a
	for _, c := range []struct {
		name string
		p    vec
		want float64
	}{
		{"the prediction is the graph", vec{2, 4, 6, 8}, 1},
		{"the null, eager itself", a, 0},
		{"halfway", vec{1.5, 3, 4.5, 6}, 0.5},
		{"farther than eager", vec{0, 0, 0, 0}, -1}, // ‖b‖ = 2‖b − a‖
	} {
		if got := fitOf(a, b, c.p); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: fit %g, want %g", c.name, got, c.want)
		}
	}
	if got := fitOf(a, a, b); !math.IsNaN(got) {
		t.Errorf("nothing to explain: fit %g, want NaN", got)
	}
	if got := fitOf(a, b, vec{1}); !math.IsNaN(got) {
		t.Errorf("a prediction of another length: fit %g, want NaN", got)
	}
	// the best multiple of a removes everything of an exact scale
	if got := fitOf(a, b, scaled(a, b)); math.Abs(got-1) > 1e-12 {
		t.Errorf("scaled: fit %g, want 1", got)
	}
}
