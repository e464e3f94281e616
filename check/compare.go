package check

import (
	"errors"
	"fmt"
	"slices"

	"github.com/graphdiff/graphdiff/curve"
	"github.com/graphdiff/graphdiff/diagnose"
	"github.com/graphdiff/graphdiff/judge"
	"github.com/graphdiff/graphdiff/loaders"
	"github.com/graphdiff/graphdiff/metrics"
	"github.com/graphdiff/graphdiff/tolerances"
)

// Options control a check of two runs.
type Options struct {
	// Load says how to read files whose dtype they do not record.
	Load loaders.Options
	// Resolver decides each pair's tolerance and thresholds.
	Resolver tolerances.Resolver
	// Jobs is the number of goroutines that compare (all CPUs when ≤ 0).
	// Results do not depend on it.
	Jobs int
	// FailFast stops after the first step with a failing pair.
	FailFast bool
	// Baseline is the path of a second reference run (eager again), "" for
	// none; its difference from the first run is each tensor's noise floor.
	Baseline string
	// Shard restricts the comparison to a deterministic part of the pairs;
	// the zero Shard compares all. It cannot be combined with FailFast (a
	// shard cannot see the other shards' failing steps).
	Shard loaders.Shard
	// Strict makes warnings fail a passing verdict; they then lead the
	// causes.
	Strict bool
	// Progress, when set, is called once the pairs are known with the
	// bytes the comparison will read (both sides of every pair it
	// compares: this shard's only). It returns the function to call with
	// the bytes each finished piece of work read (from several goroutines)
	// and the one to call when comparing is over.
	Progress func(total int64) (add func(bytes int64), done func())
	// Planned, when set, is called once with the number of pairs this
	// comparison holds (this shard's only), before any is compared.
	Planned func(pairs int)
}

// ErrShardFailFast is returned for Options with both Shard and FailFast.
var ErrShardFailFast = errors.New("fail-fast cannot be combined with sharding: a shard cannot see the other shards' failures")

// Runs checks the run at pathB against the reference run at pathA (each a
// run directory or a single tensor file): it loads both, pairs their
// tensors, compares every pair, judges the pairs and the run, analyses the
// loss curves and diagnoses likely causes. It fails on invalid options (a
// bad Shard, or Shard with FailFast) and on a run that cannot be loaded
// at all; unreadable tensors are reported in the comparison.
func Runs(pathA, pathB string, opts Options) (*Comparison, error) {
	if opts.Shard != (loaders.Shard{}) {
		if err := opts.Shard.Check(); err != nil {
			return nil, err
		}
		if opts.FailFast {
			return nil, ErrShardFailFast
		}
	}
	a, b, err := loadBoth(pathA, pathB, opts.Load)
	if err != nil {
		return nil, err
	}
	loaders.PairSingleFiles(a, b)
	var baseline *loaders.Run
	if opts.Baseline != "" {
		if baseline, err = loaders.Load(opts.Baseline, opts.Load); err != nil {
			return nil, err
		}
		loaders.PairSingleFiles(a, baseline)
	}
	c := compareRuns(a, b, baseline, opts)
	var cv *curve.Result
	if opts.Shard.Index <= 1 { // shard 1 carries the curve
		cv = runCurves(a, b, opts.Load, c.result.ComputeDType, c.result.ModelDType)
	}
	return finish(c.result, c.heads(), cv, opts.Strict), nil
}

// loadBoth loads the runs at pathA and pathB at the same time: the walk of
// a directory is serial, and one run's walk overlaps the other's opening of
// files. An error of run A is reported before one of run B.
func loadBoth(pathA, pathB string, lo loaders.Options) (a, b *loaders.Run, err error) {
	var errB error
	done := make(chan struct{})
	go func() {
		defer close(done)
		b, errB = loaders.Load(pathB, lo)
	}()
	a, err = loaders.Load(pathA, lo)
	<-done
	if err == nil {
		err = errB
	}
	return a, b, err
}

// compared is a comparison of two loaded runs: the judged result, the
// entries of its pairs (to read samples from) and the leading values the
// comparison kept.
type compared struct {
	result *judge.Result
	pairs  map[*judge.TensorResult]pairEntries
	kept   map[*judge.TensorResult]metrics.Outcome
}

// pairEntries are the two runs' entries of one pair.
type pairEntries struct{ a, b *loaders.Entry }

// keepHeads makes the comparison keep the leading values that diagnosis
// will sample, as it reads them (for many small files, reading them again
// costs more than comparing); a variable so tests can compare with
// reading them from the files.
var keepHeads = true

