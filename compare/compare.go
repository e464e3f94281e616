package compare

import (
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/graphdiff/graphdiff/loaders"
	"github.com/graphdiff/graphdiff/tolerances"
)

// Status is the outcome for one tensor pair.
type Status string

// The statuses. Every status but StatusMatch counts against the verdict.
const (
	StatusMatch         Status = "match"
	StatusMismatch      Status = "mismatch"       // compared, and beyond the thresholds
	StatusMissing       Status = "missing"        // only in the first run
	StatusExtra         Status = "extra"          // only in the second run
	StatusShapeMismatch Status = "shape_mismatch" // shapes differ: not compared
	StatusDTypeMismatch Status = "dtype_mismatch" // dtypes differ (compared when both are real or both complex)
	StatusError         Status = "error"          // could not be read; see Err
)

// Verdict is the outcome of a whole comparison.
type Verdict string

// The verdicts: error when some pair could not be checked (the others are
// still reported), else fail when some pair did not match, else pass.
const (
	Pass  Verdict = "pass"
	Fail  Verdict = "fail"
	Error Verdict = "error"
)

// TensorResult is the comparison of one tensor pair.
type TensorResult struct {
	Name string
	Step int
	Kind loaders.Kind
	// A and B are the two runs' entries; nil for a missing (B) or extra
	// (A) tensor.
	A, B     *loaders.Entry
	Status   Status
	Settings tolerances.Settings
	// Metrics are nil when the pair was not compared.
	Metrics *Metrics
	// Noise compares the first run with the baseline run, when one was
	// given and holds this tensor.
	Noise *Metrics
	// MaxRelL2 and MaxMismatchFraction are the thresholds applied: the
	// settings', raised to the noise floor when a baseline shows more.
	MaxRelL2, MaxMismatchFraction float64
	// Reasons say why a pair did not match, one line per violated limit.
	Reasons []string
	// Err is set for StatusError.
	Err error
	// HeadWant is how many leading values of each side, in storage order,
	// the comparison should keep in HeadA and HeadB as it reads them
	// (Options.PlanHeads sets it; 0 keeps none). It keeps them where it
	// reads the pair as float32 from its first element in one piece of at
	// least HeadWant values; elsewhere they stay nil, and whoever wanted
	// them reads them from the files.
	HeadWant     int
	HeadA, HeadB []float64
}

// Failed reports whether the pair counts against the verdict.
func (t *TensorResult) Failed() bool { return t.Status != StatusMatch }

// diverged reports whether the pair's numbers differ (as opposed to a
// tensor missing from one run or unreadable).
func (t *TensorResult) diverged() bool {
	switch t.Status {
	case StatusMismatch, StatusShapeMismatch, StatusDTypeMismatch:
		return true
	}
	return false
}

// Result is a finished comparison of two runs.
type Result struct {
	// A and B are the paths of the reference and the compared run.
	A, B    string
	Verdict Verdict
	// FirstDivergence is the first pair whose numbers differ: the earliest
	// step, and within it the first tensor in kind order (loss, grads,
	// params, inputs, outputs, others); tensors outside any step come after
	// all steps. Nil when none differs.
	FirstDivergence *TensorResult
	// Tensors are all compared, missing, extra and unreadable pairs, in
	// step, kind and name order.
	Tensors []*TensorResult
	// Ignored are the pairs a policy told to ignore.
	Ignored []*TensorResult
	// Errors are the inputs that could not be read and belong to no pair
	// (a directory, a container that cannot be opened, a file only one run
	// has); an unreadable pair's error is its Err. AllErrors lists both.
	Errors []error
	// StoppedAfterStep is set when --fail-fast stopped the comparison after
	// a failing step; NotCompared pairs of later steps were not looked at.
	StoppedAfterStep *int
	NotCompared      int
	// ComputeDType is the compute dtype the comparison assumed (from the
	// options or the manifests), Invalid when none was given.
	ComputeDType loaders.DType
	// Shard is the part of the pairs compared (see Shard); zero for all.
	Shard Shard
}

