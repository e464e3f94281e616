package check

import (
	"fmt"
	"slices"

	"github.com/graphdiff/graphdiff/curve"
	"github.com/graphdiff/graphdiff/loaders"
	"github.com/graphdiff/graphdiff/tolerances"
)

// Curves reads the loss curves at pathA (the reference) and pathB (files,
// or run directories holding one) and analyses them with the given
// settings, in the precision a comparison of the same paths decides
// (decidePrecision: analysis.ComputeDType, else the manifests, and the
// model's dtype from the first gradients or parameters of run
// directories), so that `graphdiff curve` and `graphdiff compare` state
// the same loss in the same units. With a baseline (a path, "" for none:
// a second reference run whose weights were nudged by one unit in the last
// place), the compared curve also fails where it departs from the
// reference by more than the baseline shows rounding can carry it
// (curve.AnalyzeBaseline). It fails when any curve cannot be
// read, and when the curves share no step (nothing would be compared, and
// a pass would say they agree).
func Curves(pathA, pathB, baseline string, read loaders.CurveOptions, analysis curve.Options) (*curve.Result, error) {
	ca, err := loaders.ReadCurve(pathA, read)
	if err != nil {
		return nil, err
	}
	cb, err := loaders.ReadCurve(pathB, read)
	if err != nil {
		return nil, err
	}
	var cc *loaders.Curve
	if baseline != "" {
		if cc, err = loaders.ReadCurve(baseline, read); err != nil {
			return nil, err
		}
	}
	p := tolerances.NewPrecision(analysis.ComputeDType, loaders.Invalid)
	if !loaders.IsFile(pathA) && !loaders.IsFile(pathB) {
		if a, b, err := loadBoth(pathA, pathB, read.Options, true); err == nil {
			p = firstPrecision(a, b, analysis.ComputeDType)
		}
	}
	res := curve.AnalyzeBaseline(ca, cb, cc, curveOptions(analysis, p))
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
