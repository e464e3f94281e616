package diagnose

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/graphdiff/graphdiff/judge"
	"github.com/graphdiff/graphdiff/loaders"
	"github.com/graphdiff/graphdiff/tolerances"
)

// outputScaleFinding is a scale factor between the runs' outputs that
// depart, at every step they depart at (outputScale).
type outputScaleFinding struct {
	step  int      // the first step the outputs depart at
	names []string // the outputs that depart, each once
	// forms says which were compared in a probability's form
	// (probabilityForm): "NAME compared as FORM"
	forms []string
	// ratio and cos are the first departing output's factor and cosine
	// at step; residual the largest sin θ over every departing output
	// and step, limit the step's output limit it is held against.
	ratio, cos, residual, limit float64
	exact                       bool
	fits                        fitSet
}

// outputScale: in outputs-only dumps (inference), every output pair (an
// output, or a tensor of no kind known: a served model's predictions) that
// fails, at every step from the first divergence on, is the eager one
// times a factor (proportional), with a fit of at least minScaleFit: a
// temperature or other scale frozen at capture, acting at the end of the
// forward. A pair of probabilities that is no scale as it stands is
// compared in the form a temperature scales (probabilityForm): a softmax
// at temperature T gives log p = z/T − log Σ e^{z/T}, whose centered form
// is z/T less its row's mean, and a sigmoid gives log-odds
// log(p/(1 − p)) = z/T; with the graph's temperature frozen at T₀ while
// eager's moves to T, either is eager's times T/T₀. The outputs before
// the scalar (the logits, where dumped) agree and are not looked at. nil
// where some failing output is no scale of eager's, or none could be read.
//
// On a passing comparison the outputs that depart are those that differ
// at all (every pair within its limit): a scale of them that is one up to
// rounding (exact) is no rounding, and proportionalWarning says so.
//
// Prediction: graph output = λ·eager output (in a probability's form, for
// probabilities) at every departing output and step.
func (f *facts) outputScale() *outputScaleFinding {
	if !f.inference() || f.pairHead == nil {
		return nil
	}
	// scale: b is a multiple of a other than 1 (proportional) that removes
	// at least minScaleFit of their difference
	off := f.warnOff(loaders.KindOutput)
	scale := func(a, b vec) (c, r, fit float64, ok bool) {
		ok, c, r = proportional(a, b, off)
		fit = fitOf(a, b, scaled(a, b))
		return c, r, fit, ok && fit >= minScaleFit
	}
	var sf *outputScaleFinding
	for _, t := range f.r.Tensors {
		if (t.Kind != loaders.KindOutput && t.Kind != loaders.KindTensor) || !f.departs(t) || t.A == nil || t.B == nil {
			continue
		}
		a, b := f.pairHead(t.Step, t.Kind, t.Name)
		if len(a) == 0 || len(a) != len(b) || relL2(a, b) == 0 {
			return nil
		}
		rowLen := 0
		if n := len(t.A.Shape); n > 0 && slices.Equal(t.A.Shape, t.B.Shape) && !t.A.FortranOrder {
			rowLen = int(t.A.Shape[n-1])
		}
		form := "" // a scale as the values stand, or else in a probability's form
		c, r, fit, ok := scale(a, b)
		if !ok {
			if a, b, form = probabilityForm(a, b, rowLen, tolerances.Epsilon(t.A.Effective())); form == "" {
				return nil
			}
			if c, r, fit, ok = scale(a, b); !ok {
				return nil
			}
		}
		if sf == nil {
			sf = &outputScaleFinding{step: t.Step, ratio: r, cos: c, limit: f.outputLimit(t.Step), exact: true}
		}
		if !slices.Contains(sf.names, t.Name) {
			sf.names = append(sf.names, t.Name)
			if form != "" {
				sf.forms = append(sf.forms, fmt.Sprintf("%s compared as %s", t.Name, form))
			}
		}
		res := math.Sqrt(max(0, 1-c*c))
		sf.residual = max(sf.residual, res)
		sf.exact = sf.exact && res <= f.outputLimit(t.Step)
		sf.fits.add(fit)
	}
	return sf
}

