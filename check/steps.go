package check

import (
	"fmt"
	"slices"

	"github.com/graphdiff/graphdiff/compare"
	"github.com/graphdiff/graphdiff/diagnose"
	"github.com/graphdiff/graphdiff/judge"
	"github.com/graphdiff/graphdiff/loaders"
	"github.com/graphdiff/graphdiff/tolerances"
)

// stepper carries a comparison from one step to the next. Everything in
// it is indexed by a pair's position in pairs.held; each pair's result is
// built once, when it is known (at classification for a pair that is not
// compared, once its step is judged for the others).
type stepper struct {
	pairs   pairing
	rd      *stepReader
	opts    Options
	prec    tolerances.Precision
	noise   map[pairKey]*loaders.Entry // the baseline's entries
	updates *updateIndex

	results []judge.TensorResult
	class   []class
	entries []pairEntries // the entries of the pairs classified
	// members are, by unit, the pairs to compare, in order, with their
	// classification; classified, by part, whether its pairs were.
	members    [][]member
	classified []bool
	spans      [][2]int // by part: its members, members[u][from:to]
	keepN      []int    // leading values to keep, by pair
	kept       []kept
	// weights are the last step's stateful entries (parameters, tensors
	// of no kind word), held for the next one's updates.
	weights []*loaders.Entry
	// grads are this step's reference gradients, whose maps are kept
	// (KeepMaps) for its updates.
	grads []*loaders.Entry
	// parted marks, by token pair name, the sequences of a decoding
	// whose greedy tokens flipped by a near tie at an earlier step.
	parted map[string][]bool
	// stoppedAt and notCompared say where --fail-fast stopped, and how
	// many pairs of later steps it left.
	stoppedAt   *int
	notCompared int
	// scratch, reused from one step (or part) to the next: outcomes and
	// the baseline's metrics (noiseM) by member of the step, the step's pairs to judge, a part's
	// jobs and which member each job measures the noise of (-1: none).
	outcomes []compare.Outcome
	noiseM   []*compare.Metrics
	judged   []judge.Pair
	jobs     []compare.Job
	noiseOf  []int
}

// newStepper returns the stepper of the pairs pr, read by rd, compared in
// precision prec.
func newStepper(pr pairing, rd *stepReader, opts Options, prec tolerances.Precision, baseline, a, b *loaders.Run) *stepper {
	n := len(pr.held)
	return &stepper{pairs: pr, rd: rd, opts: opts, prec: prec, noise: indexRun(baseline), updates: newUpdateIndex(a, b),
		parted: map[string][]bool{}, results: make([]judge.TensorResult, n), class: make([]class, n), entries: make([]pairEntries, n), kept: make([]kept, n),
		members: make([][]member, len(pr.units)), classified: make([]bool, len(rd.parts)), spans: make([][2]int, len(rd.parts))}
}

// member is a pair to compare: its position in held, the descriptions
// of its two sides and its settings (from its classification).
type member struct {
	i        int
	A, B     *loaders.Meta
	Settings tolerances.Settings
}

// preparePart reads part q of unit u and classifies its pairs, once. It
// fails when the part holds a gradient or a parameter coarser than the
// precision decided.
func (st *stepper) preparePart(u, q int) error {
	if st.classified[q] {
		return nil
	}
	st.rd.readPart(q)
	if d := st.rd.weightDType(st.rd.parts[q]); st.prec.Coarser(d) {
		return &coarserPrecision{decided: st.prec, found: d, step: st.pairs.held[st.rd.parts[q][0]].Step}
	}
	if st.members[u] == nil {
		st.members[u] = make([]member, 0, len(st.pairs.units[u]))
	}
	from := len(st.members[u])
	for _, i := range st.rd.parts[q] {
		errA, errB := st.rd.errs(i)
		s := st.pairs.sides(i, errA, errB)
		c := classify(s, st.opts.Resolver, st.prec)
		st.class[i] = c.class
		if c.class != unlisted {
			st.entries[i] = pairEntries{s.A, s.B}
		}
		switch c.class {
		case settled, ignored:
			if c.Err != nil {
				st.pairs.attached[c.Err] = true
			}
			st.results[i] = c.result(s)
		case toCompare:
			st.members[u] = append(st.members[u], member{i, c.A, c.B, c.Settings})
		}
	}
	st.classified[q], st.spans[q] = true, [2]int{from, len(st.members[u])}
	return nil
}

// prepare reads unit u, its parts not read yet at once, and classifies
// its pairs (see preparePart).
func (st *stepper) prepare(u int) error {
	st.rd.readUnit(u)
	for q := st.rd.first[u]; q < st.rd.first[u+1]; q++ {
		if err := st.preparePart(u, q); err != nil {
			return err
		}
	}
	return nil
}

