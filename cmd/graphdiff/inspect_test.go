package main

import (
	"encoding/json"
	"fmt"
	"testing"
)

// TestInspectShowsMoments: `inspect --format json` on a file of optimizer
// states says what each state tensor is and, for a moment, the rule and
// the parameter it carries the gradient of, as the comparison reads them.
func TestInspectShowsMoments(t *testing.T) {
	t.Parallel()
	code, stdout, stderr := run("inspect", "--format", "json", "../../testdata/pt_optim/optimizers.pt")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct {
		Tensors []struct {
			Name   string
			Moment *struct {
				State       string
				Decay, Gain float64
				Param       string
			}
		}
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, tn := range doc.Tensors {
		if m := tn.Moment; m != nil {
			got[tn.Name] = fmt.Sprintf("%s %g %.2g %s", m.State, m.Decay, m.Gain, m.Param)
		}
	}
	for name, want := range map[string]string{
		"optimizers/adam/state/4/exp_avg":            "exp_avg 0.95 0.05 model/3.weight",
		"optimizers/sgd/state/0/momentum_buffer":     "momentum_buffer 0.9 0.5 model/0.weight",
		"optimizers/adam/state/3/exp_avg_sq":         "exp_avg_sq 0 0 ",
		"optimizers/rmsprop/state/0/momentum_buffer": "momentum_buffer 0 0 ",
	} {
		if got[name] != want {
			t.Errorf("%s: moment %q, want %q", name, got[name], want)
		}
	}
	if _, ok := got["model/0.weight"]; ok {
		t.Error("a parameter has a moment")
	}
}