// compareRuns compares run b against the reference run a (and a against
// baseline, when not nil), pair by pair and step by step, and judges each
// pair and the whole run. opts.Progress, when set, is told the bytes of
// the pairs this comparison reads (both sides), and is done when they are.
func compareRuns(a, b, baseline *loaders.Run, opts Options) *compared {
	res := &judge.Result{A: a.Root, B: b.Root, Shard: opts.Shard}
	out := &compared{result: res, pairs: map[*judge.TensorResult]pairEntries{}, kept: map[*judge.TensorResult]metrics.Outcome{}}
	compute := manifestCompute(a, b)
	res.ComputeDType = compute
	if c := opts.Resolver.Overrides.ComputeDType; c != loaders.Invalid {
		res.ComputeDType = c
	}
	res.ModelDType = modelDType(a, b)
	if res.ComputeDType == loaders.Invalid {
		// the model's precision: a bf16 model's float32 loss carries bf16 noise
		compute = res.ModelDType
	}
	res.Rules = opts.Resolver.Run()
	ctx := judge.NewContext(res.ComputeDType, res.ModelDType, res.Rules)
	updates := newUpdateIndex(a, b)
	var noise map[pairKey]*loaders.Entry
	if baseline != nil {
		noise = map[pairKey]*loaders.Entry{}
		for _, e := range baseline.Entries {
			noise[pairKey{Step: e.Step, Name: e.Name}] = e
		}
	}

	// A tensor that one run holds and the other could not read is an
	// unreadable pair, not a missing or extra one; its error goes with the
	// pair (and the pair's shard), not with discovery's.
	unreadA, unreadB := unreadableByKey(a), unreadableByKey(b)
	attached := map[error]bool{}
	var grouped stepGroups // pairs to compare, by step
	for _, p := range loaders.PairRuns(a, b) {
		key := pairKey{Step: p.Step, Name: p.Name}
		if u := unreadB[key]; p.B == nil && u != nil {
			attached[u.Err] = true
		}
		if u := unreadA[key]; p.A == nil && u != nil {
			attached[u.Err] = true
		}
		if !opts.Shard.Holds(p.Step, p.Name) {
			continue
		}
		t := &judge.TensorResult{Name: p.Name, Step: p.Step, Kind: p.Kind}
		if p.A != nil {
			t.A = p.A.Meta()
		}
		if p.B != nil {
			t.B = p.B.Meta()
		}
		out.pairs[t] = pairEntries{p.A, p.B}
		switch {
		case p.B == nil && unreadB[key] != nil:
			t.Status, t.Err = judge.StatusError, unreadB[key].Err
			t.Reasons = []string{"could not be read in " + b.Root}
		case p.A == nil && unreadA[key] != nil:
			t.Status, t.Err = judge.StatusError, unreadA[key].Err
			t.Reasons = []string{"could not be read in " + a.Root}
		case p.B == nil:
			t.Status = judge.StatusMissing
			t.Reasons = []string{"not in " + b.Root}
		case p.A == nil:
			t.Status = judge.StatusExtra
			t.Reasons = []string{"not in " + a.Root}
		default:
			t.Settings = opts.Resolver.Resolve(p.Name, p.Kind, t.A.Effective(), t.B.Effective(), compute)
			if t.Settings.Ignore {
				res.Ignored = append(res.Ignored, t)
				continue
			}
		}
		res.Tensors = append(res.Tensors, t)
		if t.Status != "" {
			continue
		}
		if !slices.Equal(p.A.Shape, p.B.Shape) {
			t.Status = judge.StatusShapeMismatch
			t.Reasons = []string{fmt.Sprintf("shape %s in %s, %s in %s",
				loaders.FormatShape(p.A.Shape), a.Root, loaders.FormatShape(p.B.Shape), b.Root)}
			continue
		}
		if p.A.DType.Components() != p.B.DType.Components() {
			t.Status = judge.StatusDTypeMismatch
			t.Reasons = []string{fmt.Sprintf("dtype %s in %s, %s in %s", p.A.DType, a.Root, p.B.DType, b.Root)}
			continue
		}
		grouped.add(t)
	}
	if opts.Shard.ReportsDiscovery() {
		runs := []*loaders.Run{a, b}
		if baseline != nil {
			runs = append(runs, baseline)
		}
		for _, r := range runs {
			for _, err := range r.Errors {
				if !attached[err] {
					res.Errors = append(res.Errors, err)
				}
			}
		}
	}
	if opts.Planned != nil {
		opts.Planned(len(res.Tensors))
	}
	// Steps in order, with step-less tensors last.
	steps := grouped.ordered()
	var progress func(int64) // nil: no progress to report
	if opts.Progress != nil {
		var total int64
		for _, group := range steps {
			for _, t := range group {
				total += out.pairs[t].a.Size() + out.pairs[t].b.Size()
			}
		}
		var done func()
		progress, done = opts.Progress(total)
		defer done()
	}
	heads := map[*judge.TensorResult]int{}
	if keepHeads {
		for _, w := range diagnose.PlanSamples(slices.Concat(steps...)) {
			heads[w.Pair] = w.N
		}
	}

	for i, group := range steps {
		var jobs []metrics.Job
		var owners []*judge.TensorResult
		var isNoise []bool
		for _, t := range group {
			pe := out.pairs[t]
			jobs = append(jobs, metrics.Job{A: pe.a.Tensor, B: pe.b.Tensor, Tolerance: t.Settings.Tolerance,
				DType: t.Settings.DType, Heads: heads[t]})
			owners, isNoise = append(owners, t), append(isNoise, false)
			if e := noise[pairKey{Step: t.Step, Name: t.Name}]; e != nil && slices.Equal(e.Shape, pe.a.Shape) &&
				e.DType.Components() == pe.a.DType.Components() {
				jobs = append(jobs, metrics.Job{A: pe.a.Tensor, B: e.Tensor, Tolerance: t.Settings.Tolerance, DType: t.Settings.DType})
				owners, isNoise = append(owners, t), append(isNoise, true)
			}
		}
		for k, o := range metrics.Pairs(jobs, opts.Jobs, progress) {
			t := owners[k]
			switch {
			case isNoise[k]:
				t.Noise = o.Metrics // nil when the baseline could not be read
			case o.Err != nil:
				t.Status, t.Err = judge.StatusError, o.Err
			default:
				t.Metrics = o.Metrics
				if o.HeadA != nil {
					out.kept[t] = o
				}
			}
		}
		measureUpdates(updates, group, out.pairs, opts.Jobs)
		facts := judgeStep(group, ctx)
		res.Steps = append(res.Steps, facts)
		ctx = ctx.Next(facts)
		failed := false
		for _, t := range group {
			failed = failed || t.Failed()
		}
		if opts.FailFast && failed && i+1 < len(steps) {
			step := group[0].Step
			res.StoppedAfterStep = &step
			for _, later := range steps[i+1:] {
				res.NotCompared += len(later)
				res.Tensors = removeAll(res.Tensors, later)
			}
			break
		}
	}
	res.Verdict, res.FirstDivergence = judge.Run(res.Tensors, res.Errors)
	res.CheckSomethingCompared(fmt.Sprintf("%s holds %s, %s %s; %s ignored by the policy",
		a.Root, plural(len(a.Entries), "tensor"), b.Root, plural(len(b.Entries), "tensor"), plural(len(res.Ignored), "pair")))
	return out
}

