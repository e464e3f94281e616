package check

import (
	"errors"
	"io"
	"runtime"
	"slices"

	"github.com/graphdiff/graphdiff/curve"
	"github.com/graphdiff/graphdiff/diagnose"
	"github.com/graphdiff/graphdiff/internal/parallel"
	"github.com/graphdiff/graphdiff/internal/words"
	"github.com/graphdiff/graphdiff/judge"
	"github.com/graphdiff/graphdiff/loaders"
	"github.com/graphdiff/graphdiff/tolerances"
)

// Comparison is a finished check of two runs: the judged result, its
// diagnosis and the loss-curve analysis. It is what the renderers take.
type Comparison struct {
	*judge.Result
	// Causes are the likely causes, highest confidence first; Warnings the
	// structured differences found inside the thresholds.
	Causes, Warnings []diagnose.Cause
	// Curve is the analysis of the runs' loss curves, nil when they hold
	// none.
	Curve *curve.Result
	// Strict is set when warnings fail the verdict (--strict).
	Strict bool
	// BaselineIdentical is set when a baseline run was given and repeats
	// the reference bit for bit (judge.BaselineMeasuresNothing).
	BaselineIdentical bool
}

// pairKey names a pair by step and name.
type pairKey struct {
	Step int
	Name string
}

// finish diagnoses a result from the heads read for it as plan says (nil:
// planned again); with strict, warnings fail a passing verdict and lead
// the causes (all but noise_drift, which is rounding noise the rules
// explain).
func finish(r *judge.Result, plan *diagnose.Plan, heads diagnose.Heads, cv *curve.Result, strict bool) *Comparison {
	diag := diagnose.DiagnosePlanned(r, plan, heads)
	if strict && r.Verdict == judge.Pass && slices.ContainsFunc(diag.Warnings, func(c diagnose.Cause) bool { return c.ID != diagnose.NoiseDrift }) {
		r.Verdict = judge.Fail
		diag.Causes = append(diag.Warnings, diag.Causes...)
	}
	return &Comparison{Result: r, Causes: diag.Causes, Warnings: diag.Warnings, Curve: cv, Strict: strict,
		BaselineIdentical: judge.BaselineMeasuresNothing(r.Tensors)}
}

// heads returns the plan of diagnosis' samples over the finished pairs
// and the leading values it asks for: those the comparison kept where it
// kept enough, read from the files elsewhere. A pair that cannot be read,
// or whose two sides give different counts, has none.
func (c *compared) heads() (*diagnose.Plan, diagnose.Heads) {
	plan := diagnose.NewPlan(c.result.Tensors)
	wants := plan.Wants()
	heads := plan.NewHeads()
	// several at a time: looking 16,000 pairs up took 4 ms on one
	// processor, and thousands of small files wait on the file system
	parallel.For(len(wants), 2*runtime.GOMAXPROCS(0), func(i int) {
		w := wants[i]
		if o, ok := c.kept[w.Pair]; ok && len(o.HeadA) >= w.N && len(o.HeadB) >= w.N {
			heads.Set(i, diagnose.Head{A32: o.HeadA[:w.N], B32: o.HeadB[:w.N]})
			return
		}
		e, ok := c.pairs[w.Pair]
		if !ok || e.a == nil || e.b == nil {
			return
		}
		da, db := make([]float64, w.N), make([]float64, w.N)
		na, errA := headInto(e.a.Tensor, da)
		nb, errB := headInto(e.b.Tensor, db)
		if errA == nil && errB == nil && na == nb {
			heads.Set(i, diagnose.Head{A: da[:na], B: db[:nb]})
		}
	})
	return plan, heads
}

// headInto reads the first len(dst) values of a tensor into dst and
// returns how many it read (fewer at the end of the tensor).
func headInto(t *loaders.Tensor, dst []float64) (int, error) {
	var r *loaders.Reader
	var err error
	if t.RandomAccess() {
		r, err = t.OpenRange(0, min(t.Len(), int64(len(dst))))
	} else {
		r, err = t.Open()
	}
	if err != nil {
		return 0, err
	}
	defer r.Close()
	n := 0
	for n < len(dst) {
		var k int
		var err error
		if len(dst)-n < t.DType.Components() { // half a complex value left
			var last [2]float64
			k, err = r.Read(last[:])
			k = copy(dst[n:], last[:k])
		} else {
			k, err = r.Read(dst[n:])
		}
		n += k
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// runCurves analyses the loss curves of two run directories with the
// default settings, in rounding units of the working epsilon the step
// verdict uses (judge.WorkingEpsilon of the compute and the model dtype),
// nil when either is a file or holds no curve of two or more steps.
func runCurves(a, b *loaders.Run, lo loaders.Options, compute, model loaders.DType) *curve.Result {
	if loaders.IsFile(a.Root) || loaders.IsFile(b.Root) {
		return nil
	}
	ca, errA := loaders.CurveOf(a, loaders.CurveOptions{Options: lo})
	cb, errB := loaders.CurveOf(b, loaders.CurveOptions{Options: lo})
	if errA != nil || errB != nil || len(ca.Steps) < 2 || len(cb.Steps) < 2 {
		return nil
	}
	o := curve.DefaultOptions()
	o.ComputeDType = compute
	if model != loaders.Invalid && (compute == loaders.Invalid || tolerances.Epsilon(model) > tolerances.Epsilon(compute)) {
		o.ComputeDType = model
	}
	// the rounding unit the step verdict works in, TF32's for float32
	// models included
	o.RTol = judge.WorkingEpsilon(compute, model)
	return curve.Analyze(ca, cb, o)
}

// plural says "1 tensor" or "3 tensors".
var plural = words.Plural
