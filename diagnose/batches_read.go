package diagnose

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/graphdiff/graphdiff/judge"
	"github.com/graphdiff/graphdiff/loaders"
)

// batchRead is, at one diverged step of a run that dumped only what a
// model put out, the dumped eager step whose outputs the graph's equal.
type batchRead struct {
	step, read int // read is loaders.NoStep where no eager step's equal them
	// dist is relL2(A[read], B[step]), limit the relative L2 limit the
	// verdict held the step's pairs of the kind to
	dist, limit float64
}

// readsFinding is what batchesRead found, taken once before the
// detectors run (facts.reads): the kind looked at, the reads of the
// diverged steps, and the steps after the break that read their own
// batch.
type readsFinding struct {
	kind     loaders.Kind
	reads    []batchRead
	agreeing []int
}

// maxReadSteps is how many diverged steps batchesRead looks at, from the
// first: the read a bug makes shows from the break on, and looking at
// every step of a long run would cost a pass over all dumped steps each.
const maxReadSteps = 16

// batchesRead looks, in a run that dumped only what a model put out
// (f.inference: no loss, gradients or parameters, so no state carried
// from one batch to the next and each output a function of its batch
// alone), for the batch the graph computed on: at each diverged step k of
// the first batch kind sampled, the dumped eager step j ≠ k whose outputs
// the graph's equal within the relative L2 limit the verdict applied to
// the step's pairs, eager's outputs at j and k themselves further apart
// than that (else equality tells nothing). Such an equality is no
// rounding's: the graph read batch j's input at step k. It also returns
// the steps after the first divergent one at which every pair of the
// kind matched while eager's outputs moved from the step before: steps
// the graph computed on its own batch. Nothing outside inference. At
// most maxReadSteps diverged steps are looked at, and an eager step is
// compared with a diverged one only where their norms allow a match
// (‖B − A‖ ≥ |‖B‖ − ‖A‖|, so a relative difference within the limit
// needs |‖B‖ − ‖A‖| ≤ limit·‖A‖), which keeps the search near one pass
// over the steps.
func (f *facts) batchesRead() (found readsFinding) {
	if !f.inference() || f.div == loaders.NoStep {
		return found
	}
	kinds := f.batchKinds()
	i := slices.IndexFunc(kinds, func(k loaders.Kind) bool { return f.s.kinds[k] })
	if i < 0 {
		return found
	}
	kind := kinds[i]
	found.kind = kind
	limits, failed := map[int]float64{}, map[int]bool{}
	for _, t := range f.r.Tensors {
		if t.Kind != kind || t.Step == loaders.NoStep {
			continue
		}
		if t.Failed() {
			failed[t.Step] = true
		}
		if t.Rule == judge.RuleRelL2 && t.Limit > limits[t.Step] {
			limits[t.Step] = t.Limit
		}
	}
	norms := map[int]float64{} // eager's; NaN where a value is not finite
	for _, j := range f.s.steps {
		if a := f.s.get(f.s.a, j, kind); a != nil {
			norms[j] = math.NaN()
			if allFinite(a) {
				norms[j] = norm(a)
			}
		}
	}
	for _, k := range f.s.steps {
		b, limit := f.s.get(f.s.b, k, kind), limits[k]
		if k < f.div || b == nil || !(limit > 0) {
			continue
		}
		a := f.s.get(f.s.a, k, kind)
		if !failed[k] {
			if p, ok := f.s.prev(k); ok && k > f.div && relL2(f.s.get(f.s.a, p, kind), a) > limit {
				found.agreeing = append(found.agreeing, k)
			}
			continue
		}
		if len(found.reads) == maxReadSteps {
			continue // (the steps that agree are still counted)
		}
		r := batchRead{step: k, read: loaders.NoStep, limit: limit}
		nb := math.NaN()
		if allFinite(b) {
			nb = norm(b)
		}
		for _, j := range f.s.steps {
			aj := f.s.get(f.s.a, j, kind)
			if j == k || len(aj) != len(b) {
				continue
			}
			if na := norms[j]; !math.IsNaN(na) && !math.IsNaN(nb) && math.Abs(nb-na) > limit*na {
				continue // too far apart in norm to match
			}
			if !(relL2(a, aj) > limit) {
				continue
			}
			if d := relL2(aj, b); d <= limit && (r.read == loaders.NoStep || d < r.dist) {
				r.read, r.dist = j, d
			}
		}
		found.reads = append(found.reads, r)
	}
	return found
}

// everyRead reports whether each diverged step read another batch, and
// lagOnly whether each read the batch of the step before it.
func (f *facts) everyRead(reads []batchRead) (every, lagOnly bool) {
	every, lagOnly = len(reads) > 0, len(reads) > 0
	for _, r := range reads {
		if r.read == loaders.NoStep {
			return false, false
		}
		if p, ok := f.s.prev(r.step); !ok || p != r.read {
			lagOnly = false
		}
	}
	return every, lagOnly
}

// readsEvidence says which batch the graph read at each diverged step
// (at most four), and at which steps after the break it read its own.
func readsEvidence(found readsFinding) []string {
	at := make([]string, len(found.reads))
	for i, r := range found.reads {
		at[i] = fmt.Sprintf("at step %d eager's of step %d (relative L2 %s, within %s)", r.step, r.read, g(r.dist), g(r.limit))
	}
	lines := []string{fmt.Sprintf("the graphed %s are, %s: outputs that equal another step's to within rounding come from that step's computation, so the graph computed on those steps' inputs", batchWord(found.kind), listMore(at, 4))}
	if len(found.agreeing) > 0 {
		steps := make([]string, len(found.agreeing))
		for i, k := range found.agreeing {
			steps[i] = fmt.Sprint(k)
		}
		lines = append(lines, fmt.Sprintf("at steps %s, after the break, they equal eager's of the same step, which moved from the step before: the graph read its own batch there", listMore(steps, 4)))
	}
	return lines
}

// listMore lists the first n items and how many more there are, as "a, b,
// and 3 more" (list, the other detectors' form, has no comma before the
// "and"; each keeps the wording its reports have had).
func listMore(items []string, n int) string {
	if len(items) > n {
		items = append(items[:n:n], fmt.Sprintf("and %d more", len(items)-n))
	}
	return strings.Join(items, ", ")
}
