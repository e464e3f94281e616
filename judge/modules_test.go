package judge

import (
	"testing"

	"github.com/graphdiff/graphdiff/compare"
	"github.com/graphdiff/graphdiff/loaders"
)

// TestFirstModule walks the taps as FirstModule's doc comment says: the
// first module in forward order whose output departs, with the tapped
// module before it as its input; a module not compared at the step passed
// over; the backward order where only gradients depart; every module
// agreeing; other steps and kinds ignored.
func TestFirstModule(t *testing.T) {
	taps := []loaders.TapModule{{Name: "embed", Type: "Embedding"}, {Name: "drop", Type: "Dropout"}, {Name: "fc", Type: "Linear"}, {Name: "head", Type: "Linear"}}
	const near Status = "near" // within the limit, not bit for bit
	pair := func(step int, kind loaders.Kind, module string, s Status) *TensorResult {
		dir := map[loaders.Kind]string{loaders.KindActivation: "activations/", loaders.KindActivationGrad: "activation_grads/", loaders.KindLoss: ""}[kind]
		m := &compare.Metrics{}
		if s != StatusMatch {
			m.MaxULP, m.MaxAbs.Value = 3, 1e-7
		}
		if s == near {
			s = StatusMatch
		}
		return &TensorResult{Pair: Pair{Name: dir + module, Step: step, Kind: kind, Metrics: m}, Decision: Decision{Status: s}}
	}
	const ok, bad, gone = StatusMatch, StatusMismatch, StatusMissing
	loss := pair(3, loaders.KindLoss, "loss", bad)
	cases := []struct {
		name    string
		tensors []*TensorResult
		module  string
		input   string
		back    bool
		agree   int
	}{
		{"dropout departs", []*TensorResult{loss, pair(3, loaders.KindActivation, "embed", ok), pair(3, loaders.KindActivation, "drop", bad),
			pair(3, loaders.KindActivation, "fc", bad), pair(2, loaders.KindActivation, "embed", bad)}, "drop", "embed", false, 0},
		{"the first module departs", []*TensorResult{loss, pair(3, loaders.KindActivation, "embed", bad), pair(3, loaders.KindActivation, "drop", bad)},
			"embed", "", false, 0},
		{"a module missing is passed over", []*TensorResult{loss, pair(3, loaders.KindActivation, "embed", ok), pair(3, loaders.KindActivation, "drop", gone),
			pair(3, loaders.KindActivation, "fc", bad)}, "fc", "embed", false, 0},
		{"only a gradient departs: backward order", []*TensorResult{loss, pair(3, loaders.KindActivation, "embed", ok), pair(3, loaders.KindActivation, "head", ok),
			pair(3, loaders.KindActivationGrad, "head", ok), pair(3, loaders.KindActivationGrad, "fc", bad), pair(3, loaders.KindActivationGrad, "embed", bad)},
			"fc", "head", true, 0},
		{"every module agrees", []*TensorResult{loss, pair(3, loaders.KindActivation, "embed", ok), pair(3, loaders.KindActivation, "fc", ok),
			pair(3, loaders.KindActivationGrad, "fc", ok)}, "", "", false, 2},
		{"none beyond its limit: the first that differs after one that agrees exactly", []*TensorResult{loss, pair(3, loaders.KindActivation, "embed", ok),
			pair(3, loaders.KindActivation, "drop", ok), pair(3, loaders.KindActivation, "fc", near), pair(3, loaders.KindActivation, "head", near)}, "fc", "drop", false, 0},
		{"no module compared at the step", []*TensorResult{loss, pair(2, loaders.KindActivation, "embed", bad)}, "", "", false, 0},
	}
	for _, c := range cases {
		d, a := FirstModule(taps, c.tensors, loss)
		switch {
		case c.module != "":
			if d == nil || d.Module.Name != c.module || d.Input != c.input || d.Backward != c.back || d.Step != 3 || a != nil ||
				d.BelowLimit != (d.Pair.Status == StatusMatch) {
				t.Errorf("%s: got %+v, %+v; want %s after %q (backward %v)", c.name, d, a, c.module, c.input, c.back)
			} else if d.Pair.Name != map[bool]string{false: "activations/", true: "activation_grads/"}[c.back]+c.module {
				t.Errorf("%s: departing pair %s", c.name, d.Pair.Name)
			}
		case c.agree > 0:
			if d != nil || a == nil || a.Modules != c.agree || a.Step != 3 {
				t.Errorf("%s: got %+v, %+v; want all %d agreeing", c.name, d, a, c.agree)
			}
		default:
			if d != nil || a != nil {
				t.Errorf("%s: got %+v, %+v; want neither", c.name, d, a)
			}
		}
	}
	if d, a := FirstModule(taps, cases[0].tensors, nil); d != nil || a != nil {
		t.Error("an answer without a first divergence")
	}
	if d, a := FirstModule(nil, cases[0].tensors, loss); d != nil || a != nil {
		t.Error("an answer without a forward order")
	}
}

func TestTapName(t *testing.T) {
	for in, want := range map[string]string{"activations/encoder.layers.0": "encoder.layers.0", "activation_grads/fc": "fc",
		"rank_0/activations/fc1": "fc1", "fc1": "fc1", "myactivations/fc": "myactivations/fc"} {
		if got := TapName(in); got != want {
			t.Errorf("TapName(%q) = %q, want %q", in, got, want)
		}
	}
}