// progress tells opts.Progress, when set, the bytes of the pairs to
// compare (every file is read first where a progress bar is drawn, and
// each pair classified for the count), and returns the functions it gave;
// no-ops without it.
func (st *stepper) progress() (func(int64), func()) {
	if st.opts.Progress == nil {
		return nil, func() {}
	}
	var total int64
	for i := range st.pairs.held {
		errA, errB := st.rd.errs(i)
		s := st.pairs.sides(i, errA, errB)
		if classify(s, st.opts.Resolver, st.prec).class == toCompare {
			total += s.A.Size() + s.B.Size()
		}
	}
	return st.opts.Progress(total)
}

// planHeads decides how many leading values of each pair the comparison
// keeps for diagnosis: those its plan of samples wants (diagnose.
// PlanCandidates), planned on what is known before comparing.
func (st *stepper) planHeads() {
	if st.opts.keepNoHeads {
		return
	}
	cs := st.candidates()
	st.keepN = make([]int, len(st.pairs.held))
	for _, w := range diagnose.PlanCandidates(cs).Wants() {
		st.keepN[w.Index] = w.N
	}
}

// candidates describes the pairs for planning the samples before
// comparing: a pair read as it was read, and a pair not read yet as the
// tensors of its name first read in each run, or, where no tensor of its
// name was read yet, as unread (the plan then wants all it allows of the
// pair).
func (st *stepper) candidates() []diagnose.Candidate {
	cs := make([]diagnose.Candidate, len(st.pairs.held))
	var firstA, firstB map[string]loaders.Meta // made once a pair is not read
	for i, p := range st.pairs.held {
		cs[i] = diagnose.Candidate{Step: p.Step, Kind: p.Kind, Name: p.Name}
		errA, errB := st.rd.errs(i)
		switch {
		case p.A == nil || p.B == nil || errA != nil || errB != nil:
		case live(p.A) != nil && live(p.B) != nil:
			ma, mb := layout(p.A), layout(p.B)
			cs[i] = diagnose.NewCandidate(p.Step, p.Kind, p.Name, &ma, &mb)
		default:
			if firstA == nil {
				firstA, firstB = st.firstRead()
			}
			ma, okA := firstA[p.Name]
			mb, okB := firstB[p.Name]
			switch {
			case !okA && !okB && p.A.Deferred() && p.B.Deferred():
				cs[i].Sampled, cs[i].Values = true, diagnose.Unread
			case okA && okB:
				if live(p.A) != nil {
					ma = layout(p.A)
				}
				if live(p.B) != nil {
					mb = layout(p.B)
				}
				cs[i] = diagnose.NewCandidate(p.Step, p.Kind, p.Name, &ma, &mb)
			}
		}
	}
	return cs
}

// firstRead returns, for each name, the layout of the first tensor of it
// read in each run.
func (st *stepper) firstRead() (firstA, firstB map[string]loaders.Meta) {
	firstA, firstB = map[string]loaders.Meta{}, map[string]loaders.Meta{}
	for _, p := range st.pairs.held {
		for _, s := range []struct {
			e     *loaders.Entry
			first map[string]loaders.Meta
		}{{p.A, firstA}, {p.B, firstB}} {
			if live(s.e) != nil {
				if _, ok := s.first[s.e.Name]; !ok {
					s.first[s.e.Name] = layout(s.e)
				}
			}
		}
	}
	return firstA, firstB
}

// layout describes what planning needs of a read entry: its dtype, shape
// and storage order (the shape shared, not copied).
func layout(e *loaders.Entry) loaders.Meta {
	return loaders.Meta{DType: e.DType, Shape: e.Shape, FortranOrder: e.FortranOrder}
}

