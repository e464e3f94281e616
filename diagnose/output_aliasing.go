package diagnose

import (
	"fmt"

	"github.com/graphdiff/graphdiff/loaders"
)

// OutputAliasing is the ID of the cause "kept references to a static output".
const OutputAliasing = "output_aliasing"

// outputAliasingCause is what `graphdiff explain output_aliasing` prints.
var outputAliasingCause = Explanation{
	ID:    OutputAliasing,
	Title: "kept references to a static output or gradient",
	What: `The graph writes its outputs and gradients into the same static tensors at
every replay. Keeping a reference (losses.append(static_loss),
grads_log.append(p.grad)) instead of a copy means every kept value is
overwritten by the next replay: what is read afterwards is the last replay's.`,
	Signature: `Some of the graph's values (loss, outputs, gradients) are identical at every
step and equal to the eager run's last step, while the eager values change.`,
	Confirm: `Print the kept values' data_ptr(): they are all the same tensor.`,
	Fix: `Clone outputs you keep past the next replay (static_loss.detach().clone(),
or .item() for scalars) before calling g.replay() again.`,
}

// outputAliasing: some kind other than inputs whose graphed values are
// finite and identical at every step while the eager ones change.
//
// Prediction: what was kept is a reference to a static buffer the next
// replay overwrites, so every kept step holds the last replay's values:
// B_k = B_last for all k, and B_last ≈ A_last.
func outputAliasing(f *facts) *Cause {
	if len(f.s.steps) < 3 {
		return nil
	}
	last := f.s.steps[len(f.s.steps)-1]
	var ev evidence
	var fs fitSet
	conf := 0.0
	for _, kind := range kindOrder(f.s.kinds) {
		bLast, aLast := f.s.get(f.s.b, last, kind), f.s.get(f.s.a, last, kind)
		if bLast == nil || kind == loaders.KindInput {
			continue // inputs the graph reads never change when stale: stale_input
		}
		if _, special := maxAbs(bLast); special {
			continue // NaN or Inf everywhere is no buffer's last contents
		}
		constant, n, eagerVaries := true, 0, 0.0
		for _, k := range f.s.steps {
			b, a := f.s.get(f.s.b, k, kind), f.s.get(f.s.a, k, kind)
			if b == nil || a == nil {
				continue
			}
			n++
			if !(relL2(bLast, b) <= identical) {
				constant = false
				break
			}
			eagerVaries = max(eagerVaries, relL2(aLast, a))
		}
		if !constant || n < 3 || eagerVaries < 1e-4 {
			continue
		}
		matchesLast := relL2(aLast, bLast) <= 1e-3
		c := 0.8
		if matchesLast {
			c = 0.95
		}
		conf = max(conf, c)
		f.aliased[kind] = true
		for _, k := range f.s.steps { // the prediction: B[k] = A[last]
			if a, b := f.s.get(f.s.a, k, kind), f.s.get(f.s.b, k, kind); a != nil && b != nil {
				fs.add(fitOf(a, b, aLast))
			}
		}
		line := fmt.Sprintf("%s: the graphed run's values are identical at all %d steps while the eager ones change (by up to %s relative to the last step)",
			kindWord(kind), n, g(eagerVaries))
		if matchesLast {
			line += fmt.Sprintf(", and they equal the eager run's last step (%d)", last)
		}
		ev.add("%s", line)
	}
	if conf == 0 {
		return nil
	}
	return fs.set(&Cause{ID: OutputAliasing, Confidence: conf, Evidence: ev}, "graph[k] = eager[last]", "the kept values' difference from eager")
}
