package judge

import "testing"

// TestLimitWords checks what a failing gradient, loss or output says its
// limit was made of: the steps before it only where there were agreeing
// ones and they differed (a reason once read "6.9× the 0 of the steps
// before" at a run's first step).
func TestLimitWords(t *testing.T) {
	for _, tc := range []struct {
		name     string
		prior    float64
		agreeing int
		want     string
	}{
		{"first step", 0, 0, "1.6·ε; no agreeing step before"},
		{"one exact step before", 0, 1, "1.6·ε; the step before agrees exactly"},
		{"exact steps before", 0, 3, "1.6·ε; the 3 steps before agree exactly"},
		{"steps before that differed", 2.1e-3, 3, "1.6·ε, or 6.9× the 0.0021 of the steps before"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := limitWords(1.6, 6.9, tc.prior, tc.agreeing); got != tc.want {
				t.Errorf("limitWords = %q, want %q", got, tc.want)
			}
		})
	}
}
