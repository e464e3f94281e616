package diagnose

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/graphdiff/graphdiff/judge"
	"github.com/graphdiff/graphdiff/loaders"
)

// TestScaleOfIsEachStepsScale checks the memo of scale findings over more
// steps than one block: each is what scaleAt finds at its step, the
// graphed gradients scaled at three steps are found there and nowhere
// else, and a finding in the first block is made without the later
// blocks.
func TestScaleOfIsEachStepsScale(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	s := &sampleSet{a: map[key]vec{}, b: map[key]vec{}, kinds: map[loaders.Kind]bool{loaders.KindGrad: true}}
	scaled := map[int]bool{5: true, 40: true, 69: true}
	const steps = 2*scaleBlock + 6
	for k := range steps {
		a, b := make(vec, 256), make(vec, 256)
		for i := range a {
			a[i] = rng.NormFloat64()
			b[i] = a[i]
			if scaled[k] {
				b[i] = 1.01 * a[i]
			}
		}
		s.a[key{k, loaders.KindGrad}], s.b[key{k, loaders.KindGrad}] = a, b
		s.steps = append(s.steps, k)
	}
	f := &facts{r: &judge.Result{}, s: s, div: loaders.NoStep}
	if sf := f.scaleOf(5); sf == nil || sf.step != 5 || f.scaled != scaleBlock {
		t.Fatalf("scaleOf(5) = %+v with %d steps looked at; want step 5's finding, one block looked at", sf, f.scaled)
	}
	for i, k := range s.steps {
		got, want := f.scaleOf(i), f.scaleAt(k, f.warnOff)
		if !reflect.DeepEqual(got, want) || (got != nil) != scaled[k] {
			t.Errorf("step %d: scaleOf %+v, scaleAt %+v; scaled %v", k, got, want, scaled[k])
		}
	}
	if f.scaled != steps {
		t.Errorf("%d steps looked at, want %d", f.scaled, steps)
	}
}
