package tolerances

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/graphdiff/graphdiff/loaders"
)

// FuzzPolicy feeds arbitrary text to the policy parser and resolves a few
// tensors with whatever it accepts: no panic, and accepted limits stay in
// their documented ranges.
func FuzzPolicy(f *testing.F) {
	seed, err := os.ReadFile("testdata/example_policy.yaml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte(examplePolicy))
	f.Add([]byte("rules: [{match: {name: '[a-'}}]"))
	f.Add([]byte("run:\n  grad: 40\n  grad_growth: 1e300\n  update: 0.5\n"))
	bad, err := filepath.Glob("../testdata/bad/policy_*.yaml")
	if err != nil || len(bad) == 0 {
		f.Fatalf("hostile policies: %v, %d found", err, len(bad))
	}
	for _, path := range bad {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParsePolicy(data)
		if err != nil {
			return
		}
		r := Resolver{Policy: p}
		for _, name := range []string{"grads/fc1.weight", "params/x/fc1.bias", "inputs/x", ""} {
			s := r.Resolve(name, loaders.KindGrad, loaders.BFloat16, loaders.Float32, loaders.Invalid)
			if s.RTol < 0 || s.ATol < 0 || s.MaxRelL2 < 0 || s.MaxMismatchFraction < 0 || s.MaxMismatchFraction > 1 {
				t.Fatalf("limits out of range: %+v", s)
			}
		}
		for _, v := range []float64{r.Run().Grad, r.Run().GradGrowth, r.Run().Update, r.Run().Loss, r.Run().Output} {
			if !(v > 0 && v < 1e300) {
				t.Fatalf("run rules out of range: %+v", r.Run())
			}
		}
	})
}
