package diagnose

import (
	"math"

	"github.com/graphdiff/graphdiff/loaders"
)

// InputLag is the ID of the cause "data copied after replay, or a pinned-memory race".
const InputLag = "input_lag"

// inputLagCause is what `graphdiff explain input_lag` prints.
var inputLagCause = Explanation{
	ID:    InputLag,
	Title: "data copied after replay, or a pinned-memory race",
	What: `The new batch reaches the static input after the replay that should use it —
copy_ after g.replay(), or an asynchronous host-to-device copy from pinned
memory that is overwritten before it completes — so step k computes on the
batch of step k−1.`,
	Signature: `The graph's step k matches the eager run's step k−1 (loss, outputs and
gradients far closer to the previous eager step than to the same one).`,
	Confirm: `Dump the static input right before each replay; compare with the batch the
step should use.`,
	Fix: `Copy the batch into the static input before g.replay(); when copying from
pinned memory with non_blocking=True, synchronize (or record an event) before
the host buffer is reused.`,
}

// inputLag: graph step k matches eager step k−1 better than eager step k.
//
// Prediction: the graph reads the batch of the step before (the copy into
// the static input happens after the replay), so its step k is eager's
// step k−1: B_k ≈ A_{k−1}, much closer than B_k to A_k.
// Strongly (0.9) when, at two or more diverged steps, the graph is several
// times closer to the previous eager step; moderately (0.65) when it is
// several times closer at the first diverged step that has a dumped step
// before it (the first divergence, or the step after it when the runs
// already differ at their first dumped step) and merely closer at 80% of
// at least three diverged steps (the graph's own parameters drift, so with
// fast-moving weights the match to the previous step loosens); or
// moderately (0.65) when, at every one of at least three diverged steps,
// the eager step nearest the graph's (relative L2, over every dumped
// eager step) is the step before, and a graph unrelated to the eager
// batches would pick it that often by chance with probability
// Π 1/m_k ≤ testSize (m_k the eager steps it could pick at step k):
// the graph's own parameters may have drifted too far for it to be close
// to eager's step before, but no nearer to any other step, while a
// graph that computes on eager's batch (rounding) is nearest its own
// step and a stale one nearest one step throughout. It looks at the
// first maxReadSteps diverged steps, each against every dumped step. The
// same-shaped kinds only: a single loss number is near other steps' by
// chance. The kinds a batch moves are the outputs (in an inference run,
// whatever it dumped), the tapped modules' outputs, the losses and the
// gradients. In
// an inference run, a step after the break whose outputs equal eager's
// of the same step (batchesRead) refutes it: a copy after the replay
// makes every step read the batch before.
func inputLag(f *facts) *Cause {
	if len(f.reads.reads) > 0 && len(f.reads.agreeing) > 0 {
		// a copy after the replay makes every step from the break on read
		// the batch before; at these the graph read its own
		return nil
	}
	best := (*Cause)(nil)
	for _, kind := range append(f.batchKinds(), loaders.KindLoss, loaders.KindGrad) {
		if f.aliased[kind] {
			continue // one buffer's last contents lag behind nothing
		}
		word, notDumped := batchWord(kind), f.missing(loaders.KindOutput, loaders.KindInput)
		if f.inference() {
			notDumped = f.missing(loaders.KindInput) // what it dumped are the outputs
		}
		strong, closer, tried := 0, 0, 0
		firstStrong := false                 // strong at the first step it could be tested at
		nearest, looked, chance := 0, 0, 1.0 // the nearest-step rule, over the first maxReadSteps steps
		var ev evidence
		var fs fitSet
		for _, k := range f.divergedSteps(kind) {
			p, ok := f.s.prev(k)
			a, ap, b := f.s.get(f.s.a, k, kind), f.s.get(f.s.a, p, kind), f.s.get(f.s.b, k, kind)
			if !ok || a == nil || ap == nil || b == nil {
				continue
			}
			tried++
			fs.add(fitOf(a, b, ap)) // the prediction: B[k] = A[k−1]
			lag, same := relL2(ap, b), relL2(a, b)
			if lag < same {
				closer++
			}
			if looked < maxReadSteps {
				looked++
				if j, m := f.nearestEager(kind, b); j == p && len(b) > 1 {
					nearest++
					chance /= float64(m)
				}
			}
			if lag < lagRatio*same {
				strong++
				firstStrong = firstStrong || tried == 1
				if strong <= 3 {
					ev.add("%s at step %d: graph vs eager step %d differ by %s (relative L2), graph vs eager step %d by %s", word, k, p, g(lag), k, g(same))
				}
			}
		}
		switch {
		case strong >= 2 && float64(strong) >= 0.8*float64(tried):
			ev.add("%s", notDumped)
			return fs.set(&Cause{ID: InputLag, Confidence: 0.9, Evidence: ev}, "graph[k] = eager[k−1]", "the "+word+"' difference from eager")
		case best == nil && kind != loaders.KindLoss && firstStrong && tried >= 3 && float64(closer) >= 0.8*float64(tried):
			ev.add("%s: at %d of %d diverged steps the graph is closer to the eager run's previous step than to the same step", word, closer, tried)
			ev.add("%s", notDumped)
			best = fs.set(&Cause{ID: InputLag, Confidence: 0.65, Evidence: ev}, "graph[k] = eager[k−1]", "the "+word+"' difference from eager")
		case best == nil && looked >= 3 && nearest == looked && chance <= testSize:
			ev.add("%s: at each of %d diverged steps the eager step nearest the graph's is the step before (by chance, for a graph unrelated to the eager batches: %s)", word, looked, g(chance))
			ev.add("%s", notDumped)
			best = fs.set(&Cause{ID: InputLag, Confidence: 0.65, Evidence: ev}, "graph[k] = eager[k−1]", "the "+word+"' difference from eager")
		}
	}
	return best
}

// testSize bounds the chance at which a pattern that chance alone could
// make names a cause (input_lag's nearest step, stale_input's loss below
// eager's): a 1% false-alarm level, the usual bound on a test's size.
const testSize = 0.01

// nearestEager returns the dumped eager step whose sample of a kind is
// nearest b (relative L2 to that step's sample), and among how many
// steps it was picked; loaders.NoStep and 0 when none has a finite one.
func (f *facts) nearestEager(kind loaders.Kind, b vec) (int, int) {
	best, bestD, m := loaders.NoStep, math.Inf(1), 0
	for _, j := range f.s.steps {
		a := f.s.get(f.s.a, j, kind)
		if len(a) != len(b) {
			continue
		}
		d := relL2(a, b)
		if !finite(d) {
			continue
		}
		m++
		if d < bestD {
			best, bestD = j, d
		}
	}
	return best, m
}
