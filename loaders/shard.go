package loaders

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
)

// Shard selects a deterministic part of a comparison's pairs: shard Index of
// Count (1 ≤ Index ≤ Count). The zero Shard selects every pair.
//
// A pair belongs to shard 1 + FNV-1a-64("STEP/NAME") mod Count, where STEP
// is the decimal step ("-" outside any step): the split depends only on the
// pairs' names and steps, so every shard of the same two runs agrees on it
// whatever machine computes it, and all shards together hold every pair
// exactly once. Pairs are spread by count, not by size. Inputs that could
// not be read during discovery (they belong to no pair) are reported by
// shard 1 only.
type Shard struct {
	Index, Count int
}

// ParseShard parses "I/N" (e.g. "2/8").
func ParseShard(s string) (Shard, error) {
	i, n, ok := strings.Cut(s, "/")
	index, err1 := strconv.Atoi(i)
	count, err2 := strconv.Atoi(n)
	if !ok || err1 != nil || err2 != nil {
		return Shard{}, fmt.Errorf("shard %q: want I/N, e.g. 2/8", s)
	}
	sh := Shard{Index: index, Count: count}
	return sh, sh.Check()
}

// Check returns an error for a shard outside 1 ≤ Index ≤ Count.
func (s Shard) Check() error {
	if s.Count < 1 || s.Index < 1 || s.Index > s.Count {
		return fmt.Errorf("shard %d/%d: want 1 ≤ I ≤ N", s.Index, s.Count)
	}
	return nil
}

// String returns "I/N", or "" for the zero Shard.
func (s Shard) String() string {
	if s.Count == 0 {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.Index, s.Count)
}

// Holds reports whether the pair (step, name) belongs to the shard.
func (s Shard) Holds(step int, name string) bool {
	if s.Count <= 1 {
		return true
	}
	h := fnv.New64a()
	h.Write([]byte(StepString(step) + "/"))
	h.Write([]byte(name))
	return int(h.Sum64()%uint64(s.Count)) == s.Index-1
}

// StepString returns a step in decimal, "-" for NoStep.
func StepString(step int) string {
	if step == NoStep {
		return "-"
	}
	return strconv.Itoa(step)
}

// ReportsDiscovery reports whether the shard carries the errors of
// discovery, which belong to no pair: the whole comparison, or shard 1.
func (s Shard) ReportsDiscovery() bool { return s.Count == 0 || s.Index == 1 }
