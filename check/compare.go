package check

import (
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/graphdiff/graphdiff/compare"
	"github.com/graphdiff/graphdiff/curve"
	"github.com/graphdiff/graphdiff/diagnose"
	"github.com/graphdiff/graphdiff/judge"
	"github.com/graphdiff/graphdiff/loaders"
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
	// Runs are read a step at a time (each small file opened once), except
	// for a shard, which reports only its pairs' files but must not lose
	// the errors of the others' (shard 1 reports them all, as discovery
	// finds them), and for a progress bar, whose total is known once every
	// file's header is read.
	deferred := deferReading && opts.Shard == (loaders.Shard{}) && opts.Progress == nil
	a, b, err := loadBoth(pathA, pathB, opts.Load, deferred)
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
	c, ok := compareRuns(a, b, baseline, opts, !deferred)
	if !ok { // a later step holds a coarser precision than the first
		again := opts
		again.Planned = nil // told already
		c, _ = compareRuns(a, b, baseline, again, true)
	}
	var cv *curve.Result
	if opts.Shard.Index <= 1 { // shard 1 carries the curve
		cv = runCurves(a, b, opts.Load, c.result.ComputeDType, c.result.ModelDType)
	}
	plan, heads := c.heads()
	return finish(c.result, plan, heads, cv, opts.Strict), nil
}

// loadBoth loads the runs at pathA and pathB at the same time: the walk of
// a directory is serial, and one run's walk overlaps the other's opening of
// files. An error of run A is reported before one of run B.
func loadBoth(pathA, pathB string, lo loaders.Options, deferred bool) (a, b *loaders.Run, err error) {
	load := loaders.Load
	if deferred {
		load = loaders.LoadDeferred
	}
	var errB error
	done := make(chan struct{})
	go func() {
		defer close(done)
		b, errB = load(pathB, lo)
	}()
	a, err = load(pathA, lo)
	<-done
	if err == nil {
		err = errB
	}
	return a, b, err
}

// deferReading makes Runs read runs a step at a time (see compareRuns);
// a variable so tests can compare with reading every file first.
var deferReading = true

