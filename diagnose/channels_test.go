package diagnose

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestAffineResidual checks the per-group least-squares fit: values that
// are an affine map of a per group leave a residual at rounding, one map
// for all groups leaves the part the groups' own maps explain, and a
// difference unrelated to a leaves most of itself (n = 16 values a
// group: about 1 − 2/16 of its square).
func TestAffineResidual(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const groups, per = 4, 16
	a, b, c := make(vec, groups*per), make(vec, groups*per), make(vec, groups*per)
	group := func(i int) int { return i / per }
	for i := range a {
		a[i] = rng.NormFloat64()
		g := float64(group(i))
		b[i] = (1+g)*a[i] - 0.5*g
		c[i] = a[i] + rng.NormFloat64()
	}
	if r := affineResidual(a, b, group, groups) / norm(b); r > 1e-15 {
		t.Errorf("per-group maps: residual %g of the values, want rounding", r)
	}
	if r := affineResidual(a, b, func(int) int { return 0 }, 1) / norm(b); r < 0.1 {
		t.Errorf("one map for four: residual %g, want what the groups' maps explain", r)
	}
	d := norm(sub(c, a))
	if r := affineResidual(a, c, group, groups) / d; r < 0.8 || r > 1 || math.IsNaN(r) {
		t.Errorf("unrelated difference: %g of it left, want about %g", r, math.Sqrt(1-2.0/per))
	}
}
