package check

import (
	"path"
	"slices"
	"strings"

	"github.com/graphdiff/graphdiff/compare"
	"github.com/graphdiff/graphdiff/judge"
	"github.com/graphdiff/graphdiff/loaders"
)

// decodePair is a decoding step's token pair and its logits pair, by
// position in the step's members, with their layout (decodeShapes).
type decodePair struct{ tok, logits, width, positions int }

// decodePairs finds, among the compared pairs of a step (members ms,
// pairs by position), each token pair with its logits, both outputs or
// tensors of no kind word (decoded): an integer pair
// of shape S and a real floating-point pair in the same directory of the
// name (path.Dir) of shape S×V, V ≥ 2, dimensions of size 1 aside
// (decodeShapes), both C-ordered in both runs. A
// token pair with several such logits takes the one whose name holds
// "logit", else none.
func (st *stepper) decodePairs(ms []member, pairs []judge.Pair) []decodePair {
	var out []decodePair
	for k, t := range pairs {
		if t.Metrics == nil || !decoded(t.Kind) || !t.A.DType.IsInteger() || !t.B.DType.IsInteger() || !cOrder(st.entries[ms[k].i]) {
			continue
		}
		dir, shape := path.Dir(t.Name), t.A.Shape
		var cands []int
		for j, l := range pairs {
			if j == k || l.Metrics == nil || !decoded(l.Kind) || !l.A.DType.IsFloat() || !l.B.DType.IsFloat() || l.A.DType.Components() != 1 ||
				l.B.DType.Components() != 1 || path.Dir(l.Name) != dir || !cOrder(st.entries[ms[j].i]) {
				continue
			}
			if _, _, ok := decodeShapes(shape, l.A.Shape); ok && slices.Equal(l.B.Shape, l.A.Shape) && slices.Equal(t.B.Shape, shape) {
				cands = append(cands, j)
			}
		}
		if len(cands) > 1 {
			cands = slices.DeleteFunc(cands, func(j int) bool { return !strings.Contains(strings.ToLower(path.Base(pairs[j].Name)), "logit") })
		}
		if len(cands) == 1 {
			w, p, _ := decodeShapes(shape, pairs[cands[0]].A.Shape)
			out = append(out, decodePair{k, cands[0], w, p})
		}
	}
	return out
}

// decodingGroups returns, for each pair that may be a decoding step's
// tokens or logits, the directory of its name: every pair decodePairs
// could pair, and more (the order of storage, several candidate logits
// and a pair that could not be compared are decided later). It reads the
// entries' dtypes and shapes, which a shard has from every file's header
// (Check reads them first when sharded); an entry not read is no
// candidate.
func decodingGroups(pairs []loaders.Pair) map[pairKey]string {
	type at struct {
		step int
		dir  string
	}
	tokens := map[at][]loaders.Pair{}
	logits := map[at][]loaders.Pair{}
	for _, p := range pairs {
		if !decoded(p.Kind) || p.A == nil || p.B == nil || p.A.Deferred() || p.B.Deferred() {
			continue
		}
		k := at{p.Step, path.Dir(p.Name)}
		switch {
		case p.A.DType.IsInteger() && p.B.DType.IsInteger() && slices.Equal(p.A.Shape, p.B.Shape):
			tokens[k] = append(tokens[k], p)
		case p.A.DType.IsFloat() && p.B.DType.IsFloat() && len(p.A.Shape) >= 1 && slices.Equal(p.A.Shape, p.B.Shape):
			logits[k] = append(logits[k], p)
		}
	}
	out := map[pairKey]string{}
	for k, ts := range tokens {
		for _, t := range ts {
			for _, l := range logits[k] {
				if _, _, ok := decodeShapes(t.A.Shape, l.A.Shape); ok {
					out[pairKey{t.Step, t.Name}] = k.dir
					out[pairKey{l.Step, l.Name}] = k.dir
				}
			}
		}
	}
	return out
}

// decodeShapes reports whether tokens of shape tok and logits of shape lg
// are one decoding step, and how many tokens each row holds (width): lg
// is the tokens' rows times a vocabulary V ≥ 2 (its last dimension), the
// dimensions of size 1 of either left out (tokens [B] beside logits
// [B, 1, V], as a causal LM's decode step gives them, or [B, 1] beside
// [B, V]): width 1; or the tokens hold each row's sequence so far, the
// step's token last ([B, t] beside [B, V], the generated ids dumped
// whole): width t; or one token per row beside every position's logits
// ([B] beside [B, T, V], a forward without a cache), the step's the last
// position's: positions T. Both stored in C order, row r of the tokens is
// then row r of the logits read as [rows, positions, V].
func decodeShapes(tok, lg []int) (width, positions int, ok bool) {
	if len(lg) == 0 || lg[len(lg)-1] < 2 {
		return 0, 0, false
	}
	squeeze := func(s []int) []int { return slices.DeleteFunc(slices.Clone(s), func(n int) bool { return n == 1 }) }
	rows := squeeze(lg[:len(lg)-1])
	switch n := len(lg); {
	case slices.Equal(squeeze(tok), rows):
		return 1, 1, true
	case len(tok) >= 1 && tok[len(tok)-1] >= 2 && slices.Equal(squeeze(tok[:len(tok)-1]), rows):
		return tok[len(tok)-1], 1, true
	case n >= 2 && lg[n-2] >= 2 && slices.Equal(squeeze(tok), squeeze(lg[:n-2])):
		return 1, lg[n-2], true // a whole sequence's logits, [B, T, V], beside one token per row
	}
	return 0, 0, false
}

