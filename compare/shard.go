package compare

import (
	"errors"
	"fmt"
	"hash/fnv"
	"sort"
	"strconv"
	"strings"

	"github.com/graphdiff/graphdiff/loaders"
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
	return sh, sh.check()
}

func (s Shard) check() error {
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
	h.Write([]byte(stepName(step) + "/"))
	h.Write([]byte(name))
	return int(h.Sum64()%uint64(s.Count)) == s.Index-1
}

func stepName(step int) string {
	if step == loaders.NoStep {
		return "-"
	}
	return strconv.Itoa(step)
}

// reportsDiscovery reports whether the shard carries the errors of
// discovery, which belong to no pair.
func (s Shard) reportsDiscovery() bool { return s.Count == 0 || s.Index == 1 }

// Merge combines the results of every shard of one comparison into the
// result an unsharded comparison gives: the same pairs in the same order,
// the same errors, verdict and first divergence. The parts may come in any
// order; Merge fails when they are not the shards of one comparison (runs,
// shard count or compute dtype differ) or when a shard is missing or given
// twice, so that no pair is silently left out.
func Merge(parts []*Result) (*Result, error) {
	if len(parts) == 0 {
		return nil, errors.New("no shard results to merge")
	}
	first := parts[0]
	count := first.Shard.Count
	if count == 0 {
		count = 1
	}
	seen := make([]bool, count+1)
	res := &Result{A: first.A, B: first.B, ComputeDType: first.ComputeDType}
	for _, p := range parts {
		switch {
		case p.A != first.A || p.B != first.B:
			return nil, fmt.Errorf("shard %s compares %s with %s, shard %s %s with %s",
				p.Shard, p.A, p.B, first.Shard, first.A, first.B)
		case max(p.Shard.Count, 1) != count:
			return nil, fmt.Errorf("shard %s is one of %d, shard %s one of %d", p.Shard, max(p.Shard.Count, 1), first.Shard, count)
		case p.ComputeDType != first.ComputeDType:
			return nil, fmt.Errorf("shard %s assumed compute dtype %s, shard %s %s",
				p.Shard, p.ComputeDType, first.Shard, first.ComputeDType)
		case p.StoppedAfterStep != nil:
			return nil, fmt.Errorf("shard %s stopped early (--fail-fast): its later steps were not compared", p.Shard)
		}
		i := max(p.Shard.Index, 1)
		if seen[i] {
			return nil, fmt.Errorf("shard %d/%d given twice", i, count)
		}
		seen[i] = true
		res.Tensors = append(res.Tensors, p.Tensors...)
		res.Ignored = append(res.Ignored, p.Ignored...)
		res.NotCompared += p.NotCompared
		res.Errors = append(res.Errors, p.Errors...)
	}
	var missing []string
	for i := 1; i <= count; i++ {
		if !seen[i] {
			missing = append(missing, fmt.Sprintf("%d/%d", i, count))
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("missing shard %s: its pairs would go unreported", strings.Join(missing, ", "))
	}
	sortPairs(res.Tensors)
	sortPairs(res.Ignored)
	if dup := duplicatePair(res.Tensors); dup != nil {
		return nil, fmt.Errorf("pair %s (step %s) is in two shards: were the shards made from different dumps?",
			dup.Name, stepName(dup.Step))
	}
	res.finish()
	return res, nil
}

// sortPairs orders pairs like loaders.PairRuns does: step (step-less
// first), kind rank, name.
func sortPairs(ts []*TensorResult) {
	sort.SliceStable(ts, func(i, j int) bool {
		x, y := ts[i], ts[j]
		return loaders.Less(&loaders.Entry{Name: x.Name, Step: x.Step, Kind: x.Kind},
			&loaders.Entry{Name: y.Name, Step: y.Step, Kind: y.Kind})
	})
}

// duplicatePair returns a pair that occurs twice in sorted ts, nil if none.
func duplicatePair(ts []*TensorResult) *TensorResult {
	for i := 1; i < len(ts); i++ {
		if ts[i].Step == ts[i-1].Step && ts[i].Name == ts[i-1].Name {
			return ts[i]
		}
	}
	return nil
}
