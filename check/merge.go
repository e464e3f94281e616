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
	"github.com/graphdiff/graphdiff/outcome"
	"github.com/graphdiff/graphdiff/tolerances"
)

// Merge combines the results of every shard of one comparison (read back
// from their JSON reports) into the comparison an unsharded check gives:
// the same pairs in the same order, the same errors, verdict and first
// divergence, every step judged again from the pairs' metrics. The reports
// alone decide it: no file they name is read. With lo set (merge
// --read-runs), the likely causes and the loss-curve analysis are
// recomputed over all pairs from the two runs loaded again at the paths
// the results name, the first run's tensors renamed as the shards renamed
// them (judge.Result.Renamed), as an unsharded check finds them; when
// they cannot be loaded, warning says why. Without lo, or when they
// cannot be loaded, the causes come from the metrics alone, with no curve
// analysis. The parts are not modified.
//
// Merge fails when the parts are not the shards of one comparison (runs,
// renames, shard count or compute dtype differ) or when a shard is
// missing or given twice, so that no pair is silently left out.
func Merge(parts []*judge.Result, strict bool, lo *loaders.Options) (c *outcome.Comparison, warning, err error) {
	pairs, err := mergePairs(parts)
	if err != nil {
		return nil, nil, err
	}
	if lo == nil {
		return finish(mergedResult(parts, pairs, nil), nil, diagnose.Heads{}, nil, strict), nil, nil
	}
	a, b, entries, warning := reattach(parts[0], pairs.tensors, *lo)
	merged := mergedResult(parts, pairs, entries)
	if warning != nil {
		return finish(merged, nil, diagnose.Heads{}, nil, strict), warning, nil
	}
	withEntries := &compared{result: merged, entries: entries}
	plan, heads := withEntries.heads()
	return finish(merged, plan, heads, runCurves(a, b, *lo, merged.Precision), strict), nil, nil
}

// maxShards is the most shards a merge takes (the report reader refuses
// more).
const maxShards = 1 << 16

// shardPairs are the pairs of every shard of a comparison, in the
// unsharded order, as the shards' results hold them (not copied).
type shardPairs struct {
	tensors, ignored []*judge.TensorResult
	errors           []error
	notCompared      int
}

// mergePairs gathers the pairs of the shards' results in the unsharded
// order, after checking that the parts are the shards of one comparison.
func mergePairs(parts []*judge.Result) (shardPairs, error) {
	var sp shardPairs
	if len(parts) == 0 {
		return sp, errors.New("no shard results to merge")
	}
	first := parts[0]
	count := first.Shard.Count
	if count == 0 {
		count = 1
	}
	if count < 1 || count > maxShards {
		return sp, fmt.Errorf("shard %s: a comparison in %d shards", first.Shard, count)
	}
	seen := make([]bool, count+1)
	for _, p := range parts {
		if err := sameComparison(p, first, count); err != nil {
			return sp, err
		}
		i := max(p.Shard.Index, 1)
		if i > count {
			return sp, fmt.Errorf("shard %s: index beyond the count", p.Shard)
		}
		if seen[i] {
			return sp, fmt.Errorf("shard %d/%d given twice", i, count)
		}
		seen[i] = true
		sp.tensors = append(sp.tensors, p.Tensors...)
		sp.ignored = append(sp.ignored, p.Ignored...)
		sp.notCompared += p.NotCompared
		sp.errors = append(sp.errors, p.Errors...)
	}
	var missing []string
	for i := 1; i <= count; i++ {
		if !seen[i] {
			missing = append(missing, fmt.Sprintf("%d/%d", i, count))
		}
	}
	if len(missing) > 0 {
		return sp, fmt.Errorf("missing shard %s: its pairs would go unreported", strings.Join(missing, ", "))
	}
	sortPairs(sp.tensors)
	sortPairs(sp.ignored)
	if dup := duplicatePair(sp.tensors); dup != nil {
		return sp, fmt.Errorf("pair %s (step %s) is in two shards: were the shards made from different dumps?",
			dup.Name, loaders.StepString(dup.Step))
	}
	return sp, nil
}

// sameComparison fails when shard result p is not of the same comparison
// as first, in count shards, or stopped early.
func sameComparison(p, first *judge.Result, count int) error {
	switch {
	case p.A != first.A || p.B != first.B:
		return fmt.Errorf("shard %s compares %s with %s, shard %s %s with %s",
			p.Shard, p.A, p.B, first.Shard, first.A, first.B)
	case p.BaselineRun != first.BaselineRun:
		return fmt.Errorf("shard %s was compared with baseline %q, shard %s with %q", p.Shard, p.BaselineRun, first.Shard, first.BaselineRun)
	case !slices.Equal(p.Renamed, first.Renamed):
		return fmt.Errorf("shard %s was compared with %s, shard %s with %s: compare every shard with the same --rename values",
			p.Shard, renameFlags(p.Renamed), first.Shard, renameFlags(first.Renamed))
	case max(p.Shard.Count, 1) != count:
		return fmt.Errorf("shard %s is one of %d, shard %s one of %d", p.Shard, max(p.Shard.Count, 1), first.Shard, count)
	case p.Precision.Compute != first.Precision.Compute:
		return fmt.Errorf("shard %s assumed compute dtype %s, shard %s %s",
			p.Shard, p.Precision.Compute, first.Shard, first.Precision.Compute)
	case p.Precision.Model != first.Precision.Model || p.Rules != first.Rules:
		return fmt.Errorf("shard %s was judged with model dtype %s and rules %+v, shard %s with %s and %+v",
			p.Shard, p.Precision.Model, p.Rules, first.Shard, first.Precision.Model, first.Rules)
	case p.StoppedAfterStep != nil:
		return fmt.Errorf("shard %s stopped early (--fail-fast): its later steps were not compared", p.Shard)
	}
	return nil
}

