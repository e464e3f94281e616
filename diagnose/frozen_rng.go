package diagnose

import (
	"fmt"
	"math"
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
// replay on, and the predictions of the causes that break there the same
// way and that these dumps can test do not fit.
//
// Prediction: the graph replays the random values drawn at capture (a
// dropout mask, noise, a mixing factor or timestep drawn in Python), so
// its step k is eager's step k computed with other draws: the same batch
// and, at the first replay, the same parameters. Three consequences are
// tested where the dumps allow, each against the threshold of the cause
// it would otherwise be (the draws may be most of a gradient, as a
// diffusion model's noise is, so "closer" alone decides nothing); one
// that fails rules the cause out, since a lag, a stale batch or
// accumulating gradients then fits better:
//   - the graph's step k is at least lagRatio as far from eager's step
//     k−1 as from eager's step k (median of the first five diverged
//     steps; a lag puts it next to k−1);
//   - its gradients change from step to step at least repeatRatio as
//     much as eager's (new batches keep coming; a stale batch's do not),
//     or, without gradients, its loss is not below eager's at 80% of the
//     steps after the break (a batch fitted over and over);
//   - its gradient k minus its gradient k−1 is at least accRatio as far
//     from eager's gradient k as its gradient k is (no accumulation).
//
// What the dumps cannot test is the draws themselves: the cause is named
// at 0.55, by what is left, and its evidence quotes each test and names
// the dump that would confirm it (the random tensors at two steps).
func frozenRNG(f *facts) *Cause {
	if f.div == loaders.NoStep || f.div == f.firstStep || f.explained(InputLag, StaleInput, GradAccumulation, CapturedScalar,
		OutputAliasing, DynamicShape, AutocastCache, CapturedBranch, UninitializedMemory, GradsZeroNotNone,
		CallablesAccumulation, ReassignedTensor) >= 0.6 {
		return nil
	}
	p, ok := f.s.prev(f.div)
	if !ok || p != f.firstStep {
		return nil // random values frozen at capture show from the first replay
	}
	var ev evidence
	ev.add("step %d (the capture step) agrees and step %d, the first replay after it, breaks: %s", f.firstStep, f.div, strings.Join(f.r.FirstDivergence.Reasons, "; "))
	tested, fits := f.frozenTests(p, &ev)
	if !fits {
		return nil
	}
	if tested == 0 {
		ev.add("none of lag, stale batch or accumulation could be tested: neither gradients nor outputs nor two losses after the break were dumped")
	}
	ev.add("not dumped, and would confirm it: the random tensors (dropout masks, noise) or the numbers drawn in Python (a timestep, a mixing factor) at two steps of the graphed run; if the runs used autocast, give --compute-dtype")
	return &Cause{ID: FrozenRNG, Confidence: 0.55, Evidence: ev}
}

// frozenTests tests frozenRNG's three consequences at the first divergent
// step k (p the step before it), adding each result to ev; it returns how
// many could be tested and whether all that could held.
func (f *facts) frozenTests(p int, ev *evidence) (tested int, fits bool) {
	k := f.div
	kinds := append([]loaders.Kind{loaders.KindGrad}, f.outputKinds()...)
	for _, kind := range append(kinds, loaders.KindLoss) {
		if r, n := f.lagRatio(kind, 5); n > 0 {
			tested++
			if r < lagRatio {
				return tested, false
			}
			what := "no lag"
			if r < 1 {
				what = "no clear lag (nearer the step before, but not the near match a lag gives)"
			}
			ev.add("%s: the graph's %s are %s× as far (L2) from eager's the step before as from eager's the same step (%s)", what, kindWord(kind), g(r), overSteps(n, k))
			break
		}
	}
	if r, n := f.repeat(loaders.KindGrad, 0); n >= 2 {
		tested++
		if r < repeatRatio {
			return tested, false
		}
		ev.add("no stale batch: the graph's gradients change from step to step %s× as much as eager's (median over %d steps)", g(r), n)
	} else if below, n := f.lossBelow(); n >= 3 {
		tested++
		if below >= 0.8 {
			return tested, false
		}
		ev.add("no stale batch: the graphed loss is below the eager one at %.0f%% of %d steps after the break (a batch fitted over and over would be below at nearly all)", 100*below, n)
	}
	if a, _, b, bp := f.four(loaders.KindGrad, k, p); a != nil && allFinite(a, b, bp) {
		tested++
		acc, same := relL2(a, sub(b, bp)), relL2(a, b)
		if acc < accRatio*same {
			return tested, false
		}
		ev.add("no accumulation: the graph's gradient at step %d less its gradient at step %d differs from eager's by %s (relative L2), the gradient itself by %s", k, p, g(acc), g(same))
	}
	return tested, true
}

// lagRatio returns, over the first n diverged steps k of a kind that have
// a step p before them, the median of ‖B[k] − A[p]‖ / ‖B[k] − A[k]‖ (how
// much farther the graph is from eager's previous step than from the same
// step; a lag makes it small), and how many steps it is over.
func (f *facts) lagRatio(kind loaders.Kind, n int) (float64, int) {
	if f.aliased[kind] {
		return math.NaN(), 0
	}
	var rs []float64
	for _, k := range f.divergedSteps(kind) {
		p, ok := f.s.prev(k)
		a, ap, b := f.s.get(f.s.a, k, kind), f.s.get(f.s.a, p, kind), f.s.get(f.s.b, k, kind)
		if !ok || a == nil || ap == nil || b == nil || !allFinite(a, ap, b) {
			continue
		}
		if same := norm(sub(b, a)); same > 0 {
			rs = append(rs, norm(sub(b, ap))/same)
		}
		if len(rs) == n {
			break
		}
	}
	return median(rs)
}

// overSteps says what a median was taken over: "at step k" for one step,
// "median of n steps from k on" for more.
func overSteps(n, k int) string {
	if n == 1 {
		return fmt.Sprintf("at step %d", k)
	}
	return fmt.Sprintf("median of %d steps from %d on", n, k)
}
