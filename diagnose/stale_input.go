package diagnose

import "github.com/graphdiff/graphdiff/loaders"

// StaleInput is the ID of the cause "input tensor reassigned instead of copied".
const StaleInput = "stale_input"

// staleInputCause is what `graphdiff explain stale_input` prints.
var staleInputCause = Explanation{
	ID:    StaleInput,
	Title: "input tensor reassigned instead of copied",
	What: `The graph reads the static input tensor it was captured with. Assigning a new
tensor to the Python name (static_x = batch) changes nothing the graph sees,
so every replay computes on the capture-time batch.`,
	Signature: `The graph behaves as if fed one batch: its outputs barely change from step
to step while the eager run's change with every batch, and its gradients'
zero pattern (from ReLUs) repeats step after step.`,
	Confirm: `Dump the graph's static input tensor after a few steps: it still holds the
first batch.`,
	Fix: `Copy new data into the static input in place: static_x.copy_(batch)
(and keep the static tensors alive for the graph's lifetime).`,
}

// staleInput: after the first divergence, the graphed run changes far less
// from step to step than the eager run (outputs), or repeats its gradients'
// zero pattern. Outputs that never change at all are output_aliasing, and
// accumulated gradients keep their zero pattern too, so each signal is left
// out when that cause was found.
func staleInput(f *facts) *Cause {
	if f.div == loaders.NoStep {
		return nil
	}
	useOutputs := f.explained(OutputAliasing) < 0.6
	useZeros := f.explained(GradAccumulation) < 0.6
	var ev evidence
	outHits, zeroHits := 0, 0
	for _, k := range f.s.steps {
		p, ok := f.s.prev(k)
		if !ok || k <= f.div {
			continue // the first divergent step may still see the capture batch legitimately
		}
		if a, ap, b, bp := f.four(loaders.KindOutput, k, p); a != nil && useOutputs {
			sA, sB := relL2(ap, a), relL2(bp, b)
			if sA > 0.05 && sB < repeatRatio*sA {
				outHits++
				if outHits <= 2 {
					ev.add("outputs from step %d to %d change by %s (relative L2) in the graphed run, %s in the eager run", p, k, g(sB), g(sA))
				}
			}
		}
		if a, ap, b, bp := f.four(loaders.KindGrad, k, p); a != nil && useZeros {
			jA, zA := zeroJaccard(a, ap)
			jB, zB := zeroJaccard(b, bp)
			if zA > 0.02 && zB > 0.02 && jB >= zeroRepeat && jA < zeroVary {
				zeroHits++
				if zeroHits <= 2 {
					ev.add("gradients' zero pattern (ReLU) at steps %d and %d: %.0f%% the same in the graphed run, %.0f%% in the eager run", p, k, 100*jB, 100*jA)
				}
			}
		}
	}
	if outHits == 0 && zeroHits == 0 {
		return nil
	}
	conf := 0.6
	switch {
	case outHits > 0 && zeroHits > 0:
		conf = 0.92
	case outHits >= 2 || zeroHits >= 2:
		conf = 0.85
	}
	ev.add("%s", f.missing(loaders.KindOutput))
	return &Cause{ID: StaleInput, Confidence: conf, Evidence: ev}
}
