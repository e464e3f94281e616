package diagnose

import (
	"strings"
	"testing"
)

func TestPosterior(t *testing.T) {
	ids := func(cs []Cause) string {
		var b strings.Builder
		for _, c := range cs {
			b.WriteString(c.ID + " ")
		}
		return b.String()
	}
	cases := []struct {
		name string
		in   []Cause
		want map[string]float64 // absent: dropped
	}{
		{"alone keeps its strength", []Cause{{ID: StaleInput, Confidence: 0.9}}, map[string]float64{StaleInput: 0.9}},
		// 0.9·0.5 and 0.5·0.1 over 0.45 + 0.05 + 0.1·0.5
		{"a weaker cause is explained away", []Cause{{ID: CapturedScalar, Confidence: 0.9}, {ID: StaleInput, Confidence: 0.5}},
			map[string]float64{CapturedScalar: 0.82}},
		// 0.25 each over 0.25 + 0.25 + 0.25
		{"equal strengths share", []Cause{{ID: CapturedBranch, Confidence: 0.5}, {ID: CapturedScalar, Confidence: 0.5}},
			map[string]float64{CapturedBranch: 0.33, CapturedScalar: 0.33}},
		{"at one confidence the better fit first", []Cause{{ID: InputLag, Confidence: 0.5, Fit: 0.4, FitSteps: 3}, {ID: CapturedScalar, Confidence: 0.5, Fit: 0.9, FitSteps: 1}},
			map[string]float64{CapturedScalar: 0.33, InputLag: 0.33}},
		{"missing steps explain nothing away", []Cause{{ID: MissingSteps, Confidence: 0.7}, {ID: UninitializedMemory, Confidence: 0.7}},
			map[string]float64{MissingSteps: 0.7, UninitializedMemory: 0.7}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := append([]Cause(nil), c.in...)
			out := posterior(in)
			if len(out) != len(c.want) {
				t.Fatalf("named %s, want %d causes", ids(out), len(c.want))
			}
			for i, got := range out {
				if w, ok := c.want[got.ID]; !ok || got.Confidence != w {
					t.Errorf("%s: confidence %.2f, want %.2f (named: %s)", got.ID, got.Confidence, w, ids(out))
				}
				if i > 0 && ranksAbove(got, out[i-1]) {
					t.Errorf("%s ranked below a weaker cause", got.ID)
				}
			}
			if c.name == "at one confidence the better fit first" && out[0].ID != CapturedScalar {
				t.Errorf("named %s, want the fitted cause first", ids(out))
			}
			for i := range c.in {
				if in[i].Confidence != c.in[i].Confidence || len(in[i].Evidence) != len(c.in[i].Evidence) {
					t.Errorf("the caller's causes were changed")
				}
			}
		})
	}
}
