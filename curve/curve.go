package curve

import (
	"fmt"
	"math"
	"slices"

	"github.com/graphdiff/graphdiff/internal/words"
	"github.com/graphdiff/graphdiff/judge"
	"github.com/graphdiff/graphdiff/loaders"
	"github.com/graphdiff/graphdiff/tolerances"
)

// Curve patterns.
const (
	PatternIdentical   = "identical"    // bit for bit
	PatternWithinNoise = "within_noise" // differences never leave one rounding unit
	PatternDrift       = "drift"        // differences grow past rounding without a break: passes
	PatternSudden      = "sudden"       // a jump over the run's own earlier difference
	PatternShift       = "shift"        // the level of the difference moved: a slow break
	PatternNaN         = "nan"          // one run goes NaN or ±Inf where the other does not
)

// Options are the loss-curve analysis settings. Start from
// DefaultOptions.
type Options struct {
	// RTol is the relative rounding unit ε_c the differences are measured
	// in: a difference of 1 at step t is ε_c·|a_t|. Zero takes the
	// epsilon of ComputeDType, else of the curves' dtype (2^-23 for
	// float32, 2^-7 for bfloat16).
	RTol float64
	// ATol is an absolute floor of the unit, for losses near zero.
	// Default 0.
	ATol float64
	// Jump is how many times the largest difference of the last Window
	// steps a step must exceed to start a break (J). Default 10.
	Jump float64
	// Window is how many previous steps the history and the level test
	// look at (W). Default 50.
	Window int
	// AllowedFailingSteps is how many of the five steps from a candidate
	// jump may stay under its band without it being a spike. Default 2 (a
	// break needs 3 of 5).
	AllowedFailingSteps int
	// Level is the level test's threshold (T*): how many standard errors
	// of the reference curve's own step-to-step noise the mean difference
	// over Window steps must reach to be a shift. Default 8.
	Level float64
	// MaxDrift, when positive, fails a drift whose mean relative
	// difference over Window steps passes it. Default 0: drift that stays
	// drift passes.
	MaxDrift float64
	// DType is the curves' dtype when the files do not say (Invalid: from
	// the files, else guessed from the values).
	DType loaders.DType
	// ComputeDType is the dtype the model computed the losses in (bf16
	// models and autocast store float32 losses with bf16 rounding):
	// Invalid for the curves' dtype.
	ComputeDType loaders.DType
}

// confirmSteps is how many steps from a candidate jump are looked at.
const confirmSteps = 5

// DefaultOptions returns the documented defaults.
func DefaultOptions() Options {
	return Options{Jump: 10, Window: 50, AllowedFailingSteps: 2, Level: 8}
}

// withDefaults returns o with RTol set for curves of dtype d when zero.
func (o Options) withDefaults(d loaders.DType) Options {
	if o.RTol == 0 {
		c := o.ComputeDType
		if c == loaders.Invalid || tolerances.Epsilon(c) < tolerances.Epsilon(d) {
			c = d
		}
		o.RTol = tolerances.Epsilon(c)
	}
	o.Window = max(o.Window, 1)
	o.DType = d
	return o
}

// Result is the analysis of two loss curves.
type Result struct {
	// A and B describe the reference and the compared curve's sources.
	A, B    string
	Verdict judge.Verdict
	Pattern string
	// FirstDivergentStep is the step where the curves part (a break's
	// start, the first NaN, or where a drift passes MaxDrift), nil when
	// they do not.
	FirstDivergentStep *int64
	// Options are the settings used, defaults filled in.
	Options Options
	// Per common step: the step, both values, |b−a|, |b−a|/|a|, the jump
	// band (a relative difference) the step was judged against, the mean
	// relative difference of the last Window steps, and the level
	// statistic T with its limit Options.Level.
	Steps                    []int64
	ValuesA, ValuesB         []float64
	AbsDiff, RelDiff         []float64
	Band                     []float64
	Drift                    []float64
	Level                    []float64
	OnlyA, OnlyB             []int64 // steps found in one curve only
	Spikes                   []int64 // steps beyond the band that did not make a break
	MaxRel                   float64
	MaxRelStep               int64
	Evidence, NotesA, NotesB []string
	// Baseline is what a baseline curve showed (AnalyzeBaseline); nil
	// without one.
	Baseline *Baseline
}