// decoded reports whether tensors of kind k may be a decoding step's
// tokens or logits: what a model put out (outputs, or tensors of no kind
// word). Inputs are what the graph read — a token that differs there is
// a stale or lagging input, never a near tie — and losses, gradients and
// parameters are no decoding.
func decoded(k loaders.Kind) bool { return k == loaders.KindOutput || k == loaders.KindTensor }

// cOrder reports whether both sides of a pair are stored in C order.
func cOrder(e pairEntries) bool {
	return e.a != nil && e.b != nil && !e.a.FortranOrder && !e.b.FortranOrder
}

// measureDecodes measures each decoding step of the step's pairs (its
// tokens against its logits, the sequences that parted before left out:
// st.parted) and sets both pairs' Decode; a step that cannot be measured
// keeps its pairs' own metrics. A step whose tokens are equal, whose
// sequences never parted and whose logits hold no mask
// (compare.HasMasks) is not read again: measured, it would say what the
// pairs' own metrics say.
func (st *stepper) measureDecodes(ms []member, pairs []judge.Pair) []decodePair {
	dps := st.decodePairs(ms, pairs)
	for _, dp := range dps {
		t, l := &pairs[dp.tok], &pairs[dp.logits]
		parted := st.parted[t.Name]
		et, el := st.entries[ms[dp.tok].i], st.entries[ms[dp.logits].i]
		if t.Metrics.Mismatched == 0 && !slices.Contains(parted, true) && !compare.HasMasks(l.Metrics, el.a.DType) {
			continue
		}
		d, err := compare.MeasureDecode(compare.DecodeJob{TokA: et.a.Tensor, TokB: et.b.Tensor, LogA: el.a.Tensor, LogB: el.b.Tensor,
			Width: dp.width, Positions: dp.positions, Parted: parted, Tolerance: l.Settings.Tolerance})
		if err != nil {
			continue
		}
		t.Decode, l.Decode = d, d
		if d.Selective() && l.A.DType.IsFloat() {
			l.Metrics = d.LogitsMetrics(l.Metrics) // the numbers its verdict reads, and the report shows
		}
	}
	return dps
}

// partSequences records, after a step was judged, the rows whose tokens
// flipped by a near tie (a token pair that passed with flips): from the
// next step on their sequences follow other prefixes and are left out.
func (st *stepper) partSequences(dps []decodePair, pairs []judge.Pair, ds []judge.Decision) {
	for _, dp := range dps {
		t := &pairs[dp.tok]
		if t.Decode == nil || len(t.Decode.Flips) == 0 || ds[dp.tok].Status != judge.StatusMatch {
			continue
		}
		parted := st.parted[t.Name]
		if parted == nil {
			parted = make([]bool, t.Decode.Rows)
		}
		for _, f := range t.Decode.Flips {
			parted[f.Row] = true
		}
		st.parted[t.Name] = parted
	}
}

// unmask measures again, without their masks, the floating-point pairs of
// the step whose reference norm says they hold some (compare.HasMasks:
// torch.finfo(dtype).min fills) and that no decoding measured so: their
// Metrics become those over the other elements, Masked the masks left
// out. compare.Unmasked reads both sides in storage order, so a pair
// stored in two orders (C and Fortran), or one that cannot be read
// again, keeps its metrics.
func (st *stepper) unmask(ms []member, pairs []judge.Pair) {
	for k := range pairs {
		p := &pairs[k]
		e := st.entries[ms[k].i]
		if p.Decode != nil || e.a == nil || e.b == nil || e.a.DType != e.b.DType || e.a.FortranOrder != e.b.FortranOrder ||
			!compare.HasMasks(p.Metrics, e.a.DType) {
			continue
		}
		m, masked, err := compare.Unmasked(e.a.Tensor, e.b.Tensor, p.Settings.Tolerance, p.Metrics)
		if err == nil && masked > 0 {
			p.Metrics, p.Masked = m, masked
		}
	}
}
