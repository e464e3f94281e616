package diagnose

import (
	"strings"

	"github.com/graphdiff/graphdiff/loaders"
)

// GradAccumulation is the ID of the cause "gradients not zeroed between replays".
const GradAccumulation = "grad_accumulation"

// gradAccumulationCause is what `graphdiff explain grad_accumulation` prints.
var gradAccumulationCause = Explanation{
	ID:    GradAccumulation,
	Title: "gradients not zeroed between replays",
	What: `backward() accumulates into .grad. If the grads are not zeroed or set to None
inside the captured step, each replay adds its gradient to the previous one.`,
	Signature: `The graph's gradient at step k equals its gradient at k−1 plus one that
matches the eager gradient, and gradient norms grow with k relative to eager.`,
	Confirm: `Dump .grad after two replays on the same batch: the second is twice the
first.`,
	Fix: `Let the captured backward allocate the grads: call
optimizer.zero_grad(set_to_none=True) right before capture, as PyTorch's
whole-network example does; or zero them inside the captured step
(p.grad.zero_() before backward()).`,
}

// gradAccumulation: graph grad[k] − graph grad[k−1] matches eager grad[k]
// (relL2 below accRatio times that of graph grad[k] against eager's) at
// 60% of the diverged steps that have a step before them, or at the first
// of them. The prediction holds while the parameters agree: accumulated
// gradients make the graph's updates larger than eager's, so its later
// gradients are taken at other parameters and the increments drift from
// eager's gradients; the first step it can be tested at is where the
// parameters have moved apart least.
//
// Prediction: the captured backward adds into gradients nobody zeroes, so
// graph grad[k] = graph grad[k−1] + the step's own gradient.
func gradAccumulation(f *facts) *Cause {
	if !f.s.kinds[loaders.KindGrad] {
		return nil
	}
	hits, tried, firstHit := 0, 0, false
	var ev evidence
	var ratios []string
	var at []int // the steps of ratios
	var fs fitSet
	for _, k := range f.diverged[loaders.KindGrad] { // derived gradients: derivedDiverged
		p, ok := f.s.prev(k)
		a, b, bp := f.s.get(f.s.a, k, loaders.KindGrad), f.s.get(f.s.b, k, loaders.KindGrad), f.s.get(f.s.b, p, loaders.KindGrad)
		if !ok || a == nil || b == nil || bp == nil {
			continue
		}
		tried++
		fs.add(fitOf(a, b, add(bp, a))) // the prediction: B[k] = B[k−1] + A[k]
		acc, same := relL2(a, sub(b, bp)), relL2(a, b)
		if acc < accRatio*same {
			firstHit = firstHit || tried == 1
			hits++
			if hits <= 2 {
				ev.add("step %d: graph grads − graph grads of step %d differ from eager grads by %s (relative L2), graph vs eager %s", k, p, g(acc), g(same))
			}
		}
		ratios, at = append(ratios, g(norm(b)/norm(a))), append(at, k)
	}
	if hits == 0 || (float64(hits) < 0.6*float64(tried) && !firstHit) {
		return nil
	}
	ev.add("gradient norm, graph / eager, at steps %s: %s", steps(at), strings.Join(ratios, ", "))
	conf := 0.75
	if hits >= 2 {
		conf = 0.92
	}
	return fs.set(&Cause{ID: GradAccumulation, Confidence: conf, Evidence: ev}, "graph[k] = graph[k−1] + eager[k]", "the gradients' difference from eager")
}
