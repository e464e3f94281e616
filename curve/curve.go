package curve

import (
	"fmt"
	"github.com/graphdiff/graphdiff/judge"
	"math"

	"github.com/graphdiff/graphdiff/loaders"
	"github.com/graphdiff/graphdiff/tolerances"
)

// Curve patterns.
const (
	PatternIdentical   = "identical"    // bit for bit
	PatternWithinNoise = "within_noise" // differences never leave the noise floor
	PatternDrift       = "drift"        // differences grow past the floor gradually, no break
	PatternSudden      = "sudden"       // a break at one step
	PatternNaN         = "nan"          // one run goes NaN or ±Inf where the other does not
)

// Options are the loss-curve analysis settings. Start from
// DefaultOptions; a zero RTol takes the dtype's default.
type Options struct {
	// RTol is the relative floor of the noise band: differences below it
	// are noise whatever their history. Default: by the curves' dtype,
	// 1e-3 for float32 (10× the rounding drift of a correct fp32 run),
	// 4ε for float16, bfloat16 and float8 (ε their epsilon), 1e-6 for
	// float64.
	RTol float64
	// ATol is an absolute floor, for losses near zero. Default 0.
	ATol float64
	// Jump is how many times the largest relative difference of the last
	// Window steps a step must exceed to start a break. Default 10.
	Jump float64
	// Window is how many previous steps the band learns from. Default 50.
	Window int
	// AllowedFailingSteps is how many of the five steps from a candidate
	// break may exceed the band without it being a break: isolated spikes.
	// Default 2 (a break needs 3 of 5).
	AllowedFailingSteps int
	// MaxDrift is the mean relative difference over Window steps above which
	// a gradual drift fails. Default 0.05.
	MaxDrift float64
	// DType is the curves' dtype when the files do not say (Invalid: from
	// the files, else guessed from the values).
	DType loaders.DType
}

// confirmSteps is how many steps from a candidate break are looked at.
const confirmSteps = 5

// DefaultOptions returns the documented defaults (RTol by dtype).
func DefaultOptions() Options {
	return Options{Jump: 10, Window: 50, AllowedFailingSteps: 2, MaxDrift: 0.05}
}

