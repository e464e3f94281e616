package check

import (
	"errors"
	"slices"

	"github.com/graphdiff/graphdiff/curve"
	"github.com/graphdiff/graphdiff/diagnose"
	"github.com/graphdiff/graphdiff/internal/words"
	"github.com/graphdiff/graphdiff/judge"
	"github.com/graphdiff/graphdiff/loaders"
	"github.com/graphdiff/graphdiff/outcome"
	"github.com/graphdiff/graphdiff/tolerances"
)

// Options control a check of two runs.
type Options struct {
	// Load says how to read files whose dtype they do not record.
	Load loaders.Options
	// Resolver decides each pair's tolerance and thresholds; its
	// Overrides.ComputeDType, when set, is the compute dtype the
	// comparison's Precision takes.
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
	// ReferenceGraphed accepts a first run whose manifest says it is the
	// graphed one beside a second whose manifest says eager (SwappedRuns
	// otherwise).
	ReferenceGraphed bool
	// Renames map names of the first run (and the baseline) to those of
	// the second, applied before pairing (loaders.RenameEntries).
	Renames []loaders.Rename

	// readFirst reads every file before comparing, as Load would, rather
	// than a step at a time; keepNoHeads makes the comparison keep none of
	// the values diagnosis samples (they are read from the files then);
	// partPairs is the most pairs of a part of a step (partPairsDefault
	// when 0). Results do not depend on them; tests set them to check so.
	readFirst, keepNoHeads bool
	partPairs              int
}

// ErrShardFailFast is returned for Options with both Shard and FailFast.
var ErrShardFailFast = errors.New("fail-fast cannot be combined with sharding: a shard cannot see the other shards' failures")

// Runs checks the run at pathB against the reference run at pathA (each a
// run directory or a single tensor file). The stages, each a function from
// values to values:
//
//  1. load both runs (and the baseline) and pair their tensors (pairRuns);
//  2. decide the Precision from the flags, the manifests and the first
//     gradients or parameters read (decidePrecision);
//  3. step by step: classify each pair, compare the pairs to compare,
//     measure the parameters' updates, judge the step, and build each
//     pair's result once (compareSteps);
//  4. the run's verdict and first divergence (judge.Run), into the Result;
//  5. the loss curves, in the same Precision (runCurves);
//  6. the samples diagnosis plans, and the diagnosis (diagnoseResult);
//  7. --strict (applyStrict).
//
// It fails on invalid options (a bad Shard, or Shard with FailFast), on
// a run that cannot be loaded at all, and on inputs that cannot be
// compared as given, before comparing anything: a file against a
// directory (*FileAndDirectory), a run that holds nothing (*NoTensors),
// runs whose manifests say they are in the wrong order (*SwappedRuns),
// renames that rename nothing (*RenameError). Unreadable tensors are
// reported in the comparison.
func Runs(pathA, pathB string, opts Options) (*outcome.Comparison, error) {
	if err := opts.check(); err != nil {
		return nil, err
	}
	if err := checkPaths(pathA, pathB); err != nil {
		return nil, err
	}
	// Runs are read a step at a time (each small file opened once), except
	// for a shard, which reports only its pairs' files but must not lose
	// the errors of the others' (shard 1 reports them all, as discovery
	// finds them), and for a progress bar, whose total is known once every
	// file's header is read.
	if opts.Shard != (loaders.Shard{}) || opts.Progress != nil {
		opts.readFirst = true
	}
	a, b, baseline, err := loadRuns(pathA, pathB, opts)
	if err != nil {
		return nil, err
	}
	c, err := runSteps(a, b, baseline, opts)
	if _, ok := errors.AsType[*coarserPrecision](err); ok {
		// A later step stores gradients or parameters in a coarser dtype
		// than the steps read first: the precision is decided again from
		// every file's header, and the comparison made again in it. This
		// costs a second reading of the steps compared before; a run whose
		// weights change dtype after its first step is rare.
		again := opts
		again.readFirst, again.Planned = true, nil // told already
		c, err = runSteps(a, b, baseline, again)
	}
	if err != nil {
		return nil, err
	}
	var cv *curve.Result
	if opts.Shard.Index <= 1 { // shard 1 carries the curve
		cv = runCurves(a, b, opts.Load, c.result.Precision)
	}
	plan, heads := c.heads()
	return finish(c.result, plan, heads, cv, opts.Strict), nil
}

