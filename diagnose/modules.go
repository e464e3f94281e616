package diagnose

import (
	"fmt"
	"slices"

	"github.com/graphdiff/graphdiff/judge"
)

// inputSide are the causes that change what the model reads: the graph
// reads other inputs (stale_input, input_lag) or inputs of another shape
// (dynamic_shape). Each predicts that the first tapped module in forward
// order departs (judge.ModuleDeparture.Index 0): a later module departing
// while its input, the output of the module before it, agrees refutes it,
// and so does a first divergent step at which every tapped output agrees.
var inputSide = []string{StaleInput, InputLag, DynamicShape}

// inForward are the causes whose values act in the forward pass at the
// step they break: inputSide, and random values frozen at capture
// (frozen_rng), drawn by a module (a dropout) and read by the modules
// after it. A first divergent step at which every tapped module's output
// agrees refutes them.
var inForward = append(slices.Clone(inputSide), FrozenRNG)

// locate tests the causes found against where the taps place the
// departure (judge.Result.FirstModule, ModulesAgree), and against the
// departing module's output where it is eager's channel by channel
// (moduleChannels: captured_scalar and the input-side causes do not make
// that): a cause whose prediction of where in the model the runs part is
// refuted is not named (above), and every cause kept quotes the place,
// before its last line (which names the dump that would decide; see
// posterior). Without taps at the first divergent step it returns cs
// unchanged.
func (f *facts) locate(cs []Cause) []Cause {
	m, agree := f.r.FirstModule, f.r.ModulesAgree
	var refuted []string
	var where string
	switch {
	case agree != nil:
		refuted = inForward
		where = fmt.Sprintf("the %d modules tapped at step %d agree, forward and backward: the runs part after the passes the taps saw", agree.Modules, agree.Step)
	case m != nil && m.Backward:
		refuted = inForward
		where = fmt.Sprintf("every tapped output agrees at step %d, and the gradient into %s departs first in backward order", m.Step, moduleWords(m))
	case m != nil:
		if m.Index > 0 {
			refuted = inputSide
		}
		where = fmt.Sprintf("at step %d the first tapped module whose output departs is %s", m.Step, moduleWords(m))
		if m.Input != "" {
			where += fmt.Sprintf(", its input, the output of %s, agreeing", m.Input)
		} else {
			where += ", the first in forward order"
		}
	default:
		return cs
	}
	if f.channels != nil {
		// values held per channel inside the module: no Python number,
		// which scales every channel alike, and no other batch, which the
		// module would not map onto eager's output channel by channel
		refuted = slices.Concat(refuted, inputSide, []string{CapturedScalar})
	}
	out := cs[:0:0]
	for _, c := range cs {
		if slices.Contains(refuted, c.ID) {
			continue
		}
		// before the last line, which names the dump that would decide
		// and is what the text report shows of a cause also possible
		c.Evidence = slices.Insert(slices.Clip(c.Evidence), max(len(c.Evidence)-1, 0), where)
		out = append(out, c)
	}
	return out
}

// moduleWords names a departing module with its class.
func moduleWords(m *judge.ModuleDeparture) string {
	if m.Module.Type == "" {
		return m.Module.Name
	}
	return m.Module.Name + " (" + m.Module.Type + ")"
}