func (sf *outputScaleFinding) String() string {
	as := ""
	if len(sf.forms) > 0 {
		as = ", " + strings.Join(sf.forms, ", ") + ", which a temperature scales"
	}
	return fmt.Sprintf("from step %d on, the graphed outputs that depart (%s) are the eager ones × %s (cosine %.6f at step %d%s): a temperature or other scale frozen at capture", sf.step, strings.Join(sf.names, ", "), ratioString(sf.ratio), sf.cos, sf.step, as)
}

// distributions reports whether v's complete rows of n values are
// probability distributions: every value in [0, 1] and each row summing to
// 1 within n·eps (the bound on a sum of n values rounded to eps), with at
// least one complete row.
func distributions(v vec, n int, eps float64) bool {
	rows := len(v) / n
	if rows == 0 {
		return false
	}
	for r := range rows {
		sum := 0.0
		for _, x := range v[r*n : (r+1)*n] {
			if !(x >= 0 && x <= 1) {
				return false
			}
			sum += x
		}
		if math.Abs(sum-1) > float64(n)*eps {
			return false
		}
	}
	return true
}

// centeredLogs returns both runs' complete rows of n probabilities as
// log p minus the mean of the row's logs; a row where either run holds a
// 0 (a log of −∞) is 0 in both.
func centeredLogs(a, b vec, n int) (vec, vec) {
	rows := len(a) / n
	ca, cb := make(vec, rows*n), make(vec, rows*n)
	for r := range rows {
		if slices.Contains(a[r*n:(r+1)*n], 0) || slices.Contains(b[r*n:(r+1)*n], 0) {
			continue
		}
		for _, pair := range [2]struct{ in, out vec }{{a, ca}, {b, cb}} {
			mean := 0.0
			for i := r * n; i < (r+1)*n; i++ {
				pair.out[i] = math.Log(pair.in[i])
				mean += pair.out[i]
			}
			mean /= float64(n)
			for i := r * n; i < (r+1)*n; i++ {
				pair.out[i] -= mean
			}
		}
	}
	return ca, cb
}

// probabilityForm returns both runs' values in the form a temperature
// scales, and its name, where they are probabilities: complete rows of n
// values that are distributions (distributions) as centered
// log-probabilities (centeredLogs); values all in [0, 1] otherwise, each
// an event's probability (a sigmoid's), as log-odds log(p/(1 − p)), a
// value of 0 or 1 in either run (a log-odds of ±∞) 0 in both. "" where
// they are not probabilities.
func probabilityForm(a, b vec, n int, eps float64) (vec, vec, string) {
	if n > 1 && distributions(a, n, eps) && distributions(b, n, eps) {
		ca, cb := centeredLogs(a, b, n)
		return ca, cb, "centered log-probabilities (log p less its row's mean)"
	}
	unit := func(v vec) bool {
		for _, x := range v {
			if !(x >= 0 && x <= 1) {
				return false
			}
		}
		return true
	}
	if !unit(a) || !unit(b) {
		return nil, nil, ""
	}
	la, lb := make(vec, len(a)), make(vec, len(a))
	for i := range a {
		if a[i] > 0 && a[i] < 1 && b[i] > 0 && b[i] < 1 {
			la[i], lb[i] = math.Log(a[i]/(1-a[i])), math.Log(b[i]/(1-b[i]))
		}
	}
	return la, lb, "log-odds (log(p/(1 − p)))"
}

// departs reports whether a pair is one outputScale explains: a failed
// pair from the first divergence on where the comparison failed, and
// where it passed, a pair whose numbers differ at all.
func (f *facts) departs(t *judge.TensorResult) bool {
	if f.failed {
		return t.Status == judge.StatusMismatch && f.div != loaders.NoStep && t.Step >= f.div
	}
	return t.Status == judge.StatusMatch && t.Metrics != nil && t.Metrics.RelL2 > 0
}

// outputLimit returns the output limit the verdict applied at step k
// (judge.StepFacts.OutputLimit), or DefaultRunRules.Output·ε of the
// outputs' comparison dtype when the step was not judged as a whole.
func (f *facts) outputLimit(k int) float64 {
	if s := f.stepFacts(k); s != nil && s.OutputLimit > 0 {
		return s.OutputLimit
	}
	return tolerances.DefaultRunRules.Output * tolerances.Epsilon(f.compareDType(loaders.KindOutput))
}