// Analyze compares loss curve b with the reference curve a, aligned by
// step, and finds where they part by what changed, not by a fixed band.
// With d_t = b_t − a_t and the rounding unit u_t = max(ε_c·|a_t|, ATol)
// (ε_c = RTol: the compute dtype's epsilon), z_t = d_t/u_t:
//
//   - bitwise: the curves are identical while every d_t is 0; k0 is the
//     first step with d ≠ 0.
//   - jump: step t starts a break when |z_t| > B_t and more than
//     AllowedFailingSteps of the five steps from t are beyond B_t too
//     (else it is a spike), where B_t = max(J·H_t, 1, J·ulp_t/u_t),
//     H_t = max |z_s| over the W steps before t (the run's own earlier
//     difference) and ulp_t the stored dtype's spacing at a_t: an order of
//     magnitude beyond everything the last W steps showed, beyond one
//     rounding unit of the compute dtype, and beyond ten of the stored
//     value's own rounding. The first common step starts none: it has no
//     history, and its difference is where the runs stood when the curves
//     begin (dumps that start after warm-up steps, or mid-run, carry the
//     drift of the steps before).
//   - shift: the level of the difference moved when
//     T_t = |mean_{W}(d)| / (σ_t/√W) > T*, σ_t the reference curve's
//     step-to-step noise std(a_s − a_{s−1})/√2 over the window: the graphed
//     run is systematically above or below the eager one by more than the
//     batches' own noise explains, which a slow break (a schedule frozen
//     at capture, a stale batch) does and rounding drift does not. It
//     starts after the last minimum of the cumulative difference signed
//     by that mean: where the excursion began.
//   - a break that grew out of bitwise equality starts at k0 when every
//     step since k0 is at least one rounding unit apart (walk-back): the
//     curves were equal and stopped being so there.
//
// Why these tests and not a general change-point segmentation (PELT or
// ED-PELT, binary segmentation, Bayesian online change-point detection):
// those split a series wherever its distribution changes, and legitimate
// drift changes its distribution all the time — it grows by orders of
// magnitude as rounding differences are amplified by training. The
// question here is narrower: where does the graphed run depart in a way
// rounding cannot, against the run's own earlier difference. A jump
// answers it for sudden breaks, a mean-shift test against the batches' own
// noise (CUSUM's start estimate for where it began) for slow ones.
//
// A jump found no later than the shift's alarm gives the first divergent
// step; else the shift's start does. Anything else is drift and passes,
// reported with how large it got (unless MaxDrift is set and the mean
// relative difference over W steps passes it). NaN or ±Inf in one curve
// and not the other at a step is a divergence at that step.
//
// Where a and b hold the same steps, the result's Steps, ValuesA and
// ValuesB are a's steps and the two curves' values themselves, not
// copies (their capacity cut to their length); Analyze changes neither.
func Analyze(a, b *loaders.Curve, o Options) *Result {
	d := o.DType
	if d == loaders.Invalid {
		d = curveDType(a, b)
	}
	o = o.withDefaults(d)
	res := &Result{A: a.Source, B: b.Source, Options: o, NotesA: a.Notes, NotesB: b.Notes, MaxRelStep: -1}
	res.align(a, b)
	n := len(res.Steps)
	res.AbsDiff, res.RelDiff = make([]float64, n), make([]float64, n)
	res.Band, res.Drift, res.Level = make([]float64, n), make([]float64, n), make([]float64, n)
	nanAt := -1
	for k := range n {
		x, y := res.ValuesA[k], res.ValuesB[k]
		if !isFinite(x) || !isFinite(y) {
			if !(x != x && y != y) && x != y && nanAt < 0 {
				nanAt = k
			}
			res.RelDiff[k] = math.NaN()
			res.AbsDiff[k] = math.NaN()
			continue
		}
		res.AbsDiff[k] = math.Abs(y - x)
		switch {
		case res.AbsDiff[k] == 0:
		case x == 0:
			res.RelDiff[k] = math.Inf(1)
		default:
			res.RelDiff[k] = res.AbsDiff[k] / math.Abs(x)
		}
		if res.RelDiff[k] > res.MaxRel || res.MaxRelStep < 0 && res.RelDiff[k] == 0 {
			res.MaxRel, res.MaxRelStep = res.RelDiff[k], res.Steps[k]
		}
	}
	s := res.newSeries()
	jumpAt := res.findJump(s)
	shiftAt, shiftStart := res.findShift(s)
	res.computeDrift()
	driftAt := -1
	if o.MaxDrift > 0 {
		for k, v := range res.Drift {
			if v > o.MaxDrift {
				driftAt = k
				break
			}
		}
	}
	res.classify(s, nanAt, jumpAt, shiftAt, shiftStart, driftAt)
	return res
}

