package loaders

import (
	"slices"
	"sort"
)

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
	less := func(x, y Pair) bool {
		return Less(&Entry{Name: x.Name, Step: x.Step, Kind: x.Kind}, &Entry{Name: y.Name, Step: y.Step, Kind: y.Kind})
	}
	// in order already when b holds nothing a lacks (a's entries are
	// sorted): a check in one pass, where sorting 100,000 pairs took
	// longer than pairing them
	if !slices.IsSortedFunc(pairs, func(x, y Pair) int {
		if less(x, y) {
			return -1
		}
		return 0
	}) {
		sort.SliceStable(pairs, func(i, j int) bool { return less(pairs[i], pairs[j]) })
	}
	return pairs
}
