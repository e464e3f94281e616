package tolerances

import "fmt"

// RunRules are the constants of the run-level verdict (judge.Step). Each
// is a multiple of the step's working epsilon ε (Precision.Epsilon).
type RunRules struct {
	// Grad and GradGrowth: a gradient fails when its difference ratio
	// RMS(g_B − g_A)/max(RMS(g_A), S), S the step's gradient scale,
	// exceeds both Grad·ε and GradGrowth times the largest ratio of the
	// passing steps before (the drift the runs had already built up).
	// Losses and outputs may likewise grow GradGrowth times their own
	// largest difference of the passing steps before.
	Grad, GradGrowth float64
	// Update: a step fails when its update ratio |β| exceeds Update times
	// the rounding the updates may carry (Adam's bias correction, storing
	// the parameters), plus the gradients' relative difference
	// (judge.Step).
	Update float64
	// Loss: a loss fails when ‖L_B − L_A‖/‖L_A‖ > Loss·ε (and beyond the
	// drift allowance of GradGrowth).
	Loss float64
	// Output: an output fails when ‖o_B − o_A‖/‖o_A‖ > Output·ε (and beyond
	// the drift allowance of GradGrowth).
	Output float64
}

// DefaultRunRules are the rules applied unless a policy's run section
// says otherwise: testdata/gen/calibrate.py derives them from the corpora
// of correct and buggy runs (twice the largest value a correct run
// showed, in the unit of each rule, rounded up to two significant
// digits), and prints them.
//
// Output is not calibrated on its own: it is Grad. A forward output is an
// intermediate result of the kernels whose gradients Grad bounds (every
// rounding that reaches an output reaches the gradients through the
// backward pass, which adds its own), so an output gets the gradients'
// budget of rounding units. A constant of its own would rest on the one
// generator that dumps training outputs (corpus.py): derived without it,
// the others' correct runs show no output difference at all and give
// 0.0022, which fails 20 of that generator's 61 correct runs. The
// corpora's correct outputs reach 3.2ε (calibrate.py prints them).
var DefaultRunRules = RunRules{Grad: calibratedGrad, GradGrowth: 6.9, Update: 0.27, Loss: 3.1, Output: calibratedGrad}

// calibratedGrad is testdata/gen/calibrate.py's gradient rule.
const calibratedGrad = 11

// RunOverrides is a policy's run section: the rules it sets.
//
//	run:
//	  grad: 16         # a gradient's difference ratio may reach 16·ε
//	  grad_growth: 8   # or 8 times the largest ratio of the steps before
//	  update: 0.5
//	  loss: 4
//	  output: 8
type RunOverrides struct {
	Grad       *float64 `yaml:"grad"`
	GradGrowth *float64 `yaml:"grad_growth"`
	Update     *float64 `yaml:"update"`
	Loss       *float64 `yaml:"loss"`
	Output     *float64 `yaml:"output"`
}

// Apply returns r with the overrides set.
func (o *RunOverrides) Apply(r RunRules) RunRules {
	if o == nil {
		return r
	}
	for _, f := range []struct {
		v   *float64
		dst *float64
	}{{o.Grad, &r.Grad}, {o.GradGrowth, &r.GradGrowth}, {o.Update, &r.Update}, {o.Loss, &r.Loss}, {o.Output, &r.Output}} {
		if f.v != nil {
			*f.dst = *f.v
		}
	}
	return r
}

// check reports a rule that is not a positive finite number.
func (o *RunOverrides) check() error {
	if o == nil {
		return nil
	}
	for _, f := range []struct {
		name string
		v    *float64
	}{{"grad", o.Grad}, {"grad_growth", o.GradGrowth}, {"update", o.Update}, {"loss", o.Loss}, {"output", o.Output}} {
		if f.v != nil && !(*f.v > 0 && *f.v < 1e300) {
			return fmt.Errorf("run: %s = %g: want a positive number", f.name, *f.v)
		}
	}
	return nil
}

// Run returns the run-level rules: the defaults, with the policy's run
// section applied.
func (r Resolver) Run() RunRules {
	if r.Policy == nil {
		return DefaultRunRules
	}
	return r.Policy.Run.Apply(DefaultRunRules)
}
