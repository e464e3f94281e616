package diagnose

import (
	"math/rand/v2"
	"testing"

	"github.com/graphdiff/graphdiff/judge"
	"github.com/graphdiff/graphdiff/loaders"
)

// TestModuleChannels checks moduleChannels on a departing module's
// output of shape (4, 3, 8) in C order and the same values in Fortran
// order: eager's scaled and shifted by values of each channel (the
// second axis, or the last) is found, with that axis; by one scale and
// shift for all, or by noise, it is not; nor is a module whose input
// departs, or whose values were not read.
func TestModuleChannels(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	shape := []int{4, 3, 8}
	const n = 4 * 3 * 8
	a := make(vec, n)
	for i := range a {
		a[i] = rng.NormFloat64()
	}
	// index of element (i0, i1, i2) in C and in Fortran order
	at := func(fortran bool, i0, i1, i2 int) int {
		if fortran {
			return i0 + 4*(i1+3*i2)
		}
		return (i0*3+i1)*8 + i2
	}
	mapped := func(fortran bool, f func(x float64, i0, i1, i2 int) float64) vec {
		b := make(vec, n)
		for i0 := range 4 {
			for i1 := range 3 {
				for i2 := range 8 {
					j := at(fortran, i0, i1, i2)
					b[j] = f(a[j], i0, i1, i2)
				}
			}
		}
		return b
	}
	check := func(name string, fortran bool, b vec, input string, wantAxis int) {
		t.Helper()
		pair := &judge.TensorResult{Pair: judge.Pair{Name: "activations/norm", Step: 3, Kind: loaders.KindActivation,
			A: &loaders.Meta{Shape: shape, FortranOrder: fortran}}, Decision: judge.Decision{MaxRelL2: 0.01}}
		f := &facts{r: &judge.Result{FirstModule: &judge.ModuleDeparture{Step: 3, Module: loaders.TapModule{Name: "norm"}, Input: input, Pair: pair}}}
		if b != nil {
			f.pairHead = func(step int, kind loaders.Kind, name string) (vec, vec) {
				if step != 3 || kind != loaders.KindActivation || name != "activations/norm" {
					return nil, nil
				}
				return a, b
			}
		}
		got := f.moduleChannels()
		switch {
		case wantAxis < 0 && got != nil:
			t.Errorf("%s: found %+v, want nothing", name, got)
		case wantAxis >= 0 && (got == nil || got.axis != wantAxis || !(got.perChannel <= 1e-12) || !(got.global > 0.01)):
			t.Errorf("%s: found %+v, want axis %d fitted to rounding", name, got, wantAxis)
		}
	}
	for _, fortran := range []bool{false, true} {
		check("per channel, second axis", fortran, mapped(fortran, func(x float64, _, c, _ int) float64 { return (1+0.3*float64(c))*x - 0.2*float64(c) }), "", 1)
		check("per channel, last axis", fortran, mapped(fortran, func(x float64, _, _, c int) float64 { return (0.5+0.1*float64(c))*x + 0.05*float64(c) }), "", 2)
		check("one scale", fortran, mapped(fortran, func(x float64, _, _, _ int) float64 { return 1.25*x + 0.1 }), "", -1)
		check("noise", fortran, mapped(fortran, func(x float64, _, _, _ int) float64 { return x + 0.5*rng.NormFloat64() }), "", -1)
	}
	check("values not read", false, nil, "", -1)
	// the module's input departs: the taps place nothing there (judge
	// leaves FirstModule to a module whose input agrees); a Backward
	// departure is a gradient's, not an output's
	f := &facts{r: &judge.Result{FirstModule: &judge.ModuleDeparture{Backward: true}}}
	if f.moduleChannels() != nil {
		t.Errorf("a backward departure fitted channel by channel")
	}
}
