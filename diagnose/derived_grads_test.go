package diagnose

import (
	"math"
	"testing"

	"github.com/graphdiff/graphdiff/loaders"
)

// TestDeriveGrads builds the samples of two runs that saved an Adam
// moment with its step counter and an SGD momentum buffer, made from
// known gradients by each rule, and checks that deriveGrads gives back
// those gradients at every step whose step before was saved, in both
// runs, and none: at the first step; where Adam's counter jumps by two
// (dumps a step apart in name but not in the optimizer, as a dump
// numbered by epoch); for an exp_avg saved without its counter; where a
// step is missing; where the runs dumped gradients themselves.
func TestDeriveGrads(t *testing.T) {
	adam := loaders.Moment{Decay: 0.9, Gain: 1 - 0.9}
	sgd := loaders.Moment{Decay: 0.9, Gain: 1 - 0.5}
	grad := func(run, step, i int) float64 { return math.Sin(float64(7*step + 3*i + run)) }
	// one step's sample: exp_avg (3 values), its counter, momentum (2)
	segs := []segment{
		{"opt/state/0/exp_avg", 0, 3, adam},
		{"opt/state/0/step", 3, 4, loaders.Moment{}},
		{"opt/state/1/momentum_buffer", 4, 6, sgd},
	}
	build := func(steps []int, counter func(step int) float64) *sampleSet {
		s := &sampleSet{a: map[key]vec{}, b: map[key]vec{}, kinds: map[loaders.Kind]bool{loaders.KindTensor: true}, moments: map[key][]segment{}}
		for run, m := range []map[key]vec{s.a, s.b} {
			state := make(vec, 6)
			for k := 1; k <= steps[len(steps)-1]; k++ {
				for i := range 3 {
					state[i] = adam.Decay*state[i] + adam.Gain*grad(run, k, i)
				}
				state[3] = counter(k)
				for i := 4; i < 6; i++ {
					state[i] = sgd.Decay*state[i] + sgd.Gain*grad(run, k, i)
				}
				for _, st := range steps {
					if st == k {
						m[key{k, loaders.KindTensor}] = append(vec(nil), state...)
					}
				}
			}
		}
		for _, k := range steps {
			s.moments[key{k, loaders.KindTensor}] = segs
			s.steps = append(s.steps, k)
		}
		return s
	}
	byStep := func(k int) float64 { return float64(k) }
	s := build([]int{4, 5, 6, 8}, byStep)
	s.deriveGrads()
	if s.derived == "" || !s.kinds[loaders.KindGrad] {
		t.Fatalf("nothing derived (%q)", s.derived)
	}
	for _, k := range []int{4, 8} {
		if s.get(s.a, k, loaders.KindGrad) != nil {
			t.Errorf("step %d: gradients derived without the step before", k)
		}
	}
	for _, k := range []int{5, 6} {
		for run, m := range []map[key]vec{s.a, s.b} {
			g := s.get(m, k, loaders.KindGrad)
			if len(g) != 5 {
				t.Fatalf("step %d: %d values derived, want 5", k, len(g))
			}
			for j, i := range []int{0, 1, 2, 4, 5} {
				if want := grad(run, k, i); math.Abs(g[j]-want) > 1e-12 {
					t.Errorf("run %d step %d value %d: %v, want %v", run, k, i, g[j], want)
				}
			}
		}
	}
	// the counter counts two optimizer steps between the dumps: the
	// Adam moment gives nothing, and the step is left out whole
	s = build([]int{4, 5}, func(k int) float64 { return float64(2 * k) })
	s.deriveGrads()
	if s.kinds[loaders.KindGrad] {
		t.Errorf("derived across a counter that jumps by two: %v", s.get(s.a, 5, loaders.KindGrad))
	}
	// exp_avg without its counter
	s = build([]int{4, 5}, byStep)
	for k, sg := range s.moments {
		s.moments[k] = []segment{sg[0], sg[2]}
	}
	s.deriveGrads()
	if s.kinds[loaders.KindGrad] {
		t.Error("derived an exp_avg saved without its step counter")
	}
	// only SGD's buffer: no counter needed
	s = build([]int{4, 5}, byStep)
	for k, sg := range s.moments {
		s.moments[k] = sg[2:]
	}
	s.deriveGrads()
	if g := s.get(s.b, 5, loaders.KindGrad); len(g) != 2 || math.Abs(g[0]-grad(1, 5, 4)) > 1e-12 {
		t.Errorf("SGD's buffer alone: %v, want [%v %v]", g, grad(1, 5, 4), grad(1, 5, 5))
	}
	// dumped gradients win
	s = build([]int{4, 5}, byStep)
	s.kinds[loaders.KindGrad] = true
	s.deriveGrads()
	if s.derived != "" || s.get(s.a, 5, loaders.KindGrad) != nil {
		t.Error("derived beside dumped gradients")
	}
}

// TestMomentFit builds two runs whose Adam moments see the same gradients
// while the loop cycles β1 and saves each step's value with the state:
// the reference run's optimizer follows it, the compared run's keeps
// β1 = 0.85 of capture. The fitted rule is the compared run's (D = 0.85,
// G = 0.15 to rounding), the saved rule misses its moments, and the
// gradients are still derived where the saved rule changes from one step
// to the next; for the reference run itself the fit is the saved rule.
func TestMomentFit(t *testing.T) {
	grad := func(step, i int) float64 { return math.Sin(float64(7*step + 3*i)) }
	beta := func(step int) float64 { return 0.85 + 0.001*float64(max(step-4, 0)) }
	const n = 16
	s := &sampleSet{a: map[key]vec{}, b: map[key]vec{}, kinds: map[loaders.Kind]bool{loaders.KindTensor: true}, moments: map[key][]segment{}}
	ma, mb := make(vec, n+1), make(vec, n+1)
	for k := 1; k <= 7; k++ {
		for i := range n {
			ma[i] = beta(k)*ma[i] + (1-beta(k))*grad(k, i)
			mb[i] = 0.85*mb[i] + 0.15*grad(k, i)
		}
		ma[n], mb[n] = float64(k), float64(k)
		if k >= 4 {
			kk := key{k, loaders.KindTensor}
			s.a[kk], s.b[kk] = append(vec(nil), ma...), append(vec(nil), mb...)
			rule := loaders.Moment{Decay: beta(k), Gain: 1 - beta(k)}
			s.moments[kk] = []segment{{"opt/state/0/exp_avg", 0, n, rule}, {"opt/state/0/step", n, n + 1, loaders.Moment{}}}
			s.steps = append(s.steps, k)
		}
	}
	s.deriveGrads()
	for _, k := range []int{5, 6, 7} {
		f, ok := s.momentFits[k]
		if !ok {
			t.Fatalf("step %d: no fit (derived %q)", k, s.derived)
		}
		if math.Abs(f.D-0.85) > 1e-9 || math.Abs(f.G-0.15) > 1e-9 || f.Resid > 1e-9*f.Norm || !(f.Dep > 1e-4*f.Norm) {
			t.Errorf("step %d: D %g, G %g, residual %g, departure %g of ‖m‖ %g", k, f.D, f.G, f.Resid, f.Dep, f.Norm)
		}
		if got := s.get(s.a, k, loaders.KindGrad); len(got) != n || math.Abs(got[3]-grad(k, 3)) > 1e-9 {
			t.Errorf("step %d: reference gradient %v, want %g at 3", k, got, grad(k, 3))
		}
	}
	if f := s.momentFits[4]; f.Norm != 0 {
		t.Errorf("step 4, the first dumped: fitted %+v", f)
	}
}
