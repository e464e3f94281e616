package diagnose

import (
	"fmt"
	"strings"

	"github.com/graphdiff/graphdiff/loaders"
)

// AutocastCache is the ID of the cause "autocast cache across capture: stale casted weights".
const AutocastCache = "autocast_cache"

// autocastCacheCause is what `graphdiff explain autocast_cache` prints.
var autocastCacheCause = Explanation{
	ID:    AutocastCache,
	Title: "autocast cache across capture: stale casted weights",
	What: `With autocast's cache enabled around capture, the low-precision copies of the
weights made at capture are baked into the graph: later parameter updates
never reach the forward pass.`,
	Signature: `Only under autocast (compute dtype narrower than the dumps): the runs agree
at the capture step, then drift apart step by step beyond the compute
dtype's noise while staying strongly correlated.`,
	Confirm: `Capture with torch.autocast(..., cache_enabled=False) and compare again.`,
	Fix: `Use torch.autocast(device_type="cuda", dtype=..., cache_enabled=False)
around capture (torch.cuda.make_graphed_callables requires it).`,
}

// autocastCache: under autocast, the runs agree at the capture step and
// break at the first replay after it (the step after the first dumped
// step), drifting apart while staying strongly correlated.
//
// Prediction: the graph's forward reads the bfloat16 casts of the
// weights made at capture, so from the first replay its numbers are
// eager's computed from weights that stopped moving: strongly correlated
// with eager's and drifting away as the weights move.
func autocastCache(f *facts) *Cause {
	if !f.autocast() {
		return nil
	}
	compute, stored := f.r.Precision.Compute, f.storedFloat()
	if f.div == loaders.NoStep || f.explained(InputLag, StaleInput, GradAccumulation, OutputAliasing, DynamicShape, GradsZeroNotNone, CallablesAccumulation) >= 0.6 {
		return nil
	}
	if f.explained(CapturedScalar) >= 0.75 {
		return nil // an optimizer scalar, or an exact scale of the gradients; not stale weights
	}
	if p, ok := f.s.prev(f.div); !ok || p != f.firstStep {
		return nil // the casts cached at capture are stale from the first replay on
	}
	var ev evidence
	ev.add("the runs used autocast: compute dtype %s, dumps in %s", compute, stored)
	ks := f.diverged[loaders.KindGrad]
	if len(ks) == 0 {
		ev.add("step %d, the first replay after capture, breaks: %s", f.div, strings.Join(f.r.FirstDivergence.Reasons, "; "))
		ev.add("%s", f.missing(loaders.KindGrad))
		return &Cause{ID: AutocastCache, Confidence: 0.55, Evidence: ev}
	}
	var parts []string
	for _, k := range ks {
		a, b := f.s.get(f.s.a, k, loaders.KindGrad), f.s.get(f.s.b, k, loaders.KindGrad)
		parts = append(parts, fmt.Sprintf("step %d: relative L2 %s, cosine %.3f", k, g(relL2(a, b)), cosine(a, b)))
	}
	ev.add("steps before %d agree; the gradients then drift apart while staying correlated — %s", f.div, strings.Join(parts, "; "))
	return &Cause{ID: AutocastCache, Confidence: 0.75, Evidence: ev}
}