// align sets Steps, ValuesA and ValuesB to the steps a and b share, in
// order, and OnlyA and OnlyB to the others. Where the two hold the same
// steps, they are a's steps and the curves' values themselves (their
// capacity cut to their length); else new arrays.
func (r *Result) align(a, b *loaders.Curve) {
	if n := len(a.Steps); slices.Equal(a.Steps, b.Steps) && len(a.Values) >= n && len(b.Values) >= n {
		if n > 0 {
			r.Steps, r.ValuesA, r.ValuesB = a.Steps[:n:n], a.Values[:n:n], b.Values[:n:n]
		}
		return
	}
	i, j := 0, 0
	for i < len(a.Steps) || j < len(b.Steps) {
		switch {
		case j == len(b.Steps) || i < len(a.Steps) && a.Steps[i] < b.Steps[j]:
			r.OnlyA = append(r.OnlyA, a.Steps[i])
			i++
		case i == len(a.Steps) || b.Steps[j] < a.Steps[i]:
			r.OnlyB = append(r.OnlyB, b.Steps[j])
			j++
		default:
			r.Steps = append(r.Steps, a.Steps[i])
			r.ValuesA = append(r.ValuesA, a.Values[i])
			r.ValuesB = append(r.ValuesB, b.Values[j])
			i++
			j++
		}
	}
}

// series gives the differences in rounding units, z_t = d_t/u_t,
// worked out where they are asked for rather than held: a long curve's
// analysis then holds no array beyond the result's.
type series struct {
	r  *Result
	k0 int // first step with d ≠ 0, -1 when none
}

func (r *Result) newSeries() *series {
	s := &series{r: r, k0: -1}
	for k, x := range r.ValuesA {
		if y := r.ValuesB[k]; x != y && !(x != x && y != y) {
			s.k0 = k
			break
		}
	}
	return s
}

// z is z_t at index k, signed; NaN where either value is not finite.
func (s *series) z(k int) float64 {
	x, y := s.r.ValuesA[k], s.r.ValuesB[k]
	if !isFinite(x) || !isFinite(y) {
		return math.NaN()
	}
	return (y - x) / s.r.unit(x)
}

// finiteIn returns how many of z at [lo, hi) are finite (finiteIn of
// the package).
func (s *series) finiteIn(lo, hi int) int {
	n := 0
	for k := max(lo, 0); k < hi; k++ {
		if isFinite(s.z(k)) {
			n++
		}
	}
	return n
}

// unit is the rounding unit u_t at a reference value x: max(ε_c·|x|,
// ATol), the smallest positive float64 where that is 0.
func (r *Result) unit(x float64) float64 {
	u := max(r.Options.RTol*math.Abs(x), r.Options.ATol)
	if u == 0 {
		u = math.SmallestNonzeroFloat64
	}
	return u
}

// spacing returns the gap between |x| and the next representable value of
// dtype d (float32 for dtypes without a narrower spacing here).
func spacing(x float64, d loaders.DType) float64 {
	ax := math.Abs(x)
	if ax == 0 {
		return 0
	}
	eps := tolerances.Epsilon(d)
	if eps == 0 {
		eps = tolerances.Epsilon(loaders.Float32)
	}
	_, e := math.Frexp(ax) // ax = f·2^e, f in [0.5, 1)
	return eps * math.Ldexp(1, e-1)
}