// modelDType returns the precision the model computes in when neither the
// flags nor the manifests say: the coarsest (largest epsilon) floating-point
// dtype either run stores a parameter or a gradient in, as the training
// program had it (its original dtype where a manifest gives one); Invalid
// when the runs hold neither. A
// model kept in bfloat16 computes in bfloat16, so its float32 loss and
// outputs carry bfloat16 noise and are compared at bfloat16; a float32
// model changes nothing.
func modelDType(runs ...*loaders.Run) loaders.DType {
	d := loaders.Invalid
	for _, r := range runs {
		for _, e := range r.Entries {
			if e.Kind != loaders.KindGrad && e.Kind != loaders.KindParam {
				continue
			}
			t := e.DType
			if e.Original != loaders.Invalid {
				t = e.Original
			}
			if t.IsFloat() && tolerances.Epsilon(t) > tolerances.Epsilon(d) {
				d = t
			}
		}
	}
	return d
}

// manifestCompute returns the coarser compute dtype the runs' manifests
// state, Invalid when neither states one.
func manifestCompute(runs ...*loaders.Run) loaders.DType {
	d := loaders.Invalid
	for _, r := range runs {
		if r.Manifest == nil || r.Manifest.Run.ComputeDType == "" {
			continue
		}
		c, err := loaders.ParseDType(r.Manifest.Run.ComputeDType)
		if err == nil && tolerances.Epsilon(c) > tolerances.Epsilon(d) {
			d = c
		}
	}
	return d
}

func removeAll(ts []*judge.TensorResult, drop []*judge.TensorResult) []*judge.TensorResult {
	gone := map[*judge.TensorResult]bool{}
	for _, t := range drop {
		gone[t] = true
	}
	out := ts[:0]
	for _, t := range ts {
		if !gone[t] {
			out = append(out, t)
		}
	}
	return out
}

// unreadableByKey indexes a run's unreadable tensors by step and name.
func unreadableByKey(r *loaders.Run) map[pairKey]*loaders.Unreadable {
	m := make(map[pairKey]*loaders.Unreadable, len(r.Unreadable))
	for _, u := range r.Unreadable {
		m[pairKey{Step: u.Step, Name: u.Name}] = u
	}
	return m
}
