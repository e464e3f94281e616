package loaders

import (
	"fmt"
	"maps"
	"math"
	"slices"

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
	// State is the member of the optimizer's per-parameter state the
	// tensor is ("exp_avg", "exp_avg_sq", "momentum_buffer",
	// "square_avg", ...; not the step counter), whatever the rule: set
	// for every tensor of an optimizer's state, "" for any other.
	State string
	// Group and Pos place a moment among its optimizer's parameters: its
	// param group and its position in that group's list (Pos −1: not
	// placed), for matching it to a model saved in another file
	// (MatchMoments) where its own file holds none.
	Group, Pos int
	// Pair is the name of the parameter's pair where MatchMoments found
	// it in another file of the step, "" otherwise (Entry.MomentParam).
	Pair string
	// Param is the name, in the same file, of the parameter whose
	// gradient the moment carries, "" where the file does not tell it
	// (see ptMoments).
	Param string
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
// name ptWalk gives the tensor, from the dicts ptWalk found. Reading the
// optimizers visits at most maxPTEntries param groups' indices and state
// entries (ptFound.optBudget): the pickle memo lets a few bytes name one
// large list many times.
//
// A moment's Param is found where the same file saved the model's
// state_dict beside the optimizer's (PyTorch's general-checkpoint
// recipe): the optimizer numbers its parameters in the order its param
// groups list them, each group in the order it was given them, so each
// group is matched by shape to the one subsequence of the state_dict's
// parameters it can be (align; buffers such as running_mean and
// num_batches_tracked are known by name, KindOf). Where a parameter has
// no saved state, a group's match is not the only one, or two dicts of
// tensors match alike (a model and its EMA copy), no Param is set: a
// wrong pairing would judge one parameter by another's gradient.
func ptMoments(f *ptFound) (map[string]Moment, map[string]int) {
	out := map[string]Moment{}
	dicts, optims := f.dicts, f.optims
	order := map[string]int{} // each tensor of a dict of tensors: its place there
	for _, d := range dicts {
		for i, n := range d.names {
			order[n] = i
		}
	}
	for _, o := range optims {
		for name, member := range o.state {
			out[name] = Moment{State: member}
		}
		params := o.params(dicts)
		for i, name := range o.members {
			m := o.moments[i]
			m.State = o.state[name]
			m.Group, m.Pos = o.place(o.at[i])
			if params != nil {
				m.Param = params[i]
			}
			out[name] = m
		}
	}
	return out, order
}

// tensorDict is a dict of the saved object whose values are all tensors
// (a state_dict): their names as ptWalk gives them, and shapes, in order.
type tensorDict struct {
	names  []string
	shapes [][]int
}

// optimizerDict is an optimizer's state dict found in the saved object:
// its parameters' indices in the order of its param groups, the shape
// each one's state holds (nil: no state saved), and the moments of the
// groups whose rule is known, by the name of the state tensor, with the
// position of their parameter in order.
type optimizerDict struct {
	state   map[string]string // the state tensors but step counters, by name: their member
	groups  [][2]int          // each param group's parameters: [from, to) in order
	order   []int
	shapes  [][]int
	members []string // state tensors that carry the gradient
	moments []Moment // their rules
	at      []int    // their parameters' positions in order
	hypers  []string // the names of the tensors its param groups hold (Tensor.Hyper)
}

// only returns the names align gives o's parameters in the one of dicts
// it matches, nil where none or several match.
func (o optimizerDict) only(dicts []tensorDict) []string {
	var found []string
	for _, d := range dicts {
		if names, ok := o.align(d); ok {
			if found != nil {
				return nil
			}
			found = names
		}
	}
	return found
}

// place returns the param group of o's parameter at position at in order,
// and its position in the group's list.
func (o optimizerDict) place(at int) (group, pos int) {
	for g, r := range o.groups {
		if at >= r[0] && at < r[1] {
			return g, at - r[0]
		}
	}
	return -1, -1
}

// params matches o's parameters in order to the tensors of one of dicts
// (see ptMoments) and returns, for each of o.members, its parameter's
// name; nil unless exactly one dict matches.
func (o optimizerDict) params(dicts []tensorDict) []string {
	found := o.only(dicts)
	if found == nil {
		return nil
	}
	out := make([]string, len(o.members))
	for i, at := range o.at {
		out[i] = found[at]
	}
	return out
}

// align returns the name of d's tensor matched to each of o's parameters,
// and whether all were matched. Each param group lists its parameters in
// the order it was given them, the model's order for model.parameters()
// or for a filter of named_parameters() (weights with weight decay,
// biases and norms without), so each group is matched, by shape, to a
// subsequence of d's parameters in order (buffers, by their names, never
// match): only where that subsequence is the one possible, its leftmost
// and rightmost embeddings the same (a frozen parameter of a shape the
// group holds too could be either), and no two groups claim one tensor.
func (o optimizerDict) align(d tensorDict) ([]string, bool) {
	var params []int // d's parameters, by position
	for j, n := range d.names {
		if KindOf(n) == KindParam {
			params = append(params, j)
		}
	}
	names := make([]string, len(o.order))
	claimed := map[int]bool{}
	for g := range o.groups {
		from, to := o.groups[g][0], o.groups[g][1]
		shapes := o.shapes[from:to]
		if slices.ContainsFunc(shapes, func(s []int) bool { return s == nil }) {
			return nil, false // a parameter without state: its shape is unknown
		}
		left, right := embed(shapes, params, d.shapes, false), embed(shapes, params, d.shapes, true)
		if left == nil || !slices.Equal(left, right) {
			return nil, false
		}
		for k, j := range left {
			if claimed[j] {
				return nil, false
			}
			claimed[j] = true
			names[from+k] = d.names[j]
		}
	}
	return names, len(names) > 0
}

// embed returns the positions of the first (or, fromEnd, the last)
// subsequence of candidates whose shapes are shapes, in order; nil where
// there is none.
func embed(shapes [][]int, candidates []int, of [][]int, fromEnd bool) []int {
	out := make([]int, len(shapes))
	c := 0
	if fromEnd {
		c = len(candidates) - 1
	}
	for k := range shapes {
		i := k
		if fromEnd {
			i = len(shapes) - 1 - k
		}
		for c >= 0 && c < len(candidates) && !slices.Equal(of[candidates[c]], shapes[i]) {
			if fromEnd {
				c--
			} else {
				c++
			}
		}
		if c < 0 || c >= len(candidates) {
			return nil
		}
		out[i] = candidates[c]
		if fromEnd {
			c--
		} else {
			c++
		}
	}
	return out
}

// optimizerOf returns d as an optimizer's state dict named name, and
// whether it is one; each state entry and parameter index it reads costs
// one of budget, and it gives up where that runs out.
func optimizerOf(d *types.Dict, name string, budget *int) (optimizerDict, bool) {
	var o optimizerDict
	state, ok1 := d.Get("state")
	groups, ok2 := d.Get("param_groups")
	gl, ok3 := groups.(*types.List)
	sd, ok4 := state.(*types.Dict)
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return o, false
	}
	prefix := "state/"
	if name != "" {
		prefix = name + "/state/"
	}
	states := map[int]*types.Dict{} // by parameter index
	o.state = map[string]string{}
	for _, e := range *sd {
		if *budget--; *budget < 0 {
			return o, false
		}
		i, ok := e.Key.(int)
		sm, isDict := e.Value.(*types.Dict)
		if !ok || !isDict {
			continue
		}
		states[i] = sm
		for _, m := range *sm {
			if *budget--; *budget < 0 {
				return o, false
			}
			if key, isStr := m.Key.(string); isStr && key != "step" {
				if _, isTensor := m.Value.(*ptTensor); isTensor {
					o.state[fmt.Sprintf("%s%d/%s", prefix, i, key)] = key
				}
			}
		}
	}
	for gi, g := range *gl {
		group, ok := g.(*types.Dict)
		if !ok {
			continue
		}
		for _, e := range *group { // hyperparameters held as tensors (a capturable optimizer's lr)
			if key, isStr := e.Key.(string); isStr && key != "params" {
				if _, isTensor := e.Value.(*ptTensor); isTensor {
					o.hypers = append(o.hypers, ptJoin(ptJoin(ptJoin(name, "param_groups"), gi), key))
				}
			}
		}
		member, m := groupMoment(group)
		params, ok := group.Get("params")
		pl, isList := params.(*types.List)
		if !ok || !isList {
			continue
		}
		from := len(o.order)
		for _, p := range *pl {
			if *budget--; *budget < 0 {
				return o, false
			}
			i, ok := p.(int)
			if !ok {
				continue
			}
			var shape []int
			if st := states[i]; st != nil {
				shape = stateShape(st, member, budget)
			}
			if m.Known() {
				o.members = append(o.members, fmt.Sprintf("%s%d/%s", prefix, i, member))
				o.moments = append(o.moments, m)
				o.at = append(o.at, len(o.order))
			}
			o.order = append(o.order, i)
			o.shapes = append(o.shapes, shape)
		}
		o.groups = append(o.groups, [2]int{from, len(o.order)})
	}
	return o, true
}