// findJump returns the index of the first step that starts a jump, -1
// when none, fills Band (B_t as a relative difference) and records
// spikes.
func (r *Result) findJump(s *series) int {
	o := r.Options
	type held struct {
		k int
		v float64 // |z_k|
	}
	var dq []held // the steps of decreasing |z| within the window
	at := -1
	for k := range r.Steps {
		for len(dq) > 0 && dq[0].k < k-o.Window {
			dq = dq[1:]
		}
		h := 0.0
		if len(dq) > 0 {
			h = dq[0].v
		}
		// z and the stored dtype's spacing at a_t in units of u_t (0
		// where either value is not finite)
		z, ulp := math.NaN(), 0.0
		if x, y := r.ValuesA[k], r.ValuesB[k]; isFinite(x) && isFinite(y) {
			u := r.unit(x)
			z, ulp = (y-x)/u, spacing(x, o.DType)/u
		}
		band := max(o.Jump*h, 1, o.Jump*ulp)
		r.Band[k] = band * o.RTol
		if a := math.Abs(r.ValuesA[k]); a > 0 && o.ATol > 0 {
			r.Band[k] = band * max(o.RTol*a, o.ATol) / a
		}
		v := math.Abs(z)
		if at < 0 && k > 0 && v > band && isFinite(v) {
			end := min(len(r.Steps), k+confirmSteps)
			beyond := 0
			for j := k; j < end; j++ {
				if w := math.Abs(s.z(j)); w > band || w != w {
					beyond++
				}
			}
			if beyond > min(o.AllowedFailingSteps, end-k-1) {
				at = k
			} else {
				r.Spikes = append(r.Spikes, r.Steps[k])
			}
		}
		if !isFinite(v) {
			continue // NaN and Inf steps are judged apart, not learned from
		}
		for len(dq) > 0 && dq[len(dq)-1].v <= v {
			dq = dq[:len(dq)-1]
		}
		dq = append(dq, held{k, v})
	}
	return at
}

// findShift fills Level with T_t and returns the index of the first step
// whose T_t passes Options.Level (-1 when none) and the index the shift
// starts at: after the last minimum of the cumulative difference signed by
// the window's mean, up to that step. The prefix sums it takes the
// window's sums from are kept for the last Window+1 steps only, and the
// minima of the cumulative difference and of its negation are followed
// as they go, up to the alarm.
func (r *Result) findShift(s *series) (alarm, start int) {
	o := r.Options
	w := o.Window
	n := len(r.Steps)
	if s.k0 < 0 {
		return -1, -1
	}
	// prefix sums of d and of the reference's step-to-step change over
	// the steps [0, i), at ring[i%len(ring)]
	type sums struct{ d, q1, q2 float64 }
	ring := make([]sums, min(w, n)+1)
	at := func(i int) *sums { return &ring[i%len(ring)] }
	// the last index of the least cumulative difference, and of the least
	// of its negation, among the sums up to the alarm
	lowUp, lowDown := math.Inf(1), math.Inf(1)
	startUp, startDown := -1, -1
	follow := func(i int, d float64) {
		if d <= lowUp {
			lowUp, startUp = d, i
		}
		if v := -d; v <= lowDown {
			lowDown, startDown = v, i
		}
	}
	follow(0, 0)
	alarm = -1
	down := false // the mean difference at the alarm is negative
	var sum sums
	for k := range n {
		dk := r.ValuesB[k] - r.ValuesA[k]
		if !isFinite(dk) {
			dk = 0
		}
		step := 0.0
		if k > 0 && isFinite(r.ValuesA[k]) && isFinite(r.ValuesA[k-1]) {
			step = r.ValuesA[k] - r.ValuesA[k-1]
		}
		sum = sums{sum.d + dk, sum.q1 + step, sum.q2 + step*step}
		*at(k + 1) = sum
		if alarm < 0 {
			follow(k+1, sum.d)
		}
		if k < max(w, s.k0) {
			continue
		}
		// the mean difference over (k−w, k], the noise over its w−1 steps
		mean := (sum.d - at(k+1-w).d) / float64(w)
		m := w - 1
		if m < 2 {
			continue
		}
		mu := (sum.q1 - at(k+1-m).q1) / float64(m)
		v := (sum.q2-at(k+1-m).q2)/float64(m) - mu*mu
		if v <= 0 {
			continue
		}
		sigma := math.Sqrt(v / 2)
		r.Level[k] = math.Abs(mean) / (sigma / math.Sqrt(float64(w)))
		if alarm < 0 && r.Level[k] > o.Level {
			alarm, down = k, sum.d-at(k+1-w).d < 0
		}
	}
	if alarm < 0 {
		return -1, -1
	}
	start = startUp
	if down {
		start = startDown
	}
	return alarm, min(start, alarm)
}