// compareStep compares, measures and judges unit u in context ctx, and
// builds the results of its pairs to compare. It returns the step's facts,
// and false when the step had no pair to compare.
func (st *stepper) compareStep(u int, ctx judge.Context, progress func(int64)) (judge.StepFacts, bool, error) {
	rd := st.rd
	var state []*loaders.Entry // this step's, held for the next one's updates
	st.outcomes, st.noiseM = st.outcomes[:0], st.noiseM[:0]
	for q := rd.first[u]; q < rd.first[u+1]; q++ {
		if !st.opts.readFirst {
			rd.readOnward(q)
		}
		if err := st.preparePart(u, q); err != nil {
			return judge.StepFacts{}, false, err
		}
		ms := st.members[u][st.spans[q][0]:st.spans[q][1]]
		st.comparePart(ms, progress)
		state = append(state, rd.release(rd.parts[q])...)
	}
	ms := st.members[u]
	outcomes, noise := st.outcomes, st.noiseM
	pairs := slices.Grow(st.judged[:0], len(ms))[:len(ms)]
	st.judged = pairs
	for k, m := range ms {
		p := st.pairs.held[m.i]
		pairs[k] = judge.Pair{Name: p.Name, Step: p.Step, Kind: p.Kind, A: m.A, B: m.B, Settings: m.Settings,
			Metrics: outcomes[k].Metrics, Noise: noise[k]}
	}
	st.measureUpdates(ms, pairs)
	for _, e := range st.weights {
		e.Release()
		e.ReleaseMaps()
	}
	st.weights = state
	for _, e := range st.grads {
		e.ReleaseMaps()
	}
	st.grads = st.grads[:0]
	if len(ms) == 0 {
		return judge.StepFacts{}, false, nil
	}
	dps := st.measureDecodes(ms, pairs)
	st.unmask(ms, pairs)
	facts, decisions := judge.Step(pairs, ctx)
	st.partSequences(dps, pairs, decisions)
	for k, m := range ms {
		d, err := decisions[k], outcomes[k].Err
		if err != nil {
			d = judge.Decision{Status: judge.StatusError}
		}
		st.results[m.i] = judge.TensorResult{Pair: pairs[k], Decision: d, Err: err}
	}
	st.members[u] = nil
	return facts, true, nil
}

// comparePart compares the pairs ms (and each against the baseline, where
// it holds the pair with the same shape) and appends their outcomes and
// noise metrics to st.outcomes and st.noiseM, by position in ms.
func (st *stepper) comparePart(ms []member, progress func(int64)) {
	jobs, noiseOf := st.jobs[:0], st.noiseOf[:0]
	defer func() { st.jobs, st.noiseOf = jobs, noiseOf }()
	for k, m := range ms {
		e := st.entries[m.i]
		st.keepMaps(m.i, e)
		keep := 0
		if st.keepN != nil {
			keep = st.keepN[m.i]
		}
		jobs, noiseOf = append(jobs, compareJob(e, m.Settings, keep)), append(noiseOf, -1)
		p := st.pairs.held[m.i]
		if n := st.noise[pairKey{Step: p.Step, Name: p.Name}]; n != nil && slices.Equal(n.Shape, e.a.Shape) &&
			n.DType.Components() == e.a.DType.Components() {
			jobs = append(jobs, compare.Job{A: e.a.Tensor, B: n.Tensor, Tolerance: m.Settings.Tolerance, DType: m.Settings.DType})
			noiseOf = append(noiseOf, k)
		}
	}
	base := len(st.outcomes)
	st.outcomes = slices.Grow(st.outcomes, len(ms))[:base+len(ms)]
	st.noiseM = slices.Grow(st.noiseM, len(ms))[:base+len(ms)]
	outcomes, noise := st.outcomes[base:], st.noiseM[base:]
	clear(noise)
	k := 0
	for j, o := range compare.Pairs(jobs, st.opts.Jobs, progress) {
		if noiseOf[j] >= 0 {
			noise[noiseOf[j]] = o.Metrics // nil when the baseline could not be read
			continue
		}
		outcomes[k] = compare.Outcome{Metrics: o.Metrics, Err: o.Err}
		if o.Err == nil && o.HeadA != nil {
			st.kept[ms[k].i] = kept{o.HeadA, o.HeadB}
		}
		k++
	}
}

// keepMaps asks that the tensors of pair i that the updates read again,
// its parameters (this step's update and the next's) and its reference
// gradient (this step's), keep their maps until then (KeepMaps), so that
// each is mapped once.
func (st *stepper) keepMaps(i int, e pairEntries) {
	switch k := st.pairs.held[i].Kind; {
	case stateful(k):
		e.a.KeepMaps()
		e.b.KeepMaps()
	case k == loaders.KindGrad:
		e.a.KeepMaps()
		st.grads = append(st.grads, e.a)
	}
}

// releaseMaps ends what keepMaps asked for, once nothing more is
// compared.
func (st *stepper) releaseMaps() {
	for _, e := range slices.Concat(st.weights, st.grads) {
		e.ReleaseMaps()
	}
}

// measureUpdates sets the Update of the compared parameter pairs of ms
// (pairs, by position) whose previous dumped step both runs hold alike;
// the others keep none and are judged alone.
func (st *stepper) measureUpdates(ms []member, pairs []judge.Pair) {
	var jobs []compare.UpdateJob
	var owners []int
	for k, p := range pairs {
		if !stateful(p.Kind) || p.Step == loaders.NoStep || p.Metrics == nil ||
			!p.A.DType.IsFloat() || !p.B.DType.IsFloat() {
			continue
		}
		if j, ok := st.updates.job(p.Step, p.Name, st.entries[ms[k].i], st.prec.ParamEpsilon); ok {
			jobs = append(jobs, j)
			owners = append(owners, k)
		}
	}
	for j, o := range compare.Updates(jobs, st.opts.Jobs) {
		pairs[owners[j]].Update = o.Update
	}
}

