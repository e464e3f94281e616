package diagnose

import (
	"math"
	"testing"
)

func TestDistributions(t *testing.T) {
	const eps = 0x1p-23 // float32
	third := float64(float32(1.0 / 3))
	for _, c := range []struct {
		name string
		v    vec
		n    int
		want bool
	}{
		{"rows of a softmax", vec{0.25, 0.25, 0.5, 0.1, 0.2, 0.7}, 3, true},
		{"float32 thirds, off 1 by rounding", vec{third, third, third}, 3, true},
		{"a trailing incomplete row is not looked at", vec{0.5, 0.5, 7}, 2, true},
		{"a row summing to 1.01", vec{0.51, 0.5}, 2, false},
		{"logits", vec{-1.5, 2, 0.5}, 3, false},
		{"a value above 1 though the row sums to 1", vec{1.5, -0.5}, 2, false},
		{"NaN", vec{math.NaN(), 1}, 2, false},
		{"no complete row", vec{0.5}, 2, false},
	} {
		if got := distributions(c.v, c.n, eps); got != c.want {
			t.Errorf("%s: distributions(%v, %d) = %v, want %v", c.name, c.v, c.n, got, c.want)
		}
	}
}

// TestCenteredLogsScaleWithTemperature: softmax(z/T) for two temperatures
// gives centered log-probabilities in the ratio of their inverses, which
// is what outputScale tests; a row holding a 0 is left out of both.
func TestCenteredLogsScaleWithTemperature(t *testing.T) {
	softmax := func(z []float64, temp float64) vec {
		out, sum := make(vec, len(z)), 0.0
		for i, x := range z {
			out[i] = math.Exp(x / temp)
			sum += out[i]
		}
		for i := range out {
			out[i] /= sum
		}
		return out
	}
	z := [][]float64{{1, -2, 0.5, 3}, {0, 0.25, -1, 2}}
	var a, b vec
	for _, row := range z {
		a = append(a, softmax(row, 0.6)...) // eager, the temperature changed
		b = append(b, softmax(row, 1.0)...) // graph, the one captured
	}
	a, b = append(a, 0, 0.5, 0.25, 0.25), append(b, 0.25, 0.25, 0.25, 0.25)
	ca, cb := centeredLogs(a, b, 4)
	for i := range 8 {
		if math.Abs(cb[i]-0.6*ca[i]) > 1e-12 {
			t.Fatalf("value %d: graph %g, want 0.6 × eager %g", i, cb[i], ca[i])
		}
	}
	for i := 8; i < 12; i++ {
		if ca[i] != 0 || cb[i] != 0 {
			t.Errorf("value %d of the row holding a 0: %g, %g, want 0, 0", i, ca[i], cb[i])
		}
	}
	if ok, _, r := proportional(ca, cb, 5e-5); !ok || math.Abs(r-0.6) > 1e-9 {
		t.Errorf("proportional: %v, ratio %g, want a scale of 0.6", ok, r)
	}
}

// TestProbabilityForm: a sigmoid's probabilities at two temperatures are
// compared as log-odds, in the ratio of the temperatures' inverses; rows
// of distributions as centered log-probabilities; values outside [0, 1]
// are no probabilities.
func TestProbabilityForm(t *testing.T) {
	z := []float64{-3, -0.5, 0, 0.25, 2, 40}
	var a, b vec
	for _, x := range z {
		a = append(a, 1/(1+math.Exp(-x/0.6)))
		b = append(b, 1/(1+math.Exp(-x)))
	}
	la, lb, form := probabilityForm(a, b, len(z), 0x1p-23)
	if form != "log-odds (log(p/(1 − p)))" {
		t.Fatalf("sigmoid probabilities: form %q, want log-odds", form)
	}
	for i := range 5 {
		if math.Abs(lb[i]-0.6*la[i]) > 1e-9 {
			t.Errorf("value %d: graph %g, want 0.6 × eager %g", i, lb[i], la[i])
		}
	}
	if la[5] != 0 || lb[5] != 0 { // 1/(1+e^-66.7) rounds to 1: a log-odds of +∞
		t.Errorf("a probability of 1: %g, %g, want 0, 0", la[5], lb[5])
	}
	if _, _, form := probabilityForm(vec{0.5, 0.5, 0.25, 0.75}, vec{0.4, 0.6, 0.2, 0.8}, 2, 0x1p-23); form != "centered log-probabilities (log p less its row's mean)" {
		t.Errorf("rows of distributions: form %q", form)
	}
	if _, _, form := probabilityForm(vec{0.5, 1.5}, vec{0.5, 0.5}, 2, 0x1p-23); form != "" {
		t.Errorf("a value of 1.5: form %q, want none", form)
	}
}