// finiteIn returns how many of vals[lo:hi] are finite (lo below 0 reads
// from 0): the steps of a window that the band and the drift learn from,
// which near the start of a curve are fewer than the window holds.
func finiteIn(vals []float64, lo, hi int) int {
	n := 0
	for _, v := range vals[max(lo, 0):hi] {
		if isFinite(v) {
			n++
		}
	}
	return n
}

// historyWords says what the band's first term was taken over: jump times
// the largest difference of the n steps before.
func historyWords(jump float64, n int) string {
	switch n {
	case 0:
		return "no step before with a finite difference"
	case 1:
		return fmt.Sprintf("%g× the one step before", jump)
	}
	return fmt.Sprintf("%g× the largest of the %d steps before", jump, n)
}

// walkBack returns k0 for a break at index k that grew out of bitwise
// equality: the curves were equal before k0 and every step from k0 to k
// is at least one rounding unit apart; else k.
func walkBack(s *series, k int) int {
	if s.k0 < 0 || k <= s.k0 {
		return k
	}
	for j := s.k0; j < k; j++ {
		if !(math.Abs(s.z(j)) >= 1) {
			return k
		}
	}
	return s.k0
}

// computeDrift fills Drift with the mean finite relative difference over
// the last Window steps, by prefix sums kept for the last Window+1 steps.
func (r *Result) computeDrift() {
	w := r.Options.Window
	// the sum and count of the finite relative differences of the steps
	// [0, i), at ring[i%len(ring)]
	type sums struct {
		sum float64
		cnt int
	}
	ring := make([]sums, min(w, len(r.RelDiff))+1)
	var cur sums
	for k, v := range r.RelDiff {
		if isFinite(v) {
			cur = sums{cur.sum + v, cur.cnt + 1}
		}
		ring[(k+1)%len(ring)] = cur
		lo := ring[max(0, k+1-w)%len(ring)]
		if c := cur.cnt - lo.cnt; c > 0 {
			r.Drift[k] = (cur.sum - lo.sum) / float64(c)
		}
	}
}

