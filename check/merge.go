package check

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/graphdiff/graphdiff/diagnose"
	"github.com/graphdiff/graphdiff/judge"
	"github.com/graphdiff/graphdiff/loaders"
)

// Merge combines the results of every shard of one comparison (read back
// from their JSON reports) into the comparison an unsharded check gives:
// the same pairs in the same order, the same errors, verdict and first
// divergence, and the likely causes and loss-curve analysis recomputed
// over all pairs. For those it loads the two runs again at the paths the
// results name; when it cannot, warning says why, and the causes come
// from the metrics alone, with no curve analysis. The parts are not
// modified.
//
// Merge fails when the parts are not the shards of one comparison (runs,
// shard count or compute dtype differ) or when a shard is missing or given
// twice, so that no pair is silently left out.
func Merge(parts []*judge.Result, strict bool, lo loaders.Options) (c *Comparison, warning, err error) {
	merged, err := mergeResults(parts)
	if err != nil {
		return nil, nil, err
	}
	a, b, pairs, err := reattach(merged, lo)
	if err != nil {
		return finish(merged, nil, diagnose.Heads{}, nil, strict), err, nil
	}
	withEntries := &compared{result: merged, pairs: pairs}
	plan, heads := withEntries.heads()
	return finish(merged, plan, heads, runCurves(a, b, lo, merged.ComputeDType, merged.ModelDType), strict), nil, nil
}

// maxShards is the most shards a merge takes (the report reader refuses
// more).
const maxShards = 1 << 16

// mergeResults combines the shards' results: copies of their pairs, in
// the unsharded order, and the verdict and first divergence of them all.
func mergeResults(parts []*judge.Result) (*judge.Result, error) {
	if len(parts) == 0 {
		return nil, errors.New("no shard results to merge")
	}
	first := parts[0]
	count := first.Shard.Count
	if count == 0 {
		count = 1
	}
	if count < 1 || count > maxShards {
		return nil, fmt.Errorf("shard %s: a comparison in %d shards", first.Shard, count)
	}
	seen := make([]bool, count+1)
	res := &judge.Result{A: first.A, B: first.B, ComputeDType: first.ComputeDType, ModelDType: first.ModelDType, Rules: first.Rules}
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
		case p.ModelDType != first.ModelDType || p.Rules != first.Rules:
			return nil, fmt.Errorf("shard %s was judged with model dtype %s and rules %+v, shard %s with %s and %+v",
				p.Shard, p.ModelDType, p.Rules, first.Shard, first.ModelDType, first.Rules)
		case p.StoppedAfterStep != nil:
			return nil, fmt.Errorf("shard %s stopped early (--fail-fast): its later steps were not compared", p.Shard)
		}
		i := max(p.Shard.Index, 1)
		if i > count {
			return nil, fmt.Errorf("shard %s: index beyond the count", p.Shard)
		}
		if seen[i] {
			return nil, fmt.Errorf("shard %d/%d given twice", i, count)
		}
		seen[i] = true
		res.Tensors = append(res.Tensors, copies(p.Tensors)...)
		res.Ignored = append(res.Ignored, copies(p.Ignored)...)
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
			dup.Name, loaders.StepString(dup.Step))
	}
	rejudge(res)
	res.Verdict, res.FirstDivergence = judge.Run(res.Tensors, res.Errors)
	res.CheckSomethingCompared(fmt.Sprintf("the %s hold %s, %s ignored", plural(len(parts), "shard report"),
		plural(len(res.Tensors), "pair"), plural(len(res.Ignored), "pair")))
	return res, nil
}

// rejudge judges the merged pairs step by step with every shard's pairs
// in hand, as the unsharded comparison does: a shard judged its pairs with
// the facts of its own part of each step only.
func rejudge(res *judge.Result) {
	ctx := judge.NewContext(res.ComputeDType, res.ModelDType, res.Rules)
	var judged []*judge.TensorResult
	for _, t := range res.Tensors {
		if t.Metrics == nil || (t.Status != judge.StatusMatch && t.Status != judge.StatusMismatch && t.Status != judge.StatusDTypeMismatch) {
			continue
		}
		t.Status, t.Reasons = "", nil
		judged = append(judged, t)
	}
	for _, g := range bySteps(judged, func(t *judge.TensorResult) int { return t.Step }) {
		facts := judgeStep(g, ctx)
		res.Steps = append(res.Steps, facts)
		ctx = ctx.Next(facts)
	}
}

// copies returns shallow copies of the pairs ts, so that a merged result
// can take other descriptions of their tensors (reattach) without changing
// the shards' results.
func copies(ts []*judge.TensorResult) []*judge.TensorResult {
	out := make([]*judge.TensorResult, len(ts))
	for i, t := range ts {
		c := *t
		out[i] = &c
	}
	return out
}

// reattach loads the two runs a merged result names and returns the
// entries of its pairs, so that their samples can be read. A pair whose
// tensor the run now describes with another dtype or shape (the dumps
// changed since the shards ran) gets no entry for it; the others take the
// run's description (storage order included, which reports do not carry).
func reattach(r *judge.Result, lo loaders.Options) (a, b *loaders.Run, pairs map[*judge.TensorResult]pairEntries, err error) {
	if a, err = loaders.Load(r.A, lo); err != nil {
		return nil, nil, nil, err
	}
	if b, err = loaders.Load(r.B, lo); err != nil {
		return nil, nil, nil, err
	}
	loaders.PairSingleFiles(a, b)
	index := func(run *loaders.Run) map[pairKey]*loaders.Entry {
		m := make(map[pairKey]*loaders.Entry, len(run.Entries))
		for _, e := range run.Entries {
			m[pairKey{Step: e.Step, Name: e.Name}] = e
		}
		return m
	}
	ea, eb := index(a), index(b)
	match := func(described *loaders.Meta, m map[pairKey]*loaders.Entry, key pairKey) (*loaders.Meta, *loaders.Entry) {
		if described == nil {
			return nil, nil
		}
		e := m[key]
		if e == nil || e.DType != described.DType || !slices.Equal(e.Shape, described.Shape) {
			return described, nil
		}
		return e.Meta(), e
	}
	pairs = map[*judge.TensorResult]pairEntries{}
	for _, t := range r.Tensors {
		key := pairKey{Step: t.Step, Name: t.Name}
		var pe pairEntries
		t.A, pe.a = match(t.A, ea, key)
		t.B, pe.b = match(t.B, eb, key)
		pairs[t] = pe
	}
	return a, b, pairs, nil
}

// sortPairs orders pairs like loaders.PairRuns does: step (step-less
// first), kind rank, name.
func sortPairs(ts []*judge.TensorResult) {
	sort.SliceStable(ts, func(i, j int) bool {
		x, y := ts[i], ts[j]
		return loaders.Less(&loaders.Entry{Name: x.Name, Step: x.Step, Kind: x.Kind},
			&loaders.Entry{Name: y.Name, Step: y.Step, Kind: y.Kind})
	})
}

// duplicatePair returns a pair that occurs twice in sorted ts, nil if none.
func duplicatePair(ts []*judge.TensorResult) *judge.TensorResult {
	for i := 1; i < len(ts); i++ {
		if ts[i].Step == ts[i-1].Step && ts[i].Name == ts[i-1].Name {
			return ts[i]
		}
	}
	return nil
}