// check refuses options that cannot apply.
func (o Options) check() error {
	if o.Shard == (loaders.Shard{}) {
		return nil
	}
	if err := o.Shard.Check(); err != nil {
		return err
	}
	if o.FailFast {
		return ErrShardFailFast
	}
	return nil
}

// loadRuns loads the two runs (deferred unless opts.readFirst) and the
// baseline, checks that they can be compared as given (checkRuns),
// renames the tensors of the reference runs (opts.Renames) and pairs
// their single files.
func loadRuns(pathA, pathB string, opts Options) (a, b, baseline *loaders.Run, err error) {
	if a, b, err = loadBoth(pathA, pathB, opts.Load, !opts.readFirst); err != nil {
		return nil, nil, nil, err
	}
	if err := checkRuns(a, b, opts); err != nil {
		return nil, nil, nil, err
	}
	if err := renameRun(a, opts.Renames); err != nil {
		return nil, nil, nil, err
	}
	loaders.PairSingleFiles(a, b)
	if opts.Baseline != "" {
		if baseline, err = loaders.Load(opts.Baseline, opts.Load); err != nil {
			return nil, nil, nil, err
		}
		if _, err := loaders.RenameEntries(baseline, opts.Renames); err != nil {
			if c, ok := errors.AsType[*loaders.RenameCollision](err); ok {
				err = &RenameError{Rename: c.Rename, Run: baseline.Root, Err: err}
			}
			return nil, nil, nil, err
		}
		loaders.PairSingleFiles(a, baseline)
	}
	return a, b, baseline, nil
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

// finish finds the tensors the runs seem to hold under two names
// (likelyRenames), diagnoses the result without them from the heads read
// for it as plan says (nil: planned again), and applies --strict. Where
// only renamed pairs fail, nothing is diagnosed: the renames are the
// answer.
func finish(r *judge.Result, plan *diagnose.Plan, heads diagnose.Heads, cv *curve.Result, strict bool) *outcome.Comparison {
	renames := likelyRenames(r.Tensors)
	var diag diagnose.Report
	if view := diagnosable(r, renames); view == r || view.Verdict != judge.Pass {
		diag = diagnose.DiagnosePlanned(view, plan, heads)
	}
	r, causes := applyStrict(r, diag, strict)
	return &outcome.Comparison{Result: r, Causes: causes, Warnings: diag.Warnings, Unexplained: diag.Unexplained, Curve: cv,
		Strict: strict, Baseline: judge.Baseline(r), Renames: renames}
}

// applyStrict returns the result and the causes a comparison reports:
// with strict, warnings (all but noise_drift, which is rounding noise the
// rules explain) fail a passing verdict, in a copy of r, and lead the
// causes; otherwise r and the diagnosis' causes as they are.
func applyStrict(r *judge.Result, diag diagnose.Report, strict bool) (*judge.Result, []diagnose.Cause) {
	if !strict || r.Verdict != judge.Pass || !slices.ContainsFunc(diag.Warnings, func(c diagnose.Cause) bool { return c.ID != diagnose.NoiseDrift }) {
		return r, diag.Causes
	}
	failed := *r
	failed.Verdict = judge.Fail
	return &failed, append(slices.Clip(diag.Warnings), diag.Causes...)
}

// runCurves analyses the loss curves of two run directories with the
// default settings, in the comparison's precision p (curveOptions), nil
// when either is a file, holds no curve of two or more steps, or the two
// curves share no step.
func runCurves(a, b *loaders.Run, lo loaders.Options, p tolerances.Precision) *curve.Result {
	if loaders.IsFile(a.Root) || loaders.IsFile(b.Root) {
		return nil
	}
	ca, errA := loaders.CurveOf(a, loaders.CurveOptions{Options: lo})
	cb, errB := loaders.CurveOf(b, loaders.CurveOptions{Options: lo})
	if errA != nil || errB != nil || len(ca.Steps) < 2 || len(cb.Steps) < 2 {
		return nil
	}
	if res := curve.Analyze(ca, cb, curveOptions(curve.DefaultOptions(), p)); len(res.Steps) > 0 {
		return res
	}
	return nil
}

// plural says "1 tensor" or "3 tensors".
var plural = words.Plural
