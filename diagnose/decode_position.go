package diagnose

import (
	"slices"

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
// equal bit for bit, and how many such pairs there are. A step's input is
// taken to be the token of the dumped step before it, as greedy decoding
// dumped at every position has it.
func (d decodeRun) sameInputSameOutput(b bool) (equal, pairs int) {
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
				if ps[r] == pt[r] {
					pairs++
					if os[r] == ot[r] {
						equal++
					}
				}
			}
		}
	}
	return equal, pairs
}

// decodePosition: a position or step counter frozen at capture in a
// decoding step. Its prediction: each replay reads the cache and position
// of the capture step and its input token alone changes, so the graphed
// run's logits are a function of its previous token: at any two steps
// whose previous tokens are equal in a row, that row's logits are equal
// bit for bit. A correct decoding (the eager run) moves on: equal inputs
// at two positions give other logits. The prediction fits when at least
// two such pairs of steps exist in the graphed run and every one puts out
// equal logits, while no pair of the eager run does. A stale input token
// (stale_input) predicts the opposite: one input at every step, logits
// that differ with the position.
func decodePosition(f *facts) *Cause {
	for _, d := range f.decodeRuns() {
		eqB, nB := d.sameInputSameOutput(true)
		eqA, nA := d.sameInputSameOutput(false)
		if nB < 2 || eqB != nB || eqA > 0 {
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
