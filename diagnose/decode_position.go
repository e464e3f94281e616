package diagnose

import (
	"fmt"
	"slices"

	"gonum.org/v1/gonum/mathext"

	"github.com/graphdiff/graphdiff/judge"
	"github.com/graphdiff/graphdiff/loaders"
)

// decodeRun is one decoding's steps as check measured them (the token
// pair's judge.Pair.Decode at each step that was measured), in step
// order.
type decodeRun struct {
	name  string
	steps []int
	at    map[int]*judge.TensorResult
}

// decodeRuns returns the decodings of the comparison, one per token pair
// name, each with the steps from the first divergent one on that carry
// every row's tokens and logits' prints (compare.Decode).
func (f *facts) decodeRuns() []decodeRun {
	byName := map[string]*decodeRun{}
	var names []string
	for _, t := range f.r.Tensors {
		d := t.Decode
		if d == nil || t.A == nil || !t.A.DType.IsInteger() || t.Step == loaders.NoStep || t.Step < f.div ||
			len(d.TokensA) != d.Rows || len(d.TokensB) != d.Rows || len(d.LogitsA) != d.Rows || len(d.LogitsB) != d.Rows {
			continue
		}
		run, ok := byName[t.Name]
		if !ok {
			run = &decodeRun{name: t.Name, at: map[int]*judge.TensorResult{}}
			byName[t.Name] = run
			names = append(names, t.Name)
		}
		if _, dup := run.at[t.Step]; !dup {
			run.steps = append(run.steps, t.Step)
			run.at[t.Step] = t
		}
	}
	slices.Sort(names)
	out := make([]decodeRun, 0, len(names))
	for _, n := range names {
		r := byName[n]
		slices.Sort(r.steps)
		out = append(out, *r)
	}
	return out
}

// sameInputSameOutput counts, in one run of a decoding (b: the compared
// run, else the reference), the pairs of steps s < t of one row, both
// with a measured step before them, whose previous tokens (their inputs,
// in greedy decoding) are equal: how many of those pairs put out logits
// equal bit for bit, and how many such pairs there are; moved counts the
// pairs whose previous tokens differ and whose logits differ too (the
// output is no constant). A step's input is
// taken to be the token of the dumped step before it, as greedy decoding
// dumped at every position has it.
func (d decodeRun) sameInputSameOutput(b bool) (equal, pairs, moved int) {
	tok := func(k int) []int64 {
		if b {
			return d.at[k].Decode.TokensB
		}
		return d.at[k].Decode.TokensA
	}
	out := func(k int) []uint64 {
		if b {
			return d.at[k].Decode.LogitsB
		}
		return d.at[k].Decode.LogitsA
	}
	// steps whose previous dumped step is measured too
	var ks []int
	for i := 1; i < len(d.steps); i++ {
		ks = append(ks, i)
	}
	for x, i := range ks {
		for _, j := range ks[x+1:] {
			s, t := d.steps[i], d.steps[j]
			ps, pt := tok(d.steps[i-1]), tok(d.steps[j-1])
			os, ot := out(s), out(t)
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
		eqB, nB, movedB := d.sameInputSameOutput(true)
		eqA, nA, _ := d.sameInputSameOutput(false)
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

// tokenRepeats counts, in one run of a decoding (b: the compared run),
// the rows of the steps after the first divergent one whose token equals
// the row's token at the dumped step before, and how many rows were
// looked at.
func (d decodeRun) tokenRepeats(b bool, div int) (repeats, n int) {
	for i := 1; i < len(d.steps); i++ {
		if d.steps[i] <= div {
			continue
		}
		now, before := d.at[d.steps[i]].Decode, d.at[d.steps[i-1]].Decode
		x, y := now.TokensA, before.TokensA
		if b {
			x, y = now.TokensB, before.TokensB
		}
		for r := range min(len(x), len(y)) {
			n++
			if x[r] == y[r] {
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
		kB, nB := d.tokenRepeats(true, f.div)
		kA, nA := d.tokenRepeats(false, f.div)
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
