package loaders

import (
	"fmt"
	"math"

	"github.com/nlpodyssey/gopickle/types"
)

// Moment says how an optimizer's state tensor carries the gradient from
// step to step, as the saved optimizer's own hyperparameters state it:
//
//	m_k = Decay·m_{k−1} + Gain·g_k
//
// so that the gradient the optimizer saw at step k is
// g_k = (m_k − Decay·m_{k−1}) / Gain, from the state of two consecutive
// optimizer steps. The rules recognised (torch.optim, PyTorch 2.x):
//
//   - exp_avg of an optimizer whose param group has betas (Adam, AdamW,
//     NAdam, RAdam, Adamax): exp_avg.lerp_(grad, 1 − β1), Decay β1, Gain
//     1 − β1;
//   - momentum_buffer of SGD (a param group with momentum and
//     dampening): buf.mul_(μ).add_(grad, alpha=1 − dampening), Decay μ,
//     Gain 1 − dampening (μ > 0; the first step's buffer is the gradient
//     itself, which two consecutive steps after it never need).
//
// The gradient so derived includes what the optimizer added to it
// before the moment (weight decay as an L2 term, maximize's sign).
// RMSprop's momentum_buffer (a step, not a gradient) and any rule not
// listed get the zero Moment: unknown. The zero Moment is also every
// tensor of a format that holds no hyperparameters (.npy, .npz,
// safetensors).
type Moment struct {
	Decay, Gain float64
}

// Known reports whether m describes a rule.
func (m Moment) Known() bool { return m.Gain > 0 }

// String is the rule as a formula, "m_k = 0.9·m_{k−1} + 0.1·g_k", its
// numbers to six significant digits (1 − 0.9 is 0.09999999999999998 in
// float64).
func (m Moment) String() string {
	if !m.Known() {
		return "unknown"
	}
	return fmt.Sprintf("m_k = %.6g·m_{k−1} + %.6g·g_k", m.Decay, m.Gain)
}

// ptMoments finds the optimizer state dicts of a saved object ({"state":
// {index: {...}}, "param_groups": [{"params": [index, ...], ...}]}, as
// torch.optim.Optimizer.state_dict returns it, at any depth) and returns
// the Moment of each state tensor whose group's rule is known, by the
// name ptWalk gives the tensor. It visits at most budget containers and
// nests no deeper than maxPTDepth, as ptWalk does.
func ptMoments(v any) map[string]Moment {
	out := map[string]Moment{}
	budget := maxPTEntries
	var walk func(v any, name string, depth int)
	walk = func(v any, name string, depth int) {
		if depth > maxPTDepth || budget <= 0 {
			return
		}
		budget--
		join := func(key any) string {
			if name == "" {
				return fmt.Sprint(key)
			}
			return name + "/" + fmt.Sprint(key)
		}
		switch x := v.(type) {
		case *types.Dict:
			optimizerMoments(x, name, out)
			for _, e := range *x {
				walk(e.Value, join(e.Key), depth+1)
			}
		case *types.OrderedDict:
			for el := x.List.Front(); el != nil; el = el.Next() {
				if e, ok := el.Value.(*types.OrderedDictEntry); ok {
					walk(e.Value, join(e.Key), depth+1)
				}
			}
		case *types.List:
			for i, e := range *x {
				walk(e, join(i), depth+1)
			}
		}
	}
	walk(v, "", 0)
	return out
}

// optimizerMoments adds to out the Moments of the state tensors of d when
// d is an optimizer's state dict named name.
func optimizerMoments(d *types.Dict, name string, out map[string]Moment) {
	state, ok1 := d.Get("state")
	groups, ok2 := d.Get("param_groups")
	gl, ok3 := groups.(*types.List)
	if _, isDict := state.(*types.Dict); !ok1 || !ok2 || !ok3 || !isDict {
		return
	}
	prefix := "state/"
	if name != "" {
		prefix = name + "/state/"
	}
	for _, g := range *gl {
		group, ok := g.(*types.Dict)
		if !ok {
			continue
		}
		member, m := groupMoment(group)
		if !m.Known() {
			continue
		}
		params, ok := group.Get("params")
		pl, isList := params.(*types.List)
		if !ok || !isList {
			continue
		}
		for _, p := range *pl {
			if i, ok := p.(int); ok {
				out[fmt.Sprintf("%s%d/%s", prefix, i, member)] = m
			}
		}
	}
}

// groupMoment returns the state member that carries the gradient in a
// param group's rule, and its Moment (zero where the rule is not one of
// those Moment lists).
func groupMoment(group *types.Dict) (string, Moment) {
	if betas, ok := group.Get("betas"); ok {
		if t, ok := betas.(*types.Tuple); ok && t.Len() == 2 {
			if b1, ok := pyFloat(t.Get(0)); ok && b1 >= 0 && b1 < 1 {
				return "exp_avg", Moment{Decay: b1, Gain: 1 - b1}
			}
		}
		return "", Moment{}
	}
	mu, ok1 := groupFloat(group, "momentum")
	damp, ok2 := groupFloat(group, "dampening")
	if ok1 && ok2 && mu > 0 && damp >= 0 && damp < 1 {
		return "momentum_buffer", Moment{Decay: mu, Gain: 1 - damp}
	}
	return "", Moment{}
}

// groupFloat returns the number a param group holds under key.
func groupFloat(group *types.Dict, key string) (float64, bool) {
	v, ok := group.Get(key)
	if !ok {
		return 0, false
	}
	return pyFloat(v)
}

// pyFloat returns an unpickled Python int or float as a float64; false
// for anything else (a tensor, None) and for NaN and ±Inf.
func pyFloat(v any) (float64, bool) {
	var f float64
	switch x := v.(type) {
	case float64:
		f = x
	case int:
		f = float64(x)
	default:
		return 0, false
	}
	return f, !math.IsNaN(f) && !math.IsInf(f, 0)
}
