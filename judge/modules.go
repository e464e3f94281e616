package judge

import (
	"strings"

	"github.com/graphdiff/graphdiff/loaders"
)

// ModuleDeparture says where in the model the runs part at the first
// divergent step, from the activations the dump helper's taps kept: the
// first tapped module, in forward order, whose output departs while the
// output of the module before it (its input, as far as the order can
// tell) agrees. Where every tapped output agrees at that step but a
// gradient into one departs, it is the first module in backward order
// (the forward order reversed) whose gradient departs while the gradient
// into the module after it agrees.
type ModuleDeparture struct {
	// Step is the first divergent step.
	Step int
	// Module is the module that departs, and Index its place in forward
	// order (0 for the first tapped module).
	Module loaders.TapModule
	Index  int
	// Backward is true when the module's output agrees and the gradient
	// into it departs.
	Backward bool
	// Input is the tapped module whose output (in the backward pass: whose
	// gradient) agrees and feeds Module: the one before it in forward
	// order (after it in backward order); "" when Module is the first
	// (the last, backward), whose input is the model's.
	Input string
	// Pair is the departing module's pair.
	Pair *TensorResult
	// BelowLimit is true when no tapped output or gradient is beyond its
	// limit at the step, and Module is the first in forward order whose
	// output differs at all while the output before it (Input's; for the
	// first module, the model's input) is the same bit for bit: rounding
	// cannot start between two values that agree exactly unless the module
	// computed differently.
	BelowLimit bool
}

// ModulesAgree is FirstModule's answer when the taps at the first
// divergent step all agree: the runs part after the forward and backward
// passes the taps saw (the optimizer's step, or state outside them).
type ModulesAgree struct {
	Step    int
	Modules int // tapped modules compared at the step
}

// FirstModule returns where in the model the runs part at first's step
// (ModuleDeparture), from the pairs of tapped activations (kinds
// activation and activation_grad, named by their module) and the taps'
// forward order: the first output beyond its limit in forward order, else
// the first gradient beyond its limit in backward order, else the first
// output that differs at all after one that agrees bit for bit
// (BelowLimit); a ModulesAgree when every tapped module compared at that
// step agrees bit for bit; nil for both when there is no first divergence, no forward
// order, or no tapped module compared at the step. A module missing from
// the step is passed over: the one before it in order is still the
// input of the next.
func FirstModule(taps []loaders.TapModule, tensors []*TensorResult, first *TensorResult) (*ModuleDeparture, *ModulesAgree) {
	if first == nil || len(taps) == 0 {
		return nil, nil
	}
	step := first.Step
	out, grad := map[string]*TensorResult{}, map[string]*TensorResult{}
	for _, t := range tensors {
		if t.Step != step || !(t.Status == StatusMatch || t.Diverged()) { // missing, extra, unreadable: not compared
			continue
		}
		switch t.Kind {
		case loaders.KindActivation:
			out[TapName(t.Name)] = t
		case loaders.KindActivationGrad:
			grad[TapName(t.Name)] = t
		}
	}
	if len(out) == 0 && len(grad) == 0 {
		return nil, nil
	}
	// walk returns the first module, in forward order or backward, whose
	// pair departs, after the ones before it whose pairs do not
	walk := func(pairs map[string]*TensorResult, backward bool, departs func(*TensorResult) bool) *ModuleDeparture {
		input := ""
		for k := range taps {
			i := k
			if backward {
				i = len(taps) - 1 - k
			}
			t := pairs[taps[i].Name]
			if t == nil {
				continue
			}
			if departs(t) {
				return &ModuleDeparture{Step: step, Module: taps[i], Index: i, Backward: backward, Input: input, Pair: t}
			}
			input = taps[i].Name
		}
		return nil
	}
	diverged := (*TensorResult).Diverged
	if d := walk(out, false, diverged); d != nil {
		return d, nil
	}
	if d := walk(grad, true, diverged); d != nil {
		return d, nil
	}
	// every output within its limit: the first that differs at all
	if d := walk(out, false, func(t *TensorResult) bool { return t.Metrics != nil && !t.Metrics.Identical() }); d != nil {
		d.BelowLimit = true
		return d, nil
	}
	n := 0
	for _, m := range taps {
		if out[m.Name] != nil || grad[m.Name] != nil {
			n++
		}
	}
	if n == 0 {
		return nil, nil
	}
	return nil, &ModulesAgree{Step: step, Modules: n}
}

// TapName returns the module a tapped activation's pair name is of: the
// name after its activations/ or activation_grads/ component
// ("activations/encoder.layers.0" → "encoder.layers.0"; with shard
// directories in front, "rank_0/activations/fc1" → "fc1").
func TapName(name string) string {
	for _, word := range []string{"activations/", "activation_grads/", "activation/", "activation_grad/"} {
		if i := strings.Index(strings.ToLower(name), word); i >= 0 && (i == 0 || name[i-1] == '/') {
			return name[i+len(word):]
		}
	}
	return name
}