// withDefaults returns o with RTol set for curves of dtype d when zero.
func (o Options) withDefaults(d loaders.DType) Options {
	if o.RTol == 0 {
		switch eps := tolerances.Epsilon(d); {
		case d == loaders.Float64:
			o.RTol = 1e-6
		case eps > tolerances.Epsilon(loaders.Float32):
			o.RTol = 4 * eps
		default:
			o.RTol = 1e-3
		}
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
	// FirstDivergentStep is the step where the curves part (a break, the
	// first NaN, or where a drift passes MaxDrift), nil when they do not.
	FirstDivergentStep *int64
	// Options are the settings used, defaults filled in.
	Options Options
	// Per common step: the step, both values, |b−a|, |b−a|/|a| and the
	// noise band (a relative difference) the step was judged against.
	Steps                    []int64
	ValuesA, ValuesB         []float64
	AbsDiff, RelDiff         []float64
	Band                     []float64
	Drift                    []float64 // mean relative difference of the last Window steps
	OnlyA, OnlyB             []int64   // steps found in one curve only
	Spikes                   []int64   // steps beyond the band that did not make a break
	MaxRel                   float64
	MaxRelStep               int64
	Evidence, NotesA, NotesB []string
}

// Analyze compares loss curve b with the reference curve a, aligned
// by step.
//
// The noise band at a step is learned from the curves: Jump times the
// largest relative difference |b−a|/|a| of the previous Window steps, but
// never below the floor max(RTol, ATol/|a|). A step whose difference
// exceeds its band starts a break if more than AllowedFailingSteps of the
// five steps from it exceed that same band; otherwise it is a spike. So a
// run that drifts legitimately raises its own band as it goes, and a bug
// that kicks in at step k shows as a jump at k whatever the drift before
// it. A gradual drift fails only when the mean relative difference over
// Window steps passes MaxDrift. NaN or ±Inf in one curve and not the other
// at a step is a divergence at that step.
func Analyze(a, b *loaders.Curve, o Options) *Result {
	d := o.DType
	if d == loaders.Invalid {
		d = curveDType(a, b)
	}
	o = o.withDefaults(d)
	res := &Result{A: a.Source, B: b.Source, Options: o, NotesA: a.Notes, NotesB: b.Notes, MaxRelStep: -1}
	// align by step
	i, j := 0, 0
	for i < len(a.Steps) || j < len(b.Steps) {
		switch {
		case j == len(b.Steps) || i < len(a.Steps) && a.Steps[i] < b.Steps[j]:
			res.OnlyA = append(res.OnlyA, a.Steps[i])
			i++
		case i == len(a.Steps) || b.Steps[j] < a.Steps[i]:
			res.OnlyB = append(res.OnlyB, b.Steps[j])
			j++
		default:
			res.Steps = append(res.Steps, a.Steps[i])
			res.ValuesA = append(res.ValuesA, a.Values[i])
			res.ValuesB = append(res.ValuesB, b.Values[j])
			i++
			j++
		}
	}
	n := len(res.Steps)
	res.AbsDiff, res.RelDiff = make([]float64, n), make([]float64, n)
	res.Band, res.Drift = make([]float64, n), make([]float64, n)
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
	res.computeBand()
	res.computeDrift()
	breakAt := res.findBreak()
	driftAt := -1
	for k, v := range res.Drift {
		if v > o.MaxDrift {
			driftAt = k
			break
		}
	}
	res.classify(nanAt, breakAt, driftAt)
	return res
}

// computeBand fills Band: max(floor, Jump × max of the previous Window
// relative differences), with a monotonic deque for O(n).
func (r *Result) computeBand() {
	o := r.Options
	var dq []int // indices of decreasing RelDiff within the window
	for k := range r.Steps {
		for len(dq) > 0 && dq[0] < k-o.Window {
			dq = dq[1:]
		}
		hist := 0.0
		if len(dq) > 0 {
			hist = r.RelDiff[dq[0]]
		}
		floor := o.RTol
		if a := math.Abs(r.ValuesA[k]); a > 0 && o.ATol > 0 {
			floor = max(floor, o.ATol/a)
		}
		r.Band[k] = max(floor, o.Jump*hist)
		v := r.RelDiff[k]
		if v != v || math.IsInf(v, 0) {
			continue // NaN and Inf steps are judged apart, not learned from
		}
		for len(dq) > 0 && r.RelDiff[dq[len(dq)-1]] <= v {
			dq = dq[:len(dq)-1]
		}
		dq = append(dq, k)
	}
}

// computeDrift fills Drift with the mean finite relative difference over
// the last Window steps, by prefix sums.
func (r *Result) computeDrift() {
	w := r.Options.Window
	sum, cnt := make([]float64, len(r.Steps)+1), make([]int, len(r.Steps)+1)
	for k, v := range r.RelDiff {
		sum[k+1], cnt[k+1] = sum[k], cnt[k]
		if isFinite(v) {
			sum[k+1] += v
			cnt[k+1]++
		}
	}
	for k := range r.Steps {
		lo := max(0, k+1-w)
		if c := cnt[k+1] - cnt[lo]; c > 0 {
			r.Drift[k] = (sum[k+1] - sum[lo]) / float64(c)
		}
	}
}

// findBreak returns the index of the first step that starts a break, -1
// when none, and records spikes.
func (r *Result) findBreak() int {
	o := r.Options
	for k, v := range r.RelDiff {
		if !(v > r.Band[k]) || v != v {
			continue
		}
		end := min(len(r.Steps), k+confirmSteps)
		beyond := 0
		for j := k; j < end; j++ {
			if r.RelDiff[j] > r.Band[k] || r.RelDiff[j] != r.RelDiff[j] {
				beyond++
			}
		}
		if beyond > min(o.AllowedFailingSteps, end-k-1) {
			return k
		}
		r.Spikes = append(r.Spikes, r.Steps[k])
	}
	return -1
}

// classify sets the pattern, verdict, first divergence and evidence.
func (r *Result) classify(nanAt, breakAt, driftAt int) {
	o := r.Options
	first := func(k int) { s := r.Steps[k]; r.FirstDivergentStep = &s }
	ev := func(format string, args ...any) { r.Evidence = append(r.Evidence, fmt.Sprintf(format, args...)) }
	switch {
	case nanAt >= 0 && (breakAt < 0 || nanAt <= breakAt):
		r.Pattern, r.Verdict = PatternNaN, judge.Fail
		first(nanAt)
		ev("step %d: %g in the reference, %g in the compared run", r.Steps[nanAt], r.ValuesA[nanAt], r.ValuesB[nanAt])
	case breakAt >= 0:
		r.Pattern, r.Verdict = PatternSudden, judge.Fail
		first(breakAt)
		k := breakAt
		hist := r.maxBefore(k)
		ev("step %d: relative difference %.3g (%.6g vs %.6g), beyond the noise band %.3g", r.Steps[k], r.RelDiff[k], r.ValuesA[k], r.ValuesB[k], r.Band[k])
		if o.Jump*hist > o.RTol {
			ev("the band is %g× the largest relative difference of the %d steps before (%.3g)", o.Jump, o.Window, hist)
		} else {
			ev("the steps before stayed under the noise floor %.3g (largest of the last %d: %.3g)", o.RTol, o.Window, r.maxBefore(k))
		}
		end := min(len(r.Steps), k+confirmSteps)
		beyond := 0
		for j := k; j < end; j++ {
			if r.RelDiff[j] > r.Band[k] {
				beyond++
			}
		}
		ev("%d of the %d steps from step %d are beyond the band: a break, not a spike", beyond, end-k, r.Steps[k])
	case driftAt >= 0:
		r.Pattern, r.Verdict = PatternDrift, judge.Fail
		first(driftAt)
		ev("the mean relative difference over %d steps passes %.3g at step %d (%.3g), growing without a break", o.Window, o.MaxDrift, r.Steps[driftAt], r.Drift[driftAt])
	default:
		r.Verdict = judge.Pass
		maxDrift := 0.0
		for _, v := range r.Drift {
			maxDrift = max(maxDrift, v)
		}
		switch {
		case r.MaxRel == 0 && len(r.Steps) > 0:
			r.Pattern = PatternIdentical
			ev("the curves are bitwise equal over %d common steps", len(r.Steps))
		case r.exceedsFloor():
			r.Pattern = PatternDrift
			ev("the differences grow past the noise floor %.3g gradually (largest %.3g at step %d, mean over %d steps at most %.3g, limit %.3g): drift, no break",
				o.RTol, r.MaxRel, r.MaxRelStep, o.Window, maxDrift, o.MaxDrift)
		default:
			r.Pattern = PatternWithinNoise
			ev("the largest relative difference, %.3g at step %d, stays under the noise floor %.3g", r.MaxRel, r.MaxRelStep, o.RTol)
		}
	}
	if len(r.Spikes) > 0 {
		ev("%d isolated steps beyond the band were spikes, not breaks (first at step %d)", len(r.Spikes), r.Spikes[0])
	}
}

func (r *Result) exceedsFloor() bool {
	for _, v := range r.RelDiff {
		if v > r.Options.RTol {
			return true
		}
	}
	return false
}

func (r *Result) maxBefore(k int) float64 {
	m := 0.0
	for j := max(0, k-r.Options.Window); j < k; j++ {
		if isFinite(r.RelDiff[j]) {
			m = max(m, r.RelDiff[j])
		}
	}
	return m
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