// classify sets the pattern, verdict, first divergence and evidence.
func (r *Result) classify(s *series, nanAt, jumpAt, shiftAt, shiftStart, driftAt int) {
	o := r.Options
	first := func(k int) { st := r.Steps[k]; r.FirstDivergentStep = &st }
	ev := func(format string, args ...any) { r.Evidence = append(r.Evidence, fmt.Sprintf(format, args...)) }
	breakAt := -1
	switch {
	case jumpAt >= 0 && (shiftAt < 0 || jumpAt <= shiftAt):
		breakAt = jumpAt
	case shiftAt >= 0:
		breakAt = shiftAt
	}
	unit := func(k int) float64 { return math.Abs(s.z(k)) }
	switch {
	case nanAt >= 0 && (breakAt < 0 || nanAt <= breakAt):
		r.Pattern, r.Verdict = PatternNaN, judge.Fail
		first(nanAt)
		ev("step %d: %g in the reference, %g in the compared run", r.Steps[nanAt], r.ValuesA[nanAt], r.ValuesB[nanAt])
	case breakAt >= 0 && breakAt == jumpAt:
		r.Pattern, r.Verdict = PatternSudden, judge.Fail
		k := jumpAt
		start := walkBack(s, k)
		first(start)
		ev("step %d: the difference is %.3g rounding units (ε_c·|a|, ε_c = %.3g; relative %.3g), beyond the band %.3g units: %s, one unit, and %g× the stored value's spacing",
			r.Steps[k], unit(k), o.RTol, r.RelDiff[k], r.Band[k]/o.RTol, historyWords(o.Jump, s.finiteIn(k-o.Window, k)), o.Jump)
		end := min(len(r.Steps), k+confirmSteps)
		beyond := 0
		for j := k; j < end; j++ {
			if r.RelDiff[j] > r.Band[k] || r.RelDiff[j] != r.RelDiff[j] {
				beyond++
			}
		}
		ev("%d of the %d steps from step %d are beyond it: a break, not a spike", beyond, end-k, r.Steps[k])
		if start != k {
			ev("the curves were bitwise equal up to step %d and at least one rounding unit apart from step %d on: the break started there", r.Steps[start]-1, r.Steps[start])
		}
	case breakAt >= 0:
		r.Pattern, r.Verdict = PatternShift, judge.Fail
		start := walkBack(s, shiftStart)
		first(start)
		ev("step %d: the mean difference over %d steps is %.3g standard errors of the reference's own step-to-step noise (limit %g): the compared run is systematically %s",
			r.Steps[shiftAt], o.Window, r.Level[shiftAt], o.Level, aboveBelow(r, shiftAt))
		if start != shiftStart {
			ev("the curves were bitwise equal up to step %d and at least one rounding unit apart from step %d on: the shift started there", r.Steps[start]-1, r.Steps[start])
		} else {
			ev("the cumulative difference has moved away steadily since step %d: the shift started there", r.Steps[start])
		}
	case driftAt >= 0:
		r.Pattern, r.Verdict = PatternDrift, judge.Fail
		first(driftAt)
		ev("the mean relative difference over %s passes --max-drift %.3g at step %d (%.3g), growing without a break",
			words.Plural(finiteIn(r.RelDiff, driftAt+1-o.Window, driftAt+1), "step"), o.MaxDrift, r.Steps[driftAt], r.Drift[driftAt])
	default:
		r.Verdict = judge.Pass
		maxUnits, maxLevel := 0.0, 0.0
		for k := range r.Steps {
			if v := unit(k); isFinite(v) {
				maxUnits = max(maxUnits, v)
			}
			maxLevel = max(maxLevel, r.Level[k])
		}
		switch {
		case r.MaxRel == 0 && len(r.Steps) > 0:
			r.Pattern = PatternIdentical
			ev("the curves are bitwise equal over %d common steps", len(r.Steps))
		case maxUnits > 1:
			r.Pattern = PatternDrift
			ev("the differences grow to %.3g rounding units (relative %.3g, largest at step %d) without a jump over their own history or a shift in level (largest T %.3g, limit %g): drift, which passes",
				maxUnits, r.MaxRel, r.MaxRelStep, maxLevel, o.Level)
		default:
			r.Pattern = PatternWithinNoise
			ev("the largest difference, %.3g rounding units (relative %.3g at step %d), stays within one unit", maxUnits, r.MaxRel, r.MaxRelStep)
		}
	}
	if len(r.Spikes) > 0 {
		ev("%d isolated steps beyond the band were spikes, not breaks (first at step %d)", len(r.Spikes), r.Spikes[0])
	}
}

// aboveBelow says whether b is above or below a over the window ending at k.
func aboveBelow(r *Result, k int) string {
	sum := 0.0
	for j := max(0, k-r.Options.Window+1); j <= k; j++ {
		if d := r.ValuesB[j] - r.ValuesA[j]; isFinite(d) {
			sum += d
		}
	}
	if sum < 0 {
		return "below the reference"
	}
	return "above the reference"
}

// curveDType returns the coarser dtype the curves' files state, or, when
// they state none (CSV, JSON lines, TensorBoard) or state float32, the one
// their values fit: bfloat16 or float16 when every value (of at least 8)
// is representable in it — a bf16 loss written out as float32.
func curveDType(cs ...*loaders.Curve) loaders.DType {
	d := loaders.Invalid
	for _, c := range cs {
		cd := c.DType
		if cd == loaders.Invalid || cd == loaders.Float32 || cd == loaders.Float64 {
			cd = fitDType(c.Values)
		}
		if tolerances.Epsilon(cd) > tolerances.Epsilon(d) {
			d = cd
		}
	}
	if d == loaders.Invalid {
		d = loaders.Float32
	}
	return d
}

func fitDType(vs []float64) loaders.DType {
	if len(vs) < 8 {
		return loaders.Float32
	}
	bf16, f32 := true, true
	for _, v := range vs {
		if !isFinite(v) {
			continue
		}
		f := float32(v)
		if float64(f) != v {
			f32, bf16 = false, false
			break
		}
		if math.Float32bits(f)&0xFFFF != 0 {
			bf16 = false
		}
	}
	switch {
	case bf16:
		return loaders.BFloat16
	case f32:
		return loaders.Float32
	}
	return loaders.Float64
}

// isFinite reports whether v is neither NaN nor ±Inf.
func isFinite(v float64) bool { return v-v == 0 }
