package diagnose

import (
	"fmt"

	"github.com/graphdiff/graphdiff/judge"
	"github.com/graphdiff/graphdiff/loaders"
)

// UninitializedMemory is the ID of the cause "memory read before it is written".
const UninitializedMemory = "uninitialized_memory"

// uninitializedMemoryCause is what `graphdiff explain uninitialized_memory` prints.
var uninitializedMemoryCause = Explanation{
	ID:    UninitializedMemory,
	Title: "memory read before it is written",
	What: `A buffer made with torch.empty, or memory the graph's private pool reuses,
is read before it is written: the graph computes on whatever the memory held.`,
	Signature: `The runs differ from the very first step, before any replay-order bug could
act; values may be NaN, Inf or huge where the eager run has none, or come
from an unrelated tensor. In an output (logits), fewer elements than one row
differ: a row computed from another input would differ whole.`,
	Confirm: `Run the graphed code with torch.use_deterministic_algorithms(True) (which
fills torch.empty with NaN) or compute-sanitizer --tool initcheck.`,
	Fix: `Initialise buffers (torch.zeros, or fill_ before use); do not read tensors
freed before capture; keep tensors the graph uses alive.`,
}

// uninitializedMemory: NaN/Inf or huge values only in the graphed run, a
// region of an output smaller than one row differing (smallRegion), or
// a difference already at the first step, which no replay-order bug can
// cause (0.7, and only where training dumps begin at step 0 or 1: the
// first dumped step of dumps that begin mid-run a bug that acted on the
// steps before may have parted, and an inference run's first batch is a
// replay) —
// unless it is one only a baseline can judge (needsBaseline: the
// gradients' direction kept, within ten times their limit), which values
// read from unwritten memory, unrelated to the eager ones, are not.
//
// Prediction: the graph reads memory nobody wrote (or that was freed), so
// some of its values are unrelated to eager's: NaN, Inf or huge where
// eager has none, a region of an output smaller than one row, or a
// difference already at the first step, before any replay could act.
func uninitializedMemory(f *facts) *Cause {
	var ev evidence
	conf := 0.0
	for _, t := range f.r.Tensors {
		if m := t.Metrics; m != nil && m.SpecialMismatches > 0 && (m.NaNB > m.NaNA || m.InfB > m.InfA) {
			conf = max(conf, 0.9)
			ev.add("%s at %s: %d NaN and %d Inf in the graphed run, %d and %d in the eager run", t.Name, stepName(t.Step), m.NaNB, m.InfB, m.NaNA, m.InfA)
			break
		}
	}
	for _, k := range f.s.steps {
		for _, kind := range kindOrder(f.s.kinds) {
			a, b := f.s.get(f.s.a, k, kind), f.s.get(f.s.b, k, kind)
			ma, _ := maxAbs(a)
			mb, _ := maxAbs(b)
			if ma > 0 && mb > 1e4*ma {
				conf = max(conf, 0.85)
				ev.add("%s at step %d: largest |value| %s in the graphed run, %s in the eager run", kindWord(kind), k, g(mb), g(ma))
				break
			}
		}
	}
	if line := f.smallRegion(); line != "" {
		conf = max(conf, 0.75)
		ev.add("%s", line)
	}
	if f.div != loaders.NoStep && f.div == f.firstStep && f.explained(OutputAliasing, DynamicShape, GradsZeroNotNone, CallablesAccumulation) < 0.6 &&
		needsBaseline(f) == nil { // values read from unwritten memory are unrelated to the eager ones, not a rounding's distance off
		// only dumps that begin at the first training step: where they
		// begin mid-run, a bug that acted on the steps before them (a lag,
		// a stale batch) parts the runs there as well, and the difference
		// alone names neither (the unexplained answer lists them)
		// and only training dumps: an inference run's first dumped batch
		// is already a replay, where whatever was fixed at capture acts
		if f.fromStart() && !f.inference() {
			conf = max(conf, 0.7)
			line := fmt.Sprintf("the runs differ already at step %d, the first step, before any replay-order bug could act", f.div)
			if a, b := f.s.get(f.s.a, f.div, loaders.KindGrad), f.s.get(f.s.b, f.div, loaders.KindGrad); a != nil {
				line += fmt.Sprintf(": gradients' cosine %.3f, norm ratio %s", cosine(a, b), g(norm(b)/norm(a)))
			}
			ev.add("%s", line)
		}
	}
	if conf == 0 {
		return nil
	}
	return &Cause{ID: UninitializedMemory, Confidence: conf, Evidence: ev}
}

// smallRegion: in a run that dumped only what a model put out, an output
// of two or more dimensions that fails at the first divergent step with
// fewer elements beyond its tolerance than one row (its last dimension)
// holds. Each row of a dense layer's output (a sequence's logits) is
// computed from that row's state, so anything that changes what the graph
// reads (an input, a position, a scale) changes whole rows; values that
// differ in less than a row come from memory read element by element — a
// bias or mask buffer read before it was written, or after it was freed.
// It returns the evidence, or "".
func (f *facts) smallRegion() string {
	if f.div == loaders.NoStep || !f.inference() {
		return ""
	}
	for _, t := range f.r.Tensors {
		m := t.Metrics
		if t.Step != f.div || t.Status != judge.StatusMismatch || m == nil || t.A == nil || !t.A.DType.IsFloat() || len(t.A.Shape) < 2 {
			continue
		}
		row := int64(t.A.Shape[len(t.A.Shape)-1])
		if m.Mismatched > 0 && m.Mismatched < row {
			return fmt.Sprintf("%s at step %d: %s beyond rounding, fewer than one row of %d: a row computed from another input differs whole; a region this small is values left in or read from memory (a bias or mask buffer read before it is written, or after it was freed)",
				t.Name, t.Step, fmt.Sprintf("%d %s", m.Mismatched, plural(int(m.Mismatched), "element differs", "elements differ")), row)
		}
	}
	return ""
}
