package diagnose

import (
	"sort"
	"strings"

	"github.com/graphdiff/graphdiff/judge"
	"github.com/graphdiff/graphdiff/loaders"
)

// DynamicShape is the ID of the cause "shape differs from the captured one".
const DynamicShape = "dynamic_shape"

// dynamicShapeCause is what `graphdiff explain dynamic_shape` prints.
var dynamicShapeCause = Explanation{
	ID:    DynamicShape,
	Title: "shape differs from the captured one",
	What: `A graph is captured for fixed shapes. Batches of another size are padded,
truncated or copied into part of the static input, and the rest of the
static tensor keeps stale values.`,
	Signature: `Tensors whose shapes differ between the runs at some steps, or a tail of a
tensor that never changes in the graphed run.`,
	Confirm: `Log the batch size at every step; compare with the captured shape.`,
	Fix: `Bucket shapes and capture one graph per bucket, pad inputs to the captured
shape with masking, or drop the last incomplete batch (drop_last=True).`,
}

// dynamicShape: pairs whose shapes differ between the runs.
//
// Prediction: a batch of another size reaches the graph as the captured
// shape (padded, cut, or a tail that never changes), so what is dumped of
// it differs in shape, or, without inputs and outputs, the runs break at
// that step as a branch would (captured_branch lists it).
func dynamicShape(f *facts) *Cause {
	var ev evidence
	var ks []int
	n := 0
	for _, t := range f.r.Tensors {
		if t.Status != judge.StatusShapeMismatch || (t.Step == loaders.NoStep && curveLength(t) && f.explained(MissingSteps) >= 0.6) {
			continue // a loss curve as long as each run's steps
		}
		n++
		ks = appendUnique(ks, t.Step)
		if n <= 3 {
			ev.add("%s at %s: shape %s in the reference, %s in the graphed run", t.Name, stepName(t.Step),
				loaders.FormatShape(t.A.Shape), loaders.FormatShape(t.B.Shape))
		}
	}
	if n == 0 {
		return nil
	}
	sort.Ints(ks)
	names := make([]string, len(ks))
	for i, k := range ks {
		names[i] = stepName(k)
	}
	ev.add("%d tensor pairs differ in shape, at %s; the other steps agree in shape", n, strings.Join(names, ", "))
	return &Cause{ID: DynamicShape, Confidence: 0.95, Evidence: ev}
}
