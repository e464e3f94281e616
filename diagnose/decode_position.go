package diagnose

import (
	"fmt"
	"maps"
	"slices"

	"gonum.org/v1/gonum/mathext"

	"github.com/graphdiff/graphdiff/compare"
	"github.com/graphdiff/graphdiff/judge"
	"github.com/graphdiff/graphdiff/loaders"
)

// decodeRun is one decoding's steps from the first divergent one on, as
// check measured them (the token pair's judge.Pair.Decode), in step
// order: by run (runA, runB) and step, every row's token and its
// logits' fingerprint (compare.RowPrint).
type decodeRun struct {
	name   string
	steps  []int
	tokens [2][][]int64
	prints [2][][]uint64
}

// The runs a decodeRun holds: A the reference, B the compared one.
const (
	runA = 0
	runB = 1
)

// decodeRuns returns the decodings of the comparison, one per token pair
// name, in name order.
func (f *facts) decodeRuns() []decodeRun {
	byName := map[string]map[int]*compare.Decode{}
	for _, t := range f.r.Tensors {
		if t.Decode == nil || t.A == nil || !t.A.DType.IsInteger() || t.Step == loaders.NoStep || t.Step < f.div {
			continue
		}
		if byName[t.Name] == nil {
			byName[t.Name] = map[int]*compare.Decode{}
		}
		byName[t.Name][t.Step] = t.Decode
	}
	var out []decodeRun
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		d := decodeRun{name: name, steps: slices.Sorted(maps.Keys(byName[name]))}
		for _, k := range d.steps {
			m := byName[name][k]
			d.tokens[runA], d.tokens[runB] = append(d.tokens[runA], m.TokensA), append(d.tokens[runB], m.TokensB)
			d.prints[runA], d.prints[runB] = append(d.prints[runA], m.LogitsA), append(d.prints[runB], m.LogitsB)
		}
		out = append(out, d)
	}
	return out
}

// sameInputSameOutput counts, in one run of a decoding, the pairs of
// steps s < t of one row, each with a measured step before it, whose
// previous tokens (their inputs, in greedy decoding) are equal: how many
// of those pairs put out logits equal bit for bit, and how many such
// pairs there are; moved counts the pairs whose previous tokens differ
// and whose logits differ too (the output is no constant). A step's input
// is taken to be the token of the dumped step before it, as greedy
// decoding dumped at every position has it.
func (d decodeRun) sameInputSameOutput(run int) (equal, pairs, moved int) {
	tok, out := d.tokens[run], d.prints[run]
	for i := 1; i < len(d.steps); i++ {
		for j := i + 1; j < len(d.steps); j++ {
			ps, pt, os, ot := tok[i-1], tok[j-1], out[i], out[j]
			for r := range min(len(ps), len(pt), len(os), len(ot)) {
				switch {
				case ps[r] == pt[r]:
					pairs++
					if os[r] == ot[r] {
						equal++
					}
				case os[r] != ot[r]:
					moved++
				}
			}
		}
	}
	return equal, pairs, moved
}

// decodePosition: a position or step counter frozen at capture in a
// decoding step. Its prediction: each replay reads the cache and position
// of the capture step and its input token alone changes, so the graphed
// run's logits are a function of its previous token: at any two steps
// whose previous tokens are equal in a row, that row's logits are equal
// bit for bit. A correct decoding (the eager run) moves on: equal inputs
// at two positions give other logits. The prediction fits when at least
// two such pairs of steps exist in the graphed run and every one puts out
// equal logits, while its logits do change where its previous tokens
// differ (values that never change, output_aliasing, repeat for any
// input) and no pair of the eager run puts out equal logits. A stale input token
// (stale_input) predicts the opposite: one input at every step, logits
// that differ with the position.
func decodePosition(f *facts) *Cause {
	if f.explained(OutputAliasing) >= 0.6 {
		return nil // values that never change repeat for any input
	}
	for _, d := range f.decodeRuns() {
		eqB, nB, movedB := d.sameInputSameOutput(runB)
		eqA, nA, _ := d.sameInputSameOutput(runA)
		if nB < 2 || eqB != nB || movedB == 0 || eqA > 0 {
			continue
		}
		var ev evidence
		ev.add("%s: in the graphed run, every two steps from %d on whose previous tokens are equal in a row put out that row's logits equal bit for bit (%d of %d such pairs of steps): each replay's output depends on its input token alone, as if the position (or step counter) it reads were fixed at capture", d.name, f.div, eqB, nB)
		if nA > 0 {
			ev.add("in the eager run, %d such pairs of steps put out other logits, as a decoding that moves on does", nA)
		}
		ev.add("not dumped, and would decide it: the position or cache index the graphed step read at two replays")
		return &Cause{ID: CapturedScalar, Confidence: 0.9, Evidence: ev}
	}
	return nil
}

// tokenRepeats counts, in one run of a decoding, the rows of the steps
// after the first divergent one whose token equals the row's token at the
// dumped step before, and how many rows were looked at.
func (d decodeRun) tokenRepeats(run, div int) (repeats, n int) {
	tok := d.tokens[run]
	for i := 1; i < len(d.steps); i++ {
		if d.steps[i] <= div {
			continue
		}
		for r := range min(len(tok[i]), len(tok[i-1])) {
			n++
			if tok[i][r] == tok[i-1][r] {
				repeats++
			}
		}
	}
	return repeats, n
}

// decodeRepeats: a decoding fed one input token at every step (an input
// rebound instead of copied) repeats itself: its greedy token equals the
// step before's far more often than the reference run's. The prediction
// fits where, over the rows of the steps after the first divergent one,
// the compared run repeats k of n times and a run repeating at the
// reference's rate p = (k_A + 1)/(n_A + 2) would do so with probability
// Pr[Binomial(n, p) ≥ k] < StateChance (the same 10⁻⁶ as a state fit's).
// It returns the evidence, or "" where the prediction does not fit.
func (f *facts) decodeRepeats() string {
	for _, d := range f.decodeRuns() {
		kB, nB := d.tokenRepeats(runB, f.div)
		kA, nA := d.tokenRepeats(runA, f.div)
		if nB == 0 || kB == 0 {
			continue
		}
		p := float64(kA+1) / float64(nA+2)
		// Pr[Binomial(n, p) ≥ k] = I_p(k, n − k + 1), the regularized
		// incomplete beta function, exact in the far tail
		chance := mathext.RegIncBeta(float64(kB), float64(nB-kB+1), p)
		if chance < judge.StateChance && float64(kB)/float64(nB) > p {
			return fmt.Sprintf("%s: the graphed run's greedy token repeats the step before's in %d of %d rows after step %d, the eager run's in %d of %d (at the eager rate, %s by chance): fed one token, a decoder repeats itself",
				d.name, kB, nB, f.div, kA, nA, g(chance))
		}
	}
	return ""
}