// failed reports whether unit u, compared, has a pair that failed.
func (st *stepper) failed(u int) bool {
	for _, i := range st.pairs.units[u] {
		if st.class[i] == toCompare && st.results[i].Failed() {
			return true
		}
	}
	return false
}

// stopAfter reads the steps after unit u for their pairs that are not
// compared (missing, extra, unreadable), which the report still lists,
// and leaves out the rest (--fail-fast).
func (st *stepper) stopAfter(u int) error {
	step := st.pairs.held[st.pairs.units[u][0]].Step
	for v := u + 1; v < len(st.pairs.units); v++ {
		if err := st.prepare(v); err != nil {
			return err
		}
		st.rd.release(st.pairs.units[v])
		st.notCompared += len(st.members[v])
		for _, m := range st.members[v] {
			st.class[m.i] = unlisted
		}
		st.members[v] = nil
	}
	if st.notCompared > 0 {
		st.stoppedAt = &step
	}
	return nil
}

// finish assembles the result: the pairs listed, in pairing order, the
// errors that belong to no pair, the steps' facts, the verdict and first
// divergence.
func (st *stepper) finish(a, b, baseline *loaders.Run, steps []judge.StepFacts) *compared {
	res := &judge.Result{A: a.Root, B: b.Root, Renamed: slices.Clone(st.opts.Renames), Shard: st.opts.Shard,
		Rules: st.opts.Resolver.Run(), Precision: st.prec, Steps: steps}
	if baseline != nil {
		res.BaselineRun = baseline.Root
	}
	listed := 0
	for _, k := range st.class {
		if k == settled || k == toCompare {
			listed++
		}
	}
	c := &compared{entries: make([]pairEntries, 0, listed), kept: make([]kept, 0, listed)}
	res.Tensors = make([]*judge.TensorResult, 0, listed)
	for i := range st.results { // in pairing order
		switch st.class[i] {
		case settled, toCompare:
			res.Tensors = append(res.Tensors, &st.results[i])
			c.entries = append(c.entries, st.entries[i])
			c.kept = append(c.kept, st.kept[i])
		case ignored:
			res.Ignored = append(res.Ignored, &st.results[i])
		}
	}
	res.StoppedAfterStep, res.NotCompared = st.stoppedAt, st.notCompared
	res.Errors = st.unattached(a, b, baseline)
	res.Verdict, res.FirstDivergence = judge.Run(res.Tensors, res.Errors)
	res.Taps = tapOrder(a, b)
	res.FirstModule, res.ModulesAgree = judge.FirstModule(res.Taps, res.Tensors, res.FirstDivergence)
	if judge.NothingCompared(res.Verdict, res.Tensors, res.Shard) {
		res.Verdict = judge.Error
		res.NothingCompared = fmt.Sprintf("%s holds %s, %s %s; %s ignored by the policy",
			a.Root, plural(st.rd.readable(len(a.Entries), true), "tensor"), b.Root, plural(st.rd.readable(len(b.Entries), false), "tensor"),
			plural(len(res.Ignored), "pair"))
	}
	c.result = res
	return c
}

// unattached returns the errors of the runs' discovery, and of the files
// read a step at a time, that belong to no pair; none for a shard that
// does not report discovery's.
func (st *stepper) unattached(a, b, baseline *loaders.Run) []error {
	if !st.opts.Shard.ReportsDiscovery() {
		return nil
	}
	var out []error
	runs := []*loaders.Run{a, b}
	late := [][]error{st.rd.errorsOf(true), st.rd.errorsOf(false)}
	if baseline != nil {
		runs = append(runs, baseline)
	}
	for k, r := range runs {
		errs := r.Errors
		if k < len(late) && len(late[k]) > 0 {
			errs = sortedErrors(slices.Concat(errs, late[k]))
		}
		for _, err := range errs {
			if !st.pairs.attached[err] {
				out = append(out, err)
			}
		}
	}
	return out
}

// tapOrder returns the tapped modules in forward order as run a's manifest
// gives them, else run b's; nil when neither tapped any.
func tapOrder(a, b *loaders.Run) []loaders.TapModule {
	for _, r := range []*loaders.Run{a, b} {
		if r != nil && r.Manifest != nil && r.Manifest.Run.Taps != nil && len(r.Manifest.Run.Taps.Modules) > 0 {
			return r.Manifest.Run.Taps.Modules
		}
	}
	return nil
}