// Options control a comparison.
type Options struct {
	// Resolver decides each pair's tolerance and thresholds.
	Resolver tolerances.Resolver
	// Jobs is the number of goroutines (all CPUs when ≤ 0). Results do not
	// depend on it.
	Jobs int
	// FailFast stops after the first step with a failing pair.
	FailFast bool
	// Baseline is a second reference run (eager again); its difference from
	// the first run is each tensor's noise floor.
	Baseline *loaders.Run
	// Shard restricts the comparison to a deterministic part of the pairs;
	// the zero Shard compares all. It cannot be combined with FailFast (a
	// shard cannot see the other shards' failing steps).
	Shard Shard
	// Progress, when set, is called with the number of bytes each finished
	// piece of work read, from several goroutines.
	Progress func(bytes int64)
	// PlanHeads, when set, is called once with the pairs about to be
	// compared, before any is read, to set their HeadWant: diagnose's
	// samples are the heads of tensors, which the comparison reads anyway
	// (for many small files, reading them again costs more than comparing).
	PlanHeads func(pairs []*TensorResult)
}

// NoiseFactor is how far beyond the baseline's noise a pair may go: the
// thresholds applied are max(default, NoiseFactor × baseline's value). A
// second eager run is one sample of legitimate noise; the graphed run is
// another, so it may land somewhat above it.
const NoiseFactor = 3

