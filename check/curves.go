package check

import (
	"fmt"
	"slices"

	"github.com/graphdiff/graphdiff/curve"
	"github.com/graphdiff/graphdiff/loaders"
	"github.com/graphdiff/graphdiff/tolerances"
)

// CurvesOptions control a check of two loss curves (Curves).
type CurvesOptions struct {
	// Read says how to read the curves.
	Read loaders.CurveOptions
	// Analysis are the analysis' settings; its ComputeDType, when set,
	// is the compute dtype the precision takes.
	Analysis curve.Options
	// Baseline is the path of a third curve, "" for none: a second
	// reference run whose weights were nudged by one unit in the last
	// place.
	Baseline string
	// ReferenceGraphed accepts run directories whose manifests say the
	// first is the graphed run and the second the eager one (SwappedRuns
	// otherwise), as Options.ReferenceGraphed does for Runs.
	ReferenceGraphed bool
}

// Curves reads the loss curves at pathA (the reference) and pathB (files,
// or run directories holding one) and analyses them with the given
// settings, in the precision a comparison of the same paths decides
// (decidePrecision: opts.Analysis.ComputeDType, else the manifests, and
// the model's dtype from the first gradients or parameters of run
// directories), so that `graphdiff curve` and `graphdiff compare` state
// the same loss in the same units. With a baseline, the compared curve
// also fails where it departs from the reference by more than the
// baseline shows rounding can carry it (curve.AnalyzeBaseline).
//
// It fails, before reading any curve, on run directories whose manifests
// say they are in the wrong order (*SwappedRuns), as Runs does, unless
// opts accept it; and it fails when any curve cannot be read, and when the
// curves share no step (nothing would be compared, and a pass would say
// they agree).
func Curves(pathA, pathB string, opts CurvesOptions) (*curve.Result, error) {
	var a, b *loaders.Run // the runs, where both paths are run directories that load
	if !loaders.IsFile(pathA) && !loaders.IsFile(pathB) {
		if ra, rb, err := loadBoth(pathA, pathB, opts.Read.Options, true); err == nil {
			a, b = ra, rb
		}
	}
	if a != nil {
		if err := checkOrder(a, b, opts.ReferenceGraphed); err != nil {
			return nil, err
		}
	}
	ca, err := loaders.ReadCurve(pathA, opts.Read)
	if err != nil {
		return nil, err
	}
	cb, err := loaders.ReadCurve(pathB, opts.Read)
	if err != nil {
		return nil, err
	}
	var cc *loaders.Curve
	if opts.Baseline != "" {
		if cc, err = loaders.ReadCurve(opts.Baseline, opts.Read); err != nil {
			return nil, err
		}
	}
	p := tolerances.NewPrecision(opts.Analysis.ComputeDType, loaders.Invalid)
	if a != nil {
		p = firstPrecision(a, b, opts.Analysis.ComputeDType)
	}
	res := curve.AnalyzeBaseline(ca, cb, cc, curveOptions(opts.Analysis, p))
	if len(res.Steps) == 0 {
		return nil, fmt.Errorf("%s (steps %s) and %s (steps %s) have no step in common: nothing to compare",
			pathA, stepRange(ca.Steps), pathB, stepRange(cb.Steps))
	}
	return res, nil
}

// stepRange says which steps a curve holds: "3", "0 to 99", or "none".
func stepRange(steps []int64) string {
	switch len(steps) {
	case 0:
		return "none"
	case 1:
		return fmt.Sprint(steps[0])
	}
	return fmt.Sprintf("%d to %d", slices.Min(steps), slices.Max(steps))
}

// firstPrecision decides the precision of two runs loaded deferred from
// the parts a comparison reads before its first pair (stepReader.
// readFirstParts), as a comparison of them would.
func firstPrecision(a, b *loaders.Run, compute loaders.DType) tolerances.Precision {
	pr := pairRuns(a, b, loaders.Shard{})
	rd := newStepReader(pr.held, pr.units, 0)
	defer rd.wait()
	rd.readFirstParts(false)
	return decidePrecision(a, b, compute)
}

// curveOptions returns the settings o with the rounding unit of precision
// p: its working epsilon, the unit the loss pairs are judged in, where p
// knows the compute or the model dtype and o sets no unit of its own;
// where p knows neither (loss curves alone: no gradient, parameter,
// manifest or flag), the curves' own dtype decides, as curve.Options
// documents: the curve's history, not a guess at TF32, then bounds its
// noise. Such a run's loss pairs are still judged in p.Epsilon, so its
// report states them and its curve in different units, until
// --compute-dtype names one. The compute dtype reported is p.Coarsest.
func curveOptions(o curve.Options, p tolerances.Precision) curve.Options {
	if p.Compute == loaders.Invalid && p.Model == loaders.Invalid {
		return o
	}
	if o.RTol == 0 {
		o.RTol = p.Epsilon
	}
	o.ComputeDType = p.Coarsest()
	return o
}
