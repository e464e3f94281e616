package diagnose

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// fitOf returns how much of the graphed run's difference from the eager
// run a prediction p of the graphed values b removes:
//
//	fit = 1 − ‖b − p‖ / ‖b − a‖,
//
// 1 where p is b exactly, 0 for the null prediction "the graph is eager
// plus rounding" (p = a), negative where p is farther from b than a is.
// It is NaN where b equals a (nothing to explain) or a vector is empty.
func fitOf(a, b, p vec) float64 {
	if len(a) == 0 || len(a) != len(b) || len(p) != len(b) {
		return math.NaN()
	}
	d := norm(sub(b, a))
	if !(d > 0) {
		return math.NaN()
	}
	return 1 - norm(sub(b, p))/d
}

// fitSet gathers a prediction's fit at the steps it was tested at.
type fitSet []float64

// add records one step's fit, skipping NaN (nothing to explain there).
func (fs *fitSet) add(fit float64) {
	if finite(fit) {
		*fs = append(*fs, fit)
	}
}

// median returns the median fit and the number of steps, 0 steps when
// none was recorded.
func (fs fitSet) median() (float64, int) {
	if len(fs) == 0 {
		return 0, 0
	}
	return median(slices.Clone(fs))
}

// set writes the fit onto a cause (its Fit and FitSteps) and says it in
// its evidence, last but for a closing line on what was not dumped: "the
// prediction <what> removes N% of <of> (median of n steps; ...)".
func (fs fitSet) set(c *Cause, what, of string) *Cause {
	if c == nil {
		return nil
	}
	c.Fit, c.FitSteps = fs.median()
	if c.FitSteps == 0 {
		return c
	}
	over := "at one step"
	if c.FitSteps > 1 {
		over = fmt.Sprintf("median of %d steps", c.FitSteps)
	}
	line := fmt.Sprintf("the prediction %s removes %.0f%% of %s (%s; rounding alone would remove none)", what, 100*c.Fit, of, over)
	at := len(c.Evidence)
	if at > 0 && strings.HasPrefix(c.Evidence[at-1], "not dumped") {
		at--
	}
	c.Evidence = slices.Insert(slices.Clip(c.Evidence), at, line)
	return c
}

// scaled returns λ·a with λ = a·b / a·a, the multiple of a nearest b
// (a itself when a is zero).
func scaled(a, b vec) vec {
	var ab, aa float64
	for i := range a {
		if finite(a[i]) && finite(b[i]) {
			ab += a[i] * b[i]
			aa += a[i] * a[i]
		}
	}
	out := slices.Clone(a)
	if aa > 0 {
		for i := range out {
			out[i] *= ab / aa
		}
	}
	return out
}

// ranksAbove reports whether cause a is listed before cause b: the higher
// confidence first, and at one confidence, where both predictions were
// tested on numbers, the one that removes more of the difference. A fit
// and a signature with no numbers to test are not compared: such ties
// keep the order the detectors ran in.
func ranksAbove(a, b Cause) bool {
	if a.Confidence != b.Confidence {
		return a.Confidence > b.Confidence
	}
	return a.FitSteps > 0 && b.FitSteps > 0 && a.Fit > b.Fit
}
