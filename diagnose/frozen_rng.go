package diagnose

import (
	"strings"

	"github.com/graphdiff/graphdiff/loaders"
)

// FrozenRNG is the ID of the cause "random values baked into the graph".
const FrozenRNG = "frozen_rng"

// frozenRNGCause is what `graphdiff explain frozen_rng` prints.
var frozenRNGCause = Explanation{
	ID:    FrozenRNG,
	Title: "random values baked into the graph",
	What: `Random numbers drawn outside the graph's view at capture time — from a CPU
generator, from a CUDA generator not registered with the graph, or seeded
with a Python int — are recorded as constants: every replay reuses the
dropout masks or noise of the capture.`,
	Signature: `The runs agree at the capture step and differ from the first replay after it,
over most elements, with no simpler pattern: the graph does not lag the eager
run, does not repeat one batch, and its gradients do not accumulate.`,
	Confirm: `Dump the random tensor (mask or noise) at two steps of the graphed run: if
they are equal, it is frozen.`,
	Fix: `Draw random numbers inside the captured region from the default CUDA
generator, or register custom generators with the graph
(graph.register_generator_state(gen)); never pass Python-int seeds or
CPU-generated noise into captured code; use torch's graph-safe RNG ops.`,
}

// frozenRNG: the runs agree at the capture step and differ from the first
// replay on, with none of the more specific signatures.
//
// Prediction: the graph replays the random values drawn at capture (a
// dropout mask, noise, a mixing factor drawn in Python), so its step k is
// eager's step k computed with the capture step's draws. The dumps of
// losses, gradients and parameters cannot test that without the random
// tensors: this cause is named by elimination (0.55), and its evidence
// names the dump that would confirm it.
func frozenRNG(f *facts) *Cause {
	if f.div == loaders.NoStep || f.div == f.firstStep || f.explained(InputLag, StaleInput, GradAccumulation, CapturedScalar,
		OutputAliasing, DynamicShape, AutocastCache, CapturedBranch, UninitializedMemory, GradsZeroNotNone,
		CallablesAccumulation, ReassignedTensor) >= 0.6 {
		return nil
	}
	if p, ok := f.s.prev(f.div); !ok || p != f.firstStep {
		return nil // random values frozen at capture show from the first replay
	}
	var ev evidence
	ev.add("step %d (the capture step) agrees and step %d, the first replay after it, breaks: %s", f.firstStep, f.div, strings.Join(f.r.FirstDivergence.Reasons, "; "))
	ev.add("no lag behind the eager run, no repeated batch, no accumulating gradients and no scale factor: what is left is values fixed at capture, such as random masks or noise")
	if a, b := f.s.get(f.s.a, f.div, loaders.KindGrad), f.s.get(f.s.b, f.div, loaders.KindGrad); a != nil {
		ev.add("gradients at step %d: cosine %.3f, relative L2 %s", f.div, cosine(a, b), g(relL2(a, b)))
	}
	ev.add("not dumped, and would confirm it: the random tensors (dropout masks, noise) at two steps; if the runs used autocast, give --compute-dtype")
	return &Cause{ID: FrozenRNG, Confidence: 0.55, Evidence: ev}
}
