package diagnose

import (
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/graphdiff/graphdiff/judge"
	"github.com/graphdiff/graphdiff/loaders"
)

// GradsZeroNotNone is the ID of the cause "the graph updates parameters
// that eager skipped (zero gradients where eager had none)".
const GradsZeroNotNone = "grads_zero_not_none"

// gradsZeroNotNoneCause is what `graphdiff explain grads_zero_not_none` prints.
var gradsZeroNotNoneCause = Explanation{
	ID:    GradsZeroNotNone,
	Title: "the graph updates parameters that eager skipped (zero gradients where eager had none)",
	What: `A captured step needs every gradient to exist before capture, so graphed code
often preallocates .grad for all parameters (or zeroes them with
zero_grad(set_to_none=False)). A parameter the forward never uses then has a
zero gradient in the graph where eager has None. Optimizers skip a parameter
whose gradient is None, but not one whose gradient is zero: weight decay
(AdamW, SGD's weight_decay) shrinks it, and momentum keeps moving it.`,
	Signature: `Gradients that only the graphed run has; parameters that the eager run never
moves while the graphed run does, typically shrinking by the same factor
(1 − lr·weight_decay) every step.`,
	Confirm: `List the parameters with p.grad is None after an eager backward; in the
graphed run, print their values at two steps.`,
	Fix: `Leave unused parameters out of the optimizer's parameter groups (or set
requires_grad=False), or give them p.grad = None before capture and never
preallocate their gradients; with set_to_none=False, exclude them from weight
decay.`,
}

// gradsZeroNotNone: gradients present only in the graphed run, and
// parameters that the reference run leaves bit for bit unchanged at every
// measured step while the graphed run moves them. Both at once is the
// whole signature (0.9); parameters alone 0.8 (an optimizer moved what eager
// skipped, for another reason as well); extra gradients alone 0.6 (they
// may only be dumped differently), saying that parameters would decide.
//
// Prediction: the graph allocates every gradient, so parameters eager
// leaves without one (None, skipped by the optimizer) get zeros that
// weight decay and momentum still move: gradients only the graph has, and
// parameters only the graph moves.
func gradsZeroNotNone(f *facts) *Cause {
	extra := map[string]bool{}
	for _, t := range f.r.Tensors {
		if t.Status == judge.StatusExtra && t.Kind == loaders.KindGrad {
			extra[loaders.Subject(t.Name)] = true
		}
	}
	// parameters eager never moved and the graph did, at any measured step
	still, movedB := map[string]bool{}, map[string]bool{}
	measured := false
	for _, t := range f.r.Tensors {
		u := t.Update
		if t.Kind != loaders.KindParam || u == nil {
			continue
		}
		measured = true
		s := loaders.Subject(t.Name)
		if _, seen := still[s]; !seen {
			still[s] = true
		}
		still[s] = still[s] && u.MovedA == 0
		if u.MovedB > 0 {
			movedB[s] = true
		}
	}
	var skipped []string
	for s, ok := range still {
		if ok && movedB[s] {
			skipped = append(skipped, s)
		}
	}
	sort.Strings(skipped)
	if len(extra) == 0 && len(skipped) == 0 {
		return nil
	}
	var ev evidence
	conf := 0.6
	if len(extra) > 0 {
		names := slices.Sorted(maps.Keys(extra))
		ev.add("gradients only the graphed run has: %s (the eager run's are None)", list(names, 4))
	}
	if len(skipped) > 0 {
		conf = 0.8
		ev.add("parameters the eager run never moves and the graphed run does: %s", list(skipped, 4))
		if len(extra) > 0 {
			conf = 0.9
		}
	} else if !measured {
		ev.add("%s (to see whether the graph moves the parameters eager skips)", f.missing(loaders.KindParam))
	}
	return &Cause{ID: GradsZeroNotNone, Confidence: conf, Evidence: ev}
}

// list joins up to n names, "and k more" after them.
func list(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:n], ", ") + " and " + g(float64(len(names)-n)) + " more"
}