// Runs compares run b against the reference run a. It fails only on
// invalid options (a bad Shard, or Shard with FailFast); unreadable inputs
// are reported in the result.
func Runs(a, b *loaders.Run, opts Options) (*Result, error) {
	if opts.Shard != (Shard{}) {
		if err := opts.Shard.check(); err != nil {
			return nil, err
		}
		if opts.FailFast {
			return nil, errors.New("fail-fast cannot be combined with sharding: a shard cannot see the other shards' failures")
		}
	}
	res := &Result{A: a.Root, B: b.Root, Shard: opts.Shard}
	compute := manifestCompute(a, b)
	res.ComputeDType = compute
	if c := opts.Resolver.Overrides.ComputeDType; c != loaders.Invalid {
		res.ComputeDType = c
	}
	var baseline map[[2]any]*loaders.Entry
	if opts.Baseline != nil {
		baseline = map[[2]any]*loaders.Entry{}
		for _, e := range opts.Baseline.Entries {
			baseline[[2]any{e.Step, e.Name}] = e
		}
	}

	// A tensor that one run holds and the other could not read is an
	// unreadable pair, not a missing or extra one; its error goes with the
	// pair (and the pair's shard), not with discovery's.
	unreadA, unreadB := unreadableByKey(a), unreadableByKey(b)
	attached := map[error]bool{}
	var steps [][]*TensorResult // pairs to compare, grouped by step
	stepIndex := map[int]int{}
	for _, p := range loaders.PairRuns(a, b) {
		key := pairKey{p.Step, p.Name}
		if u := unreadB[key]; p.B == nil && u != nil {
			attached[u.Err] = true
		}
		if u := unreadA[key]; p.A == nil && u != nil {
			attached[u.Err] = true
		}
		if !opts.Shard.Holds(p.Step, p.Name) {
			continue
		}
		t := &TensorResult{Name: p.Name, Step: p.Step, Kind: p.Kind, A: p.A, B: p.B}
		switch {
		case p.B == nil && unreadB[key] != nil:
			t.Status, t.Err = StatusError, unreadB[key].Err
			t.Reasons = []string{"could not be read in " + b.Root}
		case p.A == nil && unreadA[key] != nil:
			t.Status, t.Err = StatusError, unreadA[key].Err
			t.Reasons = []string{"could not be read in " + a.Root}
		case p.B == nil:
			t.Status = StatusMissing
			t.Reasons = []string{"not in " + b.Root}
		case p.A == nil:
			t.Status = StatusExtra
			t.Reasons = []string{"not in " + a.Root}
		default:
			t.Settings = opts.Resolver.Resolve(p.Name, p.Kind, effective(p.A), effective(p.B), compute)
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
			t.Status = StatusShapeMismatch
			t.Reasons = []string{fmt.Sprintf("shape %s in %s, %s in %s",
				loaders.FormatShape(p.A.Shape), a.Root, loaders.FormatShape(p.B.Shape), b.Root)}
			continue
		}
		if p.A.DType.Components() != p.B.DType.Components() {
			t.Status = StatusDTypeMismatch
			t.Reasons = []string{fmt.Sprintf("dtype %s in %s, %s in %s", p.A.DType, a.Root, p.B.DType, b.Root)}
			continue
		}
		i, ok := stepIndex[p.Step]
		if !ok {
			i = len(steps)
			stepIndex[p.Step] = i
			steps = append(steps, nil)
		}
		steps[i] = append(steps[i], t)
	}
	if opts.Shard.reportsDiscovery() {
		runs := []*loaders.Run{a, b}
		if opts.Baseline != nil {
			runs = append(runs, opts.Baseline)
		}
		for _, r := range runs {
			for _, err := range r.Errors {
				if !attached[err] {
					res.Errors = append(res.Errors, err)
				}
			}
		}
	}
	// Steps in order, with step-less tensors last.
	sort.SliceStable(steps, func(i, j int) bool { return stepKey(steps[i][0].Step) < stepKey(steps[j][0].Step) })
	if opts.PlanHeads != nil {
		opts.PlanHeads(slices.Concat(steps...))
	}

	for i, group := range steps {
		var jobs []*job
		for _, t := range group {
			jobs = append(jobs, &job{result: t, a: t.A.Tensor, b: t.B.Tensor, settings: t.Settings})
			if e := baseline[[2]any{t.Step, t.Name}]; e != nil && slices.Equal(e.Shape, t.A.Shape) &&
				e.DType.Components() == t.A.DType.Components() {
				jobs = append(jobs, &job{result: t, a: t.A.Tensor, b: e.Tensor, settings: t.Settings, noise: true})
			}
		}
		runJobs(jobs, opts.Jobs, opts.Progress)
		failed := false
		for _, t := range group {
			judge(t)
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
	res.finish()
	return res, nil
}

// effective returns the dtype a tensor had in the training program.
func effective(e *loaders.Entry) loaders.DType {
	if e.Original != loaders.Invalid {
		return e.Original
	}
	return e.DType
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

func stepKey(step int) int {
	if step == loaders.NoStep {
		return int(^uint(0) >> 1)
	}
	return step
}

func removeAll(ts []*TensorResult, drop []*TensorResult) []*TensorResult {
	gone := map[*TensorResult]bool{}
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

// judge decides a compared pair's status from its metrics. The rule:
//
//	fail if NaN/±Inf positions differ between the runs, or
//	        rel_l2 > max_rel_l2, or
//	        wilson(mismatched, count) > max_mismatch_fraction
//	          and rel_l2 > max_rel_l2 / 3
//
// where wilson(k, n) is the lower end of the one-sided 95% Wilson score
// interval of the fraction k/n (z = 1.645):
//
//	(p + z²/2n − z·sqrt(p(1−p)/n + z²/4n²)) / (1 + z²/n),  p = k/n
//
// so that 2 of a 4-element bias beyond tolerance (wilson 0.18) is not read
// as half the tensor going wrong, while 4 of 4 (0.60) or 300 of 1,000
// (0.28) still fail at 25%. max_rel_l2 and max_mismatch_fraction are the
// dtype's defaults (or the policy's), each raised to NoiseFactor times the
// baseline's value when a baseline run shows more noise. Differing dtypes
// fail as dtype_mismatch, with the metrics still reported.
func judge(t *TensorResult) {
	if t.Status != "" || t.Metrics == nil {
		return
	}
	m, s := t.Metrics, t.Settings
	t.MaxRelL2, t.MaxMismatchFraction = s.MaxRelL2, s.MaxMismatchFraction
	if t.Noise != nil {
		t.MaxRelL2 = max(t.MaxRelL2, NoiseFactor*t.Noise.RelL2)
		t.MaxMismatchFraction = max(t.MaxMismatchFraction, min(1, NoiseFactor*t.Noise.MismatchFraction()))
	}
	if m.SpecialMismatches > 0 {
		t.Reasons = append(t.Reasons, fmt.Sprintf("NaN/Inf at different positions in %d elements (NaN %d vs %d, Inf %d vs %d)",
			m.SpecialMismatches, m.NaNA, m.NaNB, m.InfA, m.InfB))
	}
	if m.RelL2 > t.MaxRelL2 {
		t.Reasons = append(t.Reasons, fmt.Sprintf("relative L2 error %.3g > %.3g", m.RelL2, t.MaxRelL2))
	}
	if lo := wilsonLower(m.Mismatched, m.Count); lo > t.MaxMismatchFraction && m.RelL2 > t.MaxRelL2/fractionFloor {
		t.Reasons = append(t.Reasons, fmt.Sprintf("%d of %d elements (%.3g%%) beyond rtol %.3g, atol %.3g (limit %.3g%%)",
			m.Mismatched, m.Count, 100*m.MismatchFraction(), s.RTol, s.ATol, 100*t.MaxMismatchFraction))
	}
	switch {
	case effective(t.A) != effective(t.B):
		t.Status = StatusDTypeMismatch
		t.Reasons = append([]string{fmt.Sprintf("dtype %s vs %s", effective(t.A), effective(t.B))}, t.Reasons...)
	case len(t.Reasons) > 0:
		t.Status = StatusMismatch
	default:
		t.Status = StatusMatch
	}
}

// fractionFloor: the fraction test fails a pair only when its relative L2
// error is at least 1/fractionFloor of the limit. torch's elementwise
// tolerance for float32 (atol 1e-5) is stricter than the aggregate limit
// for values near 0.1, so without this floor a 4-element bias 1e-4 off
// would fail a run whose tensors are otherwise well inside the limits.
const fractionFloor = 3

// wilsonZ is the one-sided 95% normal quantile.
const wilsonZ = 1.645

// wilsonLower returns the lower end of the one-sided 95% Wilson score
// interval of the fraction k/n (0 for n = 0).
func wilsonLower(k, n int64) float64 {
	if n == 0 || k == 0 {
		return 0
	}
	p, nf, z2 := float64(k)/float64(n), float64(n), wilsonZ*wilsonZ
	return (p + z2/(2*nf) - wilsonZ*math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf))) / (1 + z2/nf)
}

// AllErrors returns every input that could not be read: Errors, then the
// errors of the unreadable pairs in pair order.
func (r *Result) AllErrors() []error {
	all := append([]error(nil), r.Errors...)
	for _, t := range r.Tensors {
		if t.Status == StatusError && t.Err != nil {
			all = append(all, t.Err)
		}
	}
	return all
}

// finish sets the verdict and the first divergence.
func (r *Result) finish() {
	failed, errored := false, len(r.Errors) > 0
	for _, t := range r.Tensors {
		switch {
		case t.Status == StatusError:
			errored = true
		case t.Failed():
			failed = true
		}
		if t.diverged() && (r.FirstDivergence == nil || stepKey(t.Step) < stepKey(r.FirstDivergence.Step)) {
			r.FirstDivergence = t
		}
	}
	switch {
	case errored:
		r.Verdict = Error
	case failed:
		r.Verdict = Fail
	default:
		r.Verdict = Pass
	}
}

// job compares one tensor pair (or the first run against the baseline).
type job struct {
	result   *TensorResult
	a, b     *loaders.Tensor
	settings tolerances.Settings
	noise    bool

	mu    sync.Mutex
	parts []*acc
	hist  *errorHistogram // for pairs split into chunks
	err   error
}

type chunkTask struct {
	job          *job
	chunk        int
	first, count int64
	whole        bool
}

// runJobs compares every job, splitting large pairs that can be read at
// any offset into chunks, on up to workers goroutines.
func runJobs(jobs []*job, workers int, progress func(int64)) {
	if workers <= 0 {
		workers = runtime.NumCPU()
	}
	var tasks []chunkTask
	for _, j := range jobs {
		n := j.a.Len()
		if j.a.FortranOrder != j.b.FortranOrder || !j.a.RandomAccess() || !j.b.RandomAccess() || n <= chunkElems {
			j.parts = make([]*acc, 1)
			tasks = append(tasks, chunkTask{job: j, whole: true})
			continue
		}
		chunks := int((n + chunkElems - 1) / chunkElems)
		j.parts = make([]*acc, chunks)
		j.hist = &errorHistogram{}
		for c := range chunks {
			first := int64(c) * chunkElems
			tasks = append(tasks, chunkTask{job: j, chunk: c, first: first, count: min(chunkElems, n-first)})
		}
	}
	next := make(chan chunkTask)
	var wg sync.WaitGroup
	for range min(workers, max(len(tasks), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := newWorker()
			defer workerPool.Put(w)
			for tk := range next {
				w.run(tk)
				if progress != nil {
					_, count := tk.span()
					progress(int64(tk.job.a.DType.Size()+tk.job.b.DType.Size()) * count)
				}
			}
		}()
	}
	for _, tk := range tasks {
		next <- tk
	}
	close(next)
	wg.Wait()
	for _, j := range jobs {
		j.finish()
	}
}

// span returns the task's first element and element count.
func (tk chunkTask) span() (first, count int64) {
	if tk.whole {
		return 0, tk.job.a.Len()
	}
	return tk.first, tk.count
}

// pairBufElems is how many elements a worker decodes from each side at a
// time: small enough that a Reader of any dtype returns exactly this many.
const pairBufElems = 1 << 16

type worker struct {
	bufA, bufB     []float64
	buf32A, buf32B []float32
	hist           errorHistogram
}

// workerPool keeps workers and their buffers (5 MiB each) from one runJobs
// call to the next: a run of thousands of steps calls it once per step.
var workerPool = sync.Pool{New: func() any {
	return &worker{bufA: make([]float64, 2*pairBufElems), bufB: make([]float64, 2*pairBufElems),
		buf32A: make([]float32, pairBufElems), buf32B: make([]float32, pairBufElems)}
}}

func newWorker() *worker { return workerPool.Get().(*worker) }

func (w *worker) run(tk chunkTask) {
	j := tk.job
	hist := &w.hist
	hist.reset()
	c, err := w.compare(tk, hist)
	j.mu.Lock()
	defer j.mu.Unlock()
	if err != nil {
		if j.err == nil {
			j.err = err
		}
		return
	}
	j.parts[tk.chunk] = c
	if tk.whole {
		m := c.metrics(hist, j.index())
		j.store(&m)
		return
	}
	j.hist.merge(hist)
}

// compare reads the task's elements from both sides in lock-step.
func (w *worker) compare(tk chunkTask, hist *errorHistogram) (*acc, error) {
	j := tk.job
	key := ulpKeyFor(j.settings.DType)
	complex := j.a.DType.IsComplex()
	useULP := true
	if j.a.FortranOrder != j.b.FortranOrder {
		return compareInMemory(j, key, complex, hist)
	}
	if j.a.DType.Float32Exact() && j.b.DType.Float32Exact() {
		return w.compare32(tk, hist, key)
	}
	var ra, rb *loaders.Reader
	var err error
	if tk.whole {
		ra, err = j.a.Open()
	} else {
		ra, err = j.a.OpenRange(tk.first, tk.count)
	}
	if err != nil {
		return nil, err
	}
	defer ra.Close()
	if tk.whole {
		rb, err = j.b.Open()
	} else {
		rb, err = j.b.OpenRange(tk.first, tk.count)
	}
	if err != nil {
		return nil, err
	}
	defer rb.Close()
	c := newAcc(j.settings.Tolerance, key, complex, useULP, hist, tk.first)
	comps := j.a.DType.Components()
	bufA, bufB := w.bufA[:pairBufElems*comps], w.bufB[:pairBufElems*comps]
	for {
		na, errA := ra.Read(bufA)
		nb, errB := rb.Read(bufB)
		if errA != nil && !errors.Is(errA, io.EOF) {
			return nil, errA
		}
		if errB != nil && !errors.Is(errB, io.EOF) {
			return nil, errB
		}
		if na != nb {
			return nil, fmt.Errorf("%s: internal error: read %d and %d values", j.a.Path, na, nb)
		}
		if na == 0 {
			return c, nil
		}
		if complex {
			c.addComplex(bufA[:na], bufB[:nb])
		} else {
			c.addReal(bufA[:na], bufB[:nb])
		}
	}
}

// mapMinElems is the smallest read that is memory-mapped (1 MiB of
// float32); a variable so tests can map small tensors.
var mapMinElems int64 = 1 << 18

// float32Source hands out a tensor's elements as float32, in pieces: from a
// memory map of the file where the data is float32 in place, else decoded
// through a Reader into a buffer.
type float32Source struct {
	t       *loaders.Tensor
	view    []float32 // float32 in place
	raw     []byte    // other dtypes in place, decoded into buf
	es      int
	release func()
	r       *loaders.Reader
	buf     []float32
	pos     int
}

func openFloat32(t *loaders.Tensor, tk chunkTask, buf []float32) (*float32Source, error) {
	first, count := tk.span()
	// Mapping costs two system calls and a fault per page: worth it for
	// large reads only; small tensors are read in one go.
	if t.Float32Native() && count >= mapMinElems {
		view, release, err := t.MapFloat32(first, count)
		if err == nil {
			return &float32Source{view: view, release: release}, nil
		}
	}
	if t.Mappable() && count >= mapMinElems {
		raw, release, err := t.MapBytes(first, count)
		if err == nil {
			return &float32Source{t: t, raw: raw, es: t.DType.Size(), release: release, buf: buf}, nil
		}
	}
	var r *loaders.Reader
	var err error
	if tk.whole {
		r, err = t.Open()
	} else {
		r, err = t.OpenRange(first, count)
	}
	if err != nil {
		return nil, err
	}
	return &float32Source{r: r, buf: buf}, nil
}

// next returns the next n elements (fewer at the end).
func (s *float32Source) next(n int) ([]float32, error) {
	if s.raw != nil {
		raw := s.nextRaw(n)
		m := len(raw) / s.es
		s.t.DecodeFloat32(s.buf[:m], raw)
		return s.buf[:m], nil
	}
	if s.r == nil {
		m := min(n, len(s.view)-s.pos)
		out := s.view[s.pos : s.pos+m]
		s.pos += m
		return out, nil
	}
	k, err := s.r.ReadFloat32(s.buf[:n])
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return s.buf[:k], err
}

// nextRaw is next for a source of bytes in place, without decoding.
func (s *float32Source) nextRaw(n int) []byte {
	m := min(n, len(s.raw)/s.es-s.pos)
	out := s.raw[s.pos*s.es : (s.pos+m)*s.es]
	s.pos += m
	return out
}

// mixedSides returns the float32 side and the bfloat16 side of a pair that
// addMixed can compare with the bfloat16 side in place: one side float32
// in place, the other little-endian bfloat16 in place, and bfloat16 ULP
// distances. ok is false for any other pair.
func mixedSides(sa, sb *float32Source, mode ulpMode) (s32, s16 *float32Source, ok bool) {
	bf16 := func(s *float32Source) bool {
		return s.raw != nil && s.t.DType == loaders.BFloat16 && !s.t.BigEndian
	}
	switch {
	case mode == ulpBFloat16|ulpRoundA && sa.view != nil && bf16(sb):
		return sa, sb, true
	case mode == ulpBFloat16|ulpRoundB && bf16(sa) && sb.view != nil:
		return sb, sa, true
	}
	return nil, nil, false
}

func (s *float32Source) close() {
	if s.release != nil {
		s.release()
	}
	if s.r != nil {
		s.r.Close()
	}
}

// compare32 compares a pair whose values are all float32 with the float32
// kernel, reading mapped files in place. A file truncated while mapped
// faults on access; the fault becomes an error naming the file.
func (w *worker) compare32(tk chunkTask, hist *errorHistogram, key ulpKey) (c *acc, err error) {
	j := tk.job
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if p := recover(); p != nil {
			if re, ok := p.(runtime.Error); ok && strings.Contains(re.Error(), "fault") {
				c, err = nil, &loaders.Error{Path: j.a.Path + " or " + j.b.Path, Err: fmt.Errorf("data changed while being read (file truncated?): %v", re)}
				return
			}
			panic(p)
		}
	}()
	mode := ulpKeyFunc
	switch {
	case j.settings.DType == loaders.Float32 && j.a.DType == loaders.Float32 && j.b.DType == loaders.Float32:
		mode = ulpFloat32
	case j.settings.DType == loaders.BFloat16 && (j.a.DType == loaders.BFloat16 || j.a.DType == loaders.Float32) &&
		(j.b.DType == loaders.BFloat16 || j.b.DType == loaders.Float32):
		mode = ulpBFloat16 // bfloat16, or float32 rounded to it
		if j.a.DType == loaders.Float32 {
			mode |= ulpRoundA
		}
		if j.b.DType == loaders.Float32 {
			mode |= ulpRoundB
		}
	}
	if c, ok, err := compareMapped16(tk, hist, key, mode); ok {
		return c, err
	}
	sa, err := openFloat32(j.a, tk, w.buf32A)
	if err != nil {
		return nil, err
	}
	defer sa.close()
	sb, err := openFloat32(j.b, tk, w.buf32B)
	if err != nil {
		return nil, err
	}
	defer sb.close()
	c = newAcc(j.settings.Tolerance, key, false, true, hist, tk.first)
	if s32, s16, ok := mixedSides(sa, sb, mode); ok {
		w.compareMixed(tk, c, s32, s16, mode)
		return c, nil
	}
	for {
		va, errA := sa.next(pairBufElems)
		if errA != nil {
			return nil, errA
		}
		vb, errB := sb.next(len(va))
		if errB != nil {
			return nil, errB
		}
		if len(va) != len(vb) {
			return nil, fmt.Errorf("%s: internal error: read %d and %d values", j.a.Path, len(va), len(vb))
		}
		if len(va) == 0 {
			return c, nil
		}
		if c.n == 0 && tk.first == 0 {
			j.keepHeads(va, vb)
		}
		c.addF32(va, vb, mode)
	}
}

// compareMixed folds a pair that mixedSides accepted with addMixed, the
// bfloat16 side read in place.
func (w *worker) compareMixed(tk chunkTask, c *acc, s32, s16 *float32Source, mode ulpMode) {
	j := tk.job
	for {
		v, _ := s32.next(pairBufElems) // in place: no error
		if len(v) == 0 {
			return
		}
		raw := s16.nextRaw(len(v))
		if c.n == 0 && tk.first == 0 {
			h := w.buf32B[:len(v)]
			s16.t.DecodeFloat32(h, raw)
			j.keepHeads(mode.mixedSides(v, h))
		}
		c.addMixed(v, raw, s16.t, mode, w.buf32B)
	}
}

// keepHeads keeps the pair's leading values as its result asks
// (TensorResult.HeadWant), given the first piece of each side.
func (j *job) keepHeads(va, vb []float32) {
	t := j.result
	if j.noise || t.HeadWant == 0 || int64(len(va)) < min(int64(t.HeadWant), j.a.Len()) {
		return
	}
	n := min(t.HeadWant, len(va))
	t.HeadA, t.HeadB = make([]float64, n), make([]float64, n)
	for i := range n {
		t.HeadA[i], t.HeadB[i] = float64(va[i]), float64(vb[i])
	}
}

// compareMapped16 compares a pair of large bfloat16 or float16 tensors of
// one dtype, little-endian in place in their files, with add16 over memory
// maps. ok is false when the pair is not such a pair or cannot be mapped;
// the caller then decodes through float32.
func compareMapped16(tk chunkTask, hist *errorHistogram, key ulpKey, mode ulpMode) (c *acc, ok bool, err error) {
	j := tk.job
	a, b := j.a, j.b
	first, count := tk.span()
	if a.DType != b.DType || (a.DType != loaders.BFloat16 && a.DType != loaders.Float16) ||
		a.BigEndian || b.BigEndian || !a.Mappable() || !b.Mappable() || count < mapMinElems {
		return nil, false, nil
	}
	ra, releaseA, err := a.MapBytes(first, count)
	if err != nil {
		return nil, false, nil
	}
	defer releaseA()
	rb, releaseB, err := b.MapBytes(first, count)
	if err != nil {
		return nil, false, nil
	}
	defer releaseB()
	c = newAcc(j.settings.Tolerance, key, false, true, hist, first)
	const piece = 2 * pairBufElems // bytes per call: the progress granularity of the other paths
	for off := 0; off < len(ra); off += piece {
		end := min(off+piece, len(ra))
		c.add16(ra[off:end], rb[off:end], a, mode) // b: same dtype and byte order
	}
	return c, true, nil
}

// compareInMemory handles a pair stored in different orders (one C, one
// Fortran): both are read whole into memory in C order. This is the one
// case whose memory grows with the tensor.
func compareInMemory(j *job, key ulpKey, complex bool, hist *errorHistogram) (*acc, error) {
	va, err := readC(j.a)
	if err != nil {
		return nil, err
	}
	vb, err := readC(j.b)
	if err != nil {
		return nil, err
	}
	c := newAcc(j.settings.Tolerance, key, complex, true, hist, 0)
	if complex {
		c.addComplex(va, vb)
	} else {
		c.addReal(va, vb)
	}
	return c, nil
}

// readC reads a whole tensor into memory in C order.
func readC(t *loaders.Tensor) ([]float64, error) {
	r, err := t.Open()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	comps := int64(t.DType.Components())
	out := make([]float64, t.Len()*comps)
	buf := make([]float64, pairBufElems*comps)
	var pos int64
	for {
		n, err := r.Read(buf)
		for i := 0; i < n; i += int(comps) {
			c := t.CPosition(t.Index(pos))
			copy(out[c*comps:], buf[i:i+int(comps)])
			pos++
		}
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// index maps a storage position of the compared stream to a C-order index.
func (j *job) index() func(int64) []int {
	if j.a.FortranOrder != j.b.FortranOrder {
		c := &loaders.Tensor{Shape: j.a.Shape} // compared in C order
		return c.Index
	}
	return j.a.Index
}

func (j *job) store(m *Metrics) {
	if j.noise {
		j.result.Noise = m
	} else {
		j.result.Metrics = m
	}
}

// finish merges a chunked pair's parts in order, or records its error.
func (j *job) finish() {
	if j.err != nil {
		if !j.noise {
			j.result.Status = StatusError
			j.result.Err = j.err
		}
		return
	}
	if j.hist == nil {
		return // a whole-tensor task stored its metrics already
	}
	total := j.parts[0]
	for _, p := range j.parts[1:] {
		total.merge(p)
	}
	m := total.metrics(j.hist, j.index())
	j.store(&m)
}

type pairKey struct {
	step int
	name string
}

// unreadableByKey indexes a run's unreadable tensors by step and name.
func unreadableByKey(r *loaders.Run) map[pairKey]*loaders.Unreadable {
	m := make(map[pairKey]*loaders.Unreadable, len(r.Unreadable))
	for _, u := range r.Unreadable {
		m[pairKey{u.Step, u.Name}] = u
	}
	return m
}