// renameFlags says which --rename values a comparison was made with.
func renameFlags(rs []loaders.Rename) string {
	if len(rs) == 0 {
		return "no --rename"
	}
	flags := make([]string, len(rs))
	for i, r := range rs {
		flags[i] = "--rename " + r.String()
	}
	return strings.Join(flags, " ")
}

// mergedResult is the result of the unsharded comparison the shards'
// pairs make: each pair's result made anew, its numbers judged again step
// by step with every shard's pairs in hand (rejudge), described as the
// runs describe them now where reattach found them (entries, nil when it
// could not), and the verdict and first divergence of them all.
func mergedResult(parts []*judge.Result, sp shardPairs, entries []pairEntries) *judge.Result {
	first := parts[0]
	res := &judge.Result{A: first.A, B: first.B, BaselineRun: first.BaselineRun, Renamed: first.Renamed, Taps: first.Taps, Precision: first.Precision,
		Rules: first.Rules, NotCompared: sp.notCompared, Errors: sp.errors}
	decisions, steps := rejudge(sp.tensors, first.Precision, first.Rules)
	results := make([]judge.TensorResult, len(sp.tensors)) // one allocation for all
	res.Tensors = make([]*judge.TensorResult, len(sp.tensors))
	for i, t := range sp.tensors {
		r := *t
		r.Decision = decisions[i]
		if entries != nil {
			r.A, r.B = reattached(t.A, entries[i].a), reattached(t.B, entries[i].b)
		}
		results[i] = r
		res.Tensors[i] = &results[i]
	}
	res.Steps = steps
	res.Ignored = make([]*judge.TensorResult, len(sp.ignored))
	for i, t := range sp.ignored {
		r := *t
		res.Ignored[i] = &r
	}
	res.Verdict, res.FirstDivergence = judge.Run(res.Tensors, res.Errors)
	res.FirstModule, res.ModulesAgree = judge.FirstModule(res.Taps, res.Tensors, res.FirstDivergence)
	if judge.NothingCompared(res.Verdict, res.Tensors, res.Shard) {
		res.Verdict = judge.Error
		res.NothingCompared = fmt.Sprintf("the %s hold %s, %s ignored", plural(len(parts), "shard report"),
			plural(len(res.Tensors), "pair"), plural(len(res.Ignored), "pair"))
	}
	return res
}

// reattached returns how a merged pair's side is described: as the run
// describes it now when reattach found its entry, else as the shard did.
func reattached(shard *loaders.Meta, e *loaders.Entry) *loaders.Meta {
	if e == nil {
		return shard
	}
	return e.Meta()
}

// rejudge returns, by position, the decision on each merged pair: its
// numbers judged again step by step with every shard's pairs in hand, as
// the unsharded comparison does (a shard judged its pairs with the facts
// of its own part of each step only); a pair not compared keeps its own.
// It returns the steps' facts too.
func rejudge(ts []*judge.TensorResult, p tolerances.Precision, rules tolerances.RunRules) ([]judge.Decision, []judge.StepFacts) {
	decisions := make([]judge.Decision, len(ts))
	var judged []int
	for i, t := range ts {
		decisions[i] = t.Decision
		if t.Metrics != nil && (t.Status == judge.StatusMatch || t.Status == judge.StatusMismatch || t.Status == judge.StatusDTypeMismatch) {
			judged = append(judged, i)
		}
	}
	ctx := judge.NewContext(p, rules)
	var steps []judge.StepFacts
	for _, g := range bySteps(judged, func(i int) int { return ts[i].Step }) {
		pairs := make([]judge.Pair, len(g))
		for k, i := range g {
			pairs[k] = ts[i].Pair
		}
		facts, ds := judge.Step(pairs, ctx)
		for k, i := range g {
			decisions[i] = ds[k]
		}
		steps = append(steps, facts)
		ctx = ctx.Next(facts)
	}
	return decisions, steps
}

// reattach loads the two runs a merged comparison names (first's A and
// B), renames the first run's tensors as the shards did (first.Renamed),
// and returns the entries of its pairs ts, by position, so that their
// samples can be read; warning says why it could not. A pair whose tensor
// the run now describes with another dtype or shape (the dumps changed
// since the shards ran) gets no entry for it; the others take the run's
// description (storage order included, which reports do not carry).
func reattach(first *judge.Result, ts []*judge.TensorResult, lo loaders.Options) (a, b *loaders.Run, entries []pairEntries, warning error) {
	if a, warning = loaders.Load(first.A, lo); warning != nil {
		return nil, nil, nil, warning
	}
	if b, warning = loaders.Load(first.B, lo); warning != nil {
		return nil, nil, nil, warning
	}
	if warning = renameRun(a, first.Renamed); warning != nil {
		return nil, nil, nil, warning
	}
	loaders.PairSingleFiles(a, b)
	ea, eb := indexRun(a), indexRun(b)
	match := func(described *loaders.Meta, m map[pairKey]*loaders.Entry, key pairKey) *loaders.Entry {
		if described == nil {
			return nil
		}
		e := m[key]
		if e == nil || e.DType != described.DType || !slices.Equal(e.Shape, described.Shape) {
			return nil
		}
		return e
	}
	entries = make([]pairEntries, len(ts))
	for i, t := range ts {
		key := pairKey{Step: t.Step, Name: t.Name}
		entries[i] = pairEntries{match(t.A, ea, key), match(t.B, eb, key)}
	}
	return a, b, entries, nil
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
