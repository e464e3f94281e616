package report

import (
	"fmt"

	"github.com/graphdiff/graphdiff/internal/words"
	"github.com/graphdiff/graphdiff/judge"
)

// moduleLine says where in the model the runs part, from the taps
// (judge.FirstModule), as the text, Markdown and HTML reports print it
// after the first divergence; "" without taps at that step.
func moduleLine(r *judge.Result) string {
	if m := r.FirstModule; m != nil {
		what, order, input := "output", "forward", "its input, the output of "+m.Input+", agrees"
		if m.Backward {
			what, order, input = "gradient", "backward", "the gradient into "+m.Input+", which it feeds back, agrees"
		}
		if m.Input == "" {
			input = "it is the first tapped module in that order"
		}
		if m.BelowLimit {
			if m.Input == "" {
				input = "no tapped output is beyond its limit there, and it is the first tapped module, whose output differs at all"
			} else {
				input = "no tapped output is beyond its limit there, but its input, the output of " + m.Input + ", agrees bit for bit and its own output does not"
			}
		}
		typ := ""
		if m.Module.Type != "" {
			typ = " (" + m.Module.Type + ")"
		}
		return fmt.Sprintf("where in the model: %s%s, the first tapped module in %s order whose %s departs at step %d; %s",
			m.Module.Name, typ, order, what, m.Step, input)
	}
	if a := r.ModulesAgree; a != nil {
		return fmt.Sprintf("where in the model: the %s tapped at step %d all agree, forward and backward: the runs part after the passes the taps saw (the optimizer's step, or state outside the tapped modules)",
			words.Plural(a.Modules, "module"), a.Step)
	}
	return ""
}
