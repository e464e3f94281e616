package curve

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/graphdiff/graphdiff/loaders"
)

// prefixLevel is the level statistic T_t, its first alarm and the
// shift's start as their definitions read (Analyze), from prefix sums
// over the whole curve: the reference for findShift, which keeps the
// last Window+1 of them.
func prefixLevel(r *Result, k0 int) (level []float64, alarm, start int) {
	o := r.Options
	w, n := o.Window, len(r.Steps)
	level = make([]float64, n)
	sd, sq1, sq2 := make([]float64, n+1), make([]float64, n+1), make([]float64, n+1)
	for k := range n {
		dk := r.ValuesB[k] - r.ValuesA[k]
		if !isFinite(dk) {
			dk = 0
		}
		sd[k+1] = sd[k] + dk
		step := 0.0
		if k > 0 && isFinite(r.ValuesA[k]) && isFinite(r.ValuesA[k-1]) {
			step = r.ValuesA[k] - r.ValuesA[k-1]
		}
		sq1[k+1], sq2[k+1] = sq1[k]+step, sq2[k]+step*step
	}
	alarm, start = -1, -1
	if k0 < 0 {
		return level, -1, -1
	}
	for k := max(w, k0); k < n; k++ {
		mean := (sd[k+1] - sd[k+1-w]) / float64(w)
		m := w - 1
		if m < 2 {
			continue
		}
		mu := (sq1[k+1] - sq1[k+1-m]) / float64(m)
		v := (sq2[k+1]-sq2[k+1-m])/float64(m) - mu*mu
		if v <= 0 {
			continue
		}
		level[k] = math.Abs(mean) / (math.Sqrt(v/2) / math.Sqrt(float64(w)))
		if alarm < 0 && level[k] > o.Level {
			alarm = k
		}
	}
	if alarm < 0 {
		return level, -1, -1
	}
	sign := 1.0
	if sd[alarm+1]-sd[alarm+1-w] < 0 {
		sign = -1
	}
	low := math.Inf(1)
	for k := 0; k <= alarm+1; k++ {
		if v := sign * sd[k]; v <= low {
			low, start = v, k
		}
	}
	return level, alarm, min(start, alarm)
}

// prefixDrift is Drift as its definition reads, from prefix sums over the
// whole curve: the reference for computeDrift.
func prefixDrift(r *Result) []float64 {
	w, n := r.Options.Window, len(r.Steps)
	drift := make([]float64, n)
	sum, cnt := make([]float64, n+1), make([]int, n+1)
	for k, v := range r.RelDiff {
		sum[k+1], cnt[k+1] = sum[k], cnt[k]
		if isFinite(v) {
			sum[k+1] += v
			cnt[k+1]++
		}
	}
	for k := range n {
		lo := max(0, k+1-w)
		if c := cnt[k+1] - cnt[lo]; c > 0 {
			drift[k] = (sum[k+1] - sum[lo]) / float64(c)
		}
	}
	return drift
}

// sameBits reports whether a and b hold the same float64s bit for bit.
func sameBits(a, b []float64) bool {
	return slices.EqualFunc(a, b, func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) })
}

// TestWindowsArePrefixSums checks that the level statistic, the shift's
// alarm and start, and the drift, worked out over windows of the last
// Window+1 prefix sums, are bit for bit those of prefix sums over the
// whole curve, on random curve pairs: equal stretches, drift, shifts,
// NaN, ±Inf and zero losses, steps in one curve only, windows from 1 to
// longer than the curve.
func TestWindowsArePrefixSums(t *testing.T) {
	rng := rand.New(rand.NewPCG(38, 7))
	shifts := 0
	for it := range 3000 {
		n := rng.IntN(300)
		shift := []float64{0, 1e-3, -1e-2, 5e-2}[rng.IntN(4)] // from a third of the way on
		curvePair := func() (*loaders.Curve, *loaders.Curve) {
			a, b := &loaders.Curve{Source: "a"}, &loaders.Curve{Source: "b"}
			for i := range n {
				x := float64(float32(2*math.Exp(-float64(i)/100) + 0.1 + 0.05*rng.Float64()))
				y := float64(float32(x * (1 + 1e-6*rng.NormFloat64())))
				if i > n/3 {
					y = float64(float32(x * (1 + shift + 1e-4*rng.NormFloat64())))
				}
				switch rng.IntN(80) {
				case 0:
					y = math.NaN()
				case 1:
					x = math.Inf(-1)
				case 2:
					x, y = 0, 0
				}
				if rng.IntN(40) != 0 {
					a.Steps, a.Values = append(a.Steps, int64(i)), append(a.Values, x)
				}
				if rng.IntN(40) != 0 {
					b.Steps, b.Values = append(b.Steps, int64(i)), append(b.Values, y)
				}
			}
			return a, b
		}
		a, b := curvePair()
		o := DefaultOptions()
		o.Window = []int{1, 2, 3, 7, 50, 400}[rng.IntN(6)]
		o.Level = []float64{1, 3, 8}[rng.IntN(3)]
		r := Analyze(a, b, o)
		s := r.newSeries()
		level, alarm, start := prefixLevel(r, s.k0)
		gotAlarm, gotStart := r.findShift(s)
		if !sameBits(r.Level, level) || gotAlarm != alarm || gotStart != start {
			t.Fatalf("case %d (window %d): findShift %d %d, prefix sums %d %d; levels equal: %t", it, o.Window, gotAlarm, gotStart, alarm, start, sameBits(r.Level, level))
		}
		if !sameBits(r.Drift, prefixDrift(r)) {
			t.Fatalf("case %d (window %d): the drift is not the prefix sums'", it, o.Window)
		}
		if alarm >= 0 {
			shifts++
		}
	}
	if shifts < 300 {
		t.Errorf("%d of 3000 cases found a shift: the test checks the shift's start too rarely", shifts)
	}
}

// TestAlignSharesSameSteps checks that curves of the same steps give
// their own arrays, capacity cut, and that curves of different steps
// give new ones, as the step-by-step alignment does.
func TestAlignSharesSameSteps(t *testing.T) {
	a := &loaders.Curve{Steps: []int64{0, 1, 2}, Values: []float64{1, 2, 3}}
	b := &loaders.Curve{Steps: []int64{0, 1, 2}, Values: []float64{1, 2.5, 3}}
	r := Analyze(a, b, DefaultOptions())
	if &r.Steps[0] != &a.Steps[0] || &r.ValuesA[0] != &a.Values[0] || &r.ValuesB[0] != &b.Values[0] || cap(r.ValuesB) != 3 {
		t.Errorf("same steps: the result copies the curves")
	}
	b.Steps = []int64{1, 2, 3}
	b.Values = []float64{2, 3, 4}
	r = Analyze(a, b, DefaultOptions())
	if !slices.Equal(r.Steps, []int64{1, 2}) || !slices.Equal(r.ValuesA, []float64{2, 3}) || !slices.Equal(r.OnlyA, []int64{0}) || !slices.Equal(r.OnlyB, []int64{3}) {
		t.Errorf("different steps: %v %v %v only %v %v", r.Steps, r.ValuesA, r.ValuesB, r.OnlyA, r.OnlyB)
	}
	r = Analyze(&loaders.Curve{}, &loaders.Curve{}, DefaultOptions())
	if r.Steps != nil || r.ValuesA != nil {
		t.Errorf("no steps: %v %v", r.Steps, r.ValuesA)
	}
}