// compared is a comparison of two loaded runs: the judged result, the
// entries of its pairs (to read samples from) and the leading values the
// comparison kept.
type compared struct {
	result *judge.Result
	pairs  map[*judge.TensorResult]pairEntries
	kept   map[*judge.TensorResult]compare.Outcome
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
//
// Entries of a and b that are Deferred (loaders.LoadDeferred) are read a
// part of a step at a time, while the part before is compared
// (stepReader), so that each small file is opened once; upfront reads
// them all before comparing, as Load would have. What must be known of
// every tensor before the first pair is compared is then taken from the
// parts read first: the model's precision (modelDType) from the first
// part that holds a gradient or a parameter, and the samples diagnosis
// keeps (diagnose.PlanSamples) from the shapes of the tensors of the same
// name read so far, or as many as it may want of a name not read yet. A
// later part that holds a coarser gradient or parameter dtype makes
// compareRuns return false, and the caller compares again with upfront
// set; a plan that later steps do not follow costs only a read of the
// samples it missed (compared.heads).
func compareRuns(a, b, baseline *loaders.Run, opts Options, upfront bool) (*compared, bool) {
	res := &judge.Result{A: a.Root, B: b.Root, Shard: opts.Shard}
	out := &compared{result: res}
	res.Rules = opts.Resolver.Run()
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
	pairs := loaders.PairRuns(a, b)
	held := pairs[:0] // the pairs of this shard, in pairing order: kept in place
	for _, p := range pairs {
		key := pairKey{Step: p.Step, Name: p.Name}
		if u := unreadB[key]; p.B == nil && u != nil {
			attached[u.Err] = true
		}
		if u := unreadA[key]; p.A == nil && u != nil {
			attached[u.Err] = true
		}
		if opts.Shard.Holds(p.Step, p.Name) {
			held = append(held, p)
		}
	}
	ts := make([]*judge.TensorResult, len(held))
	// sized once: a run of many small files grows no map pair by pair
	out.pairs = make(map[*judge.TensorResult]pairEntries, len(held))
	results := make([]judge.TensorResult, len(held)) // one allocation for all
	for i, p := range held {
		results[i] = judge.TensorResult{Name: p.Name, Step: p.Step, Kind: p.Kind}
		ts[i] = &results[i]
	}
	order := make([]int, len(held))
	for i := range order {
		order[i] = i
	}
	units := bySteps(order, func(i int) int { return held[i].Step }) // indexes into held, step by step

	rd := newStepReader(held, units)
	defer rd.wait() // no reading ahead outlives the comparison
	if upfront {
		for u := range units {
			rd.readUnit(u)
		}
	} else if len(units) > 0 {
		// the first part, and the first with gradients or parameters: the
		// precision the model computes in
		rd.readPart(0)
		if u := slices.IndexFunc(units, rd.holdsWeights); u >= 0 {
			rd.readPart(rd.first[u])
		}
	}

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
	ctx := judge.NewContext(res.ComputeDType, res.ModelDType, res.Rules)
	updates := newUpdateIndex(a, b)

	// classify decides what can be said of pair i before comparing it (its
	// entries read), and reports whether it is to be compared.
	listed := make([]byte, len(held)) // per pair: inResult, or ignored
	const inResult, ignored = 1, 2
	classify := func(i int) bool {
		p, t := held[i], ts[i]
		key := pairKey{Step: p.Step, Name: p.Name}
		pa, pb := live(p.A), live(p.B)
		errA, errB := rd.failed[p.A], rd.failed[p.B]
		if u := unreadA[key]; p.A == nil && u != nil {
			errA = u.Err
		}
		if u := unreadB[key]; p.B == nil && u != nil {
			errB = u.Err
		}
		if pa == nil && pb == nil {
			return false // neither run could read it: both errors are discovery's
		}
		t.A, t.B = nil, nil
		if pa != nil {
			t.A = pa.Meta()
		}
		if pb != nil {
			t.B = pb.Meta()
		}
		out.pairs[t] = pairEntries{pa, pb}
		switch {
		case pb == nil && errB != nil:
			t.Status, t.Err = judge.StatusError, errB
			t.Reasons = []string{"could not be read in " + b.Root}
			attached[errB] = true
		case pa == nil && errA != nil:
			t.Status, t.Err = judge.StatusError, errA
			t.Reasons = []string{"could not be read in " + a.Root}
			attached[errA] = true
		case pb == nil:
			t.Status = judge.StatusMissing
			t.Reasons = []string{"not in " + b.Root}
		case pa == nil:
			t.Status = judge.StatusExtra
			t.Reasons = []string{"not in " + a.Root}
		default:
			t.Settings = opts.Resolver.Resolve(p.Name, p.Kind, t.A.Effective(), t.B.Effective(), compute)
			if t.Settings.Ignore {
				listed[i] = ignored
				return false
			}
		}
		listed[i] = inResult
		if t.Status != "" {
			return false
		}
		if !slices.Equal(pa.Shape, pb.Shape) {
			t.Status = judge.StatusShapeMismatch
			t.Reasons = []string{fmt.Sprintf("shape %s in %s, %s in %s",
				loaders.FormatShape(pa.Shape), a.Root, loaders.FormatShape(pb.Shape), b.Root)}
			return false
		}
		if pa.DType.Components() != pb.DType.Components() {
			t.Status = judge.StatusDTypeMismatch
			t.Reasons = []string{fmt.Sprintf("dtype %s in %s, %s in %s", pa.DType, a.Root, pb.DType, b.Root)}
			return false
		}
		return true
	}
	groups := make([][]*judge.TensorResult, len(units)) // the pairs to compare, unit by unit
	toCompare := make([]bool, len(held))                // by pair: in groups
	classified := make([]bool, len(rd.parts))
	spans := make([][2]int, len(rd.parts)) // by part: its pairs to compare, groups[u][from:to]
	// preparePart reads part q of unit u and classifies its pairs, once;
	// false when the part holds a coarser gradient or parameter than the
	// precision taken.
	preparePart := func(u, q int) bool {
		if classified[q] {
			return true
		}
		rd.readPart(q)
		if coarser(rd.weightDType(rd.parts[q]), res.ModelDType) {
			return false
		}
		from := len(groups[u])
		for _, i := range rd.parts[q] {
			if classify(i) {
				groups[u] = append(groups[u], ts[i])
				toCompare[i] = true
			}
		}
		classified[q], spans[q] = true, [2]int{from, len(groups[u])}
		return true
	}
	// prepare reads unit u, its parts not read yet at once, and classifies
	// its pairs (see preparePart).
	prepare := func(u int) bool {
		rd.readUnit(u)
		for q := rd.first[u]; q < rd.first[u+1]; q++ {
			if !preparePart(u, q) {
				return false
			}
		}
		return true
	}
	if upfront {
		for u := range units {
			prepare(u)
		}
	}

	if opts.Planned != nil {
		opts.Planned(len(held))
	}
	var progress func(int64) // nil: no progress to report
	if opts.Progress != nil {
		var total int64
		for _, group := range groups { // all classified: a progress bar comes with upfront
			for _, t := range group {
				total += out.pairs[t].a.Size() + out.pairs[t].b.Size()
			}
		}
		var done func()
		progress, done = opts.Progress(total)
		defer done()
	}
	var heads map[*judge.TensorResult]int
	if keepHeads {
		plan := slices.Concat(groups...)
		if !upfront {
			plan = rd.provisional(ts)
		}
		wants := diagnose.PlanSamples(plan)
		heads = make(map[*judge.TensorResult]int, len(wants))
		for _, w := range wants {
			heads[w.Pair] = w.N
		}
	}
	out.kept = make(map[*judge.TensorResult]compare.Outcome, len(heads))

	var weights []*loaders.Entry // the last step's parameters, held for the next one's updates
	var jobs []compare.Job
	var owners []*judge.TensorResult
	var isNoise []bool
	for u := range units {
		var params []*loaders.Entry // this step's, held for the next one's updates
		for q := rd.first[u]; q < rd.first[u+1]; q++ {
			if !upfront {
				rd.readOnward(q)
			}
			if !preparePart(u, q) {
				return nil, false
			}
			jobs, owners, isNoise = jobs[:0], owners[:0], isNoise[:0]
			for _, t := range groups[u][spans[q][0]:spans[q][1]] {
				pe := out.pairs[t]
				// the plan wants all it may of a name not read when it was
				// made: as many values as the pair has, up to that
				jobs = append(jobs, compare.Job{A: pe.a.Tensor, B: pe.b.Tensor, Tolerance: t.Settings.Tolerance,
					DType: t.Settings.DType, Heads: min(heads[t], int(pe.a.Len())*pe.a.DType.Components())})
				owners, isNoise = append(owners, t), append(isNoise, false)
				if e := noise[pairKey{Step: t.Step, Name: t.Name}]; e != nil && slices.Equal(e.Shape, pe.a.Shape) &&
					e.DType.Components() == pe.a.DType.Components() {
					jobs = append(jobs, compare.Job{A: pe.a.Tensor, B: e.Tensor, Tolerance: t.Settings.Tolerance, DType: t.Settings.DType})
					owners, isNoise = append(owners, t), append(isNoise, true)
				}
			}
			for k, o := range compare.Pairs(jobs, opts.Jobs, progress) {
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
			params = append(params, rd.release(rd.parts[q])...)
		}
		group := groups[u]
		measureUpdates(updates, group, out.pairs, opts.Jobs)
		for _, e := range weights {
			e.Release()
		}
		weights = params
		if len(group) == 0 {
			continue
		}
		facts := judgeStep(group, ctx)
		res.Steps = append(res.Steps, facts)
		ctx = ctx.Next(facts)
		if !opts.FailFast || !slices.ContainsFunc(group, (*judge.TensorResult).Failed) {
			continue
		}
		// the later steps are read for their pairs that are not compared
		// (missing, extra, unreadable), which the report still lists
		for v := u + 1; v < len(units); v++ {
			if !prepare(v) {
				return nil, false
			}
			rd.release(units[v])
		}
		if later := slices.Concat(groups[u+1:]...); len(later) > 0 {
			step := group[0].Step
			res.StoppedAfterStep = &step
			res.NotCompared = len(later)
			for _, v := range units[u+1:] {
				for _, i := range v {
					if toCompare[i] {
						listed[i] = 0
					}
				}
			}
			break
		}
	}
	for i, t := range ts { // in pairing order
		switch listed[i] {
		case inResult:
			res.Tensors = append(res.Tensors, t)
		case ignored:
			res.Ignored = append(res.Ignored, t)
		}
	}

	if opts.Shard.ReportsDiscovery() {
		runs := []*loaders.Run{a, b}
		late := [][]error{rd.errorsOf(true), rd.errorsOf(false)} // of files read a step at a time
		if baseline != nil {
			runs = append(runs, baseline)
		}
		for k, r := range runs {
			errs := r.Errors
			if k < len(late) && len(late[k]) > 0 {
				errs = slices.Concat(errs, late[k])
				sort.SliceStable(errs, func(i, j int) bool { return errs[i].Error() < errs[j].Error() })
			}
			for _, err := range errs {
				if !attached[err] {
					res.Errors = append(res.Errors, err)
				}
			}
		}
	}
	res.Verdict, res.FirstDivergence = judge.Run(res.Tensors, res.Errors)
	res.CheckSomethingCompared(fmt.Sprintf("%s holds %s, %s %s; %s ignored by the policy",
		a.Root, plural(rd.readable(a), "tensor"), b.Root, plural(rd.readable(b), "tensor"), plural(len(res.Ignored), "pair")))
	return out, true
}

// modelDType returns the precision the model computes in when neither the
// flags nor the manifests say: the coarsest (largest epsilon) floating-point
// dtype either run stores a parameter or a gradient in (coarserWeight);
// Invalid when the runs hold neither. A model kept in bfloat16 computes in
// bfloat16, so its float32 loss and outputs carry bfloat16 noise and are
// compared at bfloat16; a float32 model changes nothing. Deferred entries
// not read yet count for nothing.
func modelDType(runs ...*loaders.Run) loaders.DType {
	d := loaders.Invalid
	for _, r := range runs {
		for _, e := range r.Entries {
			d = coarserWeight(d, e)
		}
	}
	return d
}

// coarserWeight returns the coarser of d and e's floating-point dtype, as
// the training program had it (its original dtype where a manifest gives
// one), when e is a gradient or a parameter; d otherwise.
func coarserWeight(d loaders.DType, e *loaders.Entry) loaders.DType {
	if e.Kind != loaders.KindGrad && e.Kind != loaders.KindParam {
		return d
	}
	t := e.DType
	if e.Original != loaders.Invalid {
		t = e.Original
	}
	if t.IsFloat() && tolerances.Epsilon(t) > tolerances.Epsilon(d) {
		return t
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

// unreadableByKey indexes a run's unreadable tensors by step and name.
func unreadableByKey(r *loaders.Run) map[pairKey]*loaders.Unreadable {
	m := make(map[pairKey]*loaders.Unreadable, len(r.Unreadable))
	for _, u := range r.Unreadable {
		m[pairKey{Step: u.Step, Name: u.Name}] = u
	}
	return m
}
