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