// stateShape returns the shape of a parameter's saved state: that of
// its member tensor (the moment, where the group's rule is known), else
// of its first tensor other than the step counter (0-d for a 0-d
// parameter); nil where it holds none. Each entry read costs one of
// budget.
func stateShape(st *types.Dict, member string, budget *int) []int {
	var first []int
	for _, e := range *st {
		if *budget--; *budget < 0 {
			return nil
		}
		t, ok := e.Value.(*ptTensor)
		switch {
		case !ok || e.Key == "step":
		case member != "" && e.Key == member:
			return append([]int{}, t.size...)
		case first == nil:
			first = append([]int{}, t.size...)
		}
	}
	if member != "" {
		return nil // the moment is not saved: no tensor to derive from
	}
	return first
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

// matchAcross names the parameter of each moment whose own file saved no
// model to match it to, from another file of the same step that saved
// one (Hugging Face's checkpoint-<k>/ holds pytorch_model.bin and
// optimizer.pt apart): a file's moments, placed by param group and
// position (Moment.Group, Pos), are matched to the parameters of another
// file of the step in the order that file saved them (Tensor.Order), as
// align matches them within a file, and named where exactly one file
// matches. A group whose positions are not all there (a parameter without
// state) matches nothing.
func matchAcross(entries []*Entry) {
	type fileKey struct {
		step int
		file string
	}
	moments, params := map[fileKey][]*Entry{}, map[fileKey][]*Entry{}
	for _, e := range entries {
		if m := e.Moment; e.Tensor != nil && e.Step != NoStep && m.Known() && m.Param == "" && m.Group >= 0 && m.Pos >= 0 {
			k := fileKey{e.Step, e.File}
			moments[k] = append(moments[k], e)
		}
	}
	if len(moments) == 0 {
		return // most runs: no optimizer state, or matched in its own file
	}
	files := map[int][]fileKey{} // the files of each step that hold parameters
	for _, e := range entries {
		if e.Tensor == nil || e.Step == NoStep {
			continue
		}
		k := fileKey{e.Step, e.File}
		if e.Kind == KindParam {
			if len(params[k]) == 0 {
				files[k.step] = append(files[k.step], k)
			}
			params[k] = append(params[k], e)
		}
	}
	for k, ms := range moments {
		o, at, ok := placed(ms)
		if !ok {
			continue
		}
		var dicts []tensorDict // the other files' parameters, in the order each saved them
		for _, f := range files[k.step] {
			if f == k {
				continue
			}
			var d tensorDict
			for _, p := range slices.SortedStableFunc(slices.Values(params[f]), func(x, y *Entry) int { return x.Order - y.Order }) {
				d.names, d.shapes = append(d.names, p.Name), append(d.shapes, p.Shape)
			}
			dicts = append(dicts, d)
		}
		found := o.only(dicts)
		if found == nil {
			continue
		}
		for i, e := range ms {
			e.Moment.Pair = found[at[i]]
		}
	}
}

// placed returns the optimizer that a file's moments make, each param
// group its moments' shapes by position, and each moment's place in its
// order; false where a group's positions are not each held by one moment.
func placed(ms []*Entry) (optimizerDict, []int, bool) {
	var o optimizerDict
	size := map[int]int{} // positions per group
	for _, e := range ms {
		size[e.Moment.Group] = max(size[e.Moment.Group], e.Moment.Pos+1)
	}
	groups := slices.Sorted(maps.Keys(size))
	start := map[int]int{}
	for _, g := range groups {
		start[g] = len(o.order)
		o.groups = append(o.groups, [2]int{len(o.order), len(o.order) + size[g]})
		o.order = append(o.order, make([]int, size[g])...)
		o.shapes = append(o.shapes, make([][]int, size[g])...)
	}
	at := make([]int, len(ms))
	for i, e := range ms {
		j := start[e.Moment.Group] + e.Moment.Pos
		if o.shapes[j] != nil {
			return o, nil, false // two moments at one place
		}
		o.shapes[j], at[i] = append([]int{}, e.Shape...), j
	}
	for _, s := range o.shapes {
		if s == nil {
			return o, nil, false
		}
	}
	return o, at, len(ms) > 0
}
