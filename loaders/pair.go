package loaders

import "sort"

// Pair is a tensor of two runs matched by name and step. A is nil when the
// tensor is only in the second run (extra), B when it is only in the first
// (missing).
type Pair struct {
	Name string
	Step int
	Kind Kind
	A, B *Entry
}

// PairRuns matches the entries of two runs by name and step. Every entry of
// either run is in exactly one pair; pairs are ordered like entries (step,
// kind rank, name). The kind of a pair is the first run's, or the second's
// when the first lacks the tensor.
func PairRuns(a, b *Run) []Pair {
	if pairs, ok := mergePairs(a.Entries, b.Entries); ok {
		return pairs
	}
	return pairByName(a, b)
}

// mergePairs is PairRuns in one pass over the two runs' entries, each in
// strictly ascending order (Less) as a load leaves them: entries of the
// same step, kind rank and name are a pair, the others are missing or
// extra, in order already: faster than pairing through a map of names,
// which misses the cache once per entry (bench/README.md). ok is false where the result might differ from pairByName's: an
// input not in strict order, or a tensor missing from one run whose step
// and name the other run has under a kind of another rank (a manifest can
// set a tensor's kind).
func mergePairs(as, bs []*Entry) (pairs []Pair, ok bool) {
	if !inOrder(as) || !inOrder(bs) {
		return nil, false
	}
	pairs = make([]Pair, 0, max(len(as), len(bs)))
	var loneA, loneB []*Entry
	i, j := 0, 0
	for i < len(as) || j < len(bs) {
		switch {
		case j == len(bs) || i < len(as) && Less(as[i], bs[j]):
			e := as[i]
			pairs = append(pairs, Pair{Name: e.Name, Step: e.Step, Kind: e.Kind, A: e})
			loneA = append(loneA, e)
			i++
		case i == len(as) || Less(bs[j], as[i]):
			e := bs[j]
			pairs = append(pairs, Pair{Name: e.Name, Step: e.Step, Kind: e.Kind, B: e})
			loneB = append(loneB, e)
			j++
		default: // same step, kind rank and name
			e := as[i]
			pairs = append(pairs, Pair{Name: e.Name, Step: e.Step, Kind: e.Kind, A: e, B: bs[j]})
			i++
			j++
		}
	}
	if len(loneA) > 0 && len(loneB) > 0 {
		names := make(map[stepName]bool, len(loneA))
		for _, e := range loneA {
			names[stepName{e.Step, e.Name}] = true
		}
		for _, e := range loneB {
			if names[stepName{e.Step, e.Name}] {
				return nil, false
			}
		}
	}
	return pairs, true
}

// pairByName is PairRuns through a map of the first run's names and steps,
// for entries in any order.
func pairByName(a, b *Run) []Pair {
	byKey := make(map[stepName]int, len(a.Entries))
	pairs := make([]Pair, 0, len(a.Entries))
	for _, e := range a.Entries {
		byKey[stepName{e.Step, e.Name}] = len(pairs)
		pairs = append(pairs, Pair{Name: e.Name, Step: e.Step, Kind: e.Kind, A: e})
	}
	for _, e := range b.Entries {
		if i, ok := byKey[stepName{e.Step, e.Name}]; ok {
			pairs[i].B = e
			continue
		}
		pairs = append(pairs, Pair{Name: e.Name, Step: e.Step, Kind: e.Kind, B: e})
	}
	sort.SliceStable(pairs, func(i, j int) bool {
		x, y := pairs[i], pairs[j]
		return Less(&Entry{Name: x.Name, Step: x.Step, Kind: x.Kind}, &Entry{Name: y.Name, Step: y.Step, Kind: y.Kind})
	})
	return pairs
}
