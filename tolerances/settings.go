package tolerances

import (
	"github.com/graphdiff/graphdiff/loaders"
)

// Settings are what a comparison applies to one tensor pair.
type Settings struct {
	// DType is the comparison dtype: the coarsest of the two tensors'
	// dtypes (their original dtypes where a manifest gives them) and, for
	// floating-point tensors, the compute dtype when that is coarser.
	DType loaders.DType
	// Tolerance decides, element by element, which differences are beyond
	// rounding.
	Tolerance
	// MaxRelL2 and MaxMismatchFraction are the aggregate thresholds of the
	// verdict (see package judge).
	MaxRelL2            float64
	MaxMismatchFraction float64
	// PerTensor is set when a policy rule or an override set MaxRelL2:
	// the pair is then judged alone by its thresholds (judge.Tensor), not
	// by the run-level rules. MaxMismatchFraction applies only to pairs
	// judged alone.
	PerTensor bool
	// Ignore leaves the pair out of the comparison.
	Ignore bool
	// FailOnDTypeChange fails a pair whose two sides are stored in
	// different dtypes (dtype_mismatch), whatever its numbers; otherwise
	// such a pair is compared in DType, the coarser, and judged by its
	// numbers.
	FailOnDTypeChange bool
}

// Overrides are settings given on the command line; they win over the
// defaults and the policy.
type Overrides struct {
	RTol, ATol                    *float64
	MaxRelL2, MaxMismatchFraction *float64
	// ComputeDType is the dtype the math ran in (autocast), Invalid when
	// not given. The pipeline decides the comparison's Precision with it
	// (it wins over the manifests); Resolve is handed the outcome.
	ComputeDType loaders.DType
	// FailOnDTypeChange, when set, is Settings.FailOnDTypeChange for
	// every pair (--fail-on-dtype-change).
	FailOnDTypeChange *bool
}

// Resolver decides the settings of each tensor pair: the dtype defaults,
// then every matching policy rule in order, then the overrides.
type Resolver struct {
	Policy    *Policy
	Overrides Overrides
}

// Resolve returns the settings for a pair named name, of kind kind, whose
// two sides have dtypes a and b (original dtypes where known), in a
// comparison whose compute dtype is compute (Precision.ComparisonCompute:
// Invalid when unknown).
func (r Resolver) Resolve(name string, kind loaders.Kind, a, b, compute loaders.DType) Settings {
	d := ComparisonDType(a, b, compute)
	s := Settings{DType: d, Tolerance: For(d)}
	s.MaxRelL2, s.MaxMismatchFraction = thresholds(d)
	if r.Policy != nil {
		for i := range r.Policy.Rules {
			rule := &r.Policy.Rules[i]
			if !rule.matches(name, kind, d) {
				continue
			}
			set(&s.RTol, rule.RTol)
			set(&s.ATol, rule.ATol)
			set(&s.MaxRelL2, rule.MaxRelL2)
			set(&s.MaxMismatchFraction, rule.MaxMismatchFraction)
			s.PerTensor = s.PerTensor || rule.MaxRelL2 != nil
			if rule.Ignore != nil {
				s.Ignore = *rule.Ignore
			}
			if rule.FailOnDTypeChange != nil {
				s.FailOnDTypeChange = *rule.FailOnDTypeChange
			}
		}
	}
	set(&s.RTol, r.Overrides.RTol)
	set(&s.ATol, r.Overrides.ATol)
	set(&s.MaxRelL2, r.Overrides.MaxRelL2)
	set(&s.MaxMismatchFraction, r.Overrides.MaxMismatchFraction)
	s.PerTensor = s.PerTensor || r.Overrides.MaxRelL2 != nil
	if r.Overrides.FailOnDTypeChange != nil {
		s.FailOnDTypeChange = *r.Overrides.FailOnDTypeChange
	}
	return s
}

func set(dst *float64, v *float64) {
	if v != nil {
		*dst = *v
	}
}

// Epsilon returns the machine epsilon of a floating-point dtype, the gap
// between 1 and the next larger representable value: 2^-2 (float8_e5m2),
// 2^-3 (float8_e4m3fn), 2^-7 (bfloat16), 2^-10 (float16), 2^-23 (float32,
// complex64), 2^-52 (float64, complex128); 0 for integers and bool.
func Epsilon(d loaders.DType) float64 {
	switch d {
	case loaders.Float8E5M2:
		return 0x1p-2
	case loaders.Float8E4M3FN:
		return 0x1p-3
	case loaders.BFloat16:
		return 0x1p-7
	case loaders.Float16:
		return 0x1p-10
	case loaders.Float32, loaders.Complex64:
		return 0x1p-23
	case loaders.Float64, loaders.Complex128:
		return 0x1p-52
	}
	return 0
}

// ComparisonDType returns the dtype two tensors are compared in: the
// coarser of a and b (larger epsilon; a float is coarser than an integer,
// which compares exactly), and compute when both are floating-point and
// compute is coarser still.
func ComparisonDType(a, b, compute loaders.DType) loaders.DType {
	d := a
	if Epsilon(b) > Epsilon(a) || (Epsilon(a) == 0 && b.IsFloat()) {
		d = b
	}
	if compute != loaders.Invalid && (d.IsFloat() || d.IsComplex()) && Epsilon(compute) > Epsilon(d) {
		if d.IsComplex() {
			return d // a complex tensor keeps its own width
		}
		d = compute
	}
	return d
}

// Thresholds are the default aggregate thresholds of each floating-point
// dtype (see package judge for the rule and the measurements behind
// the values). Integer and bool tensors have none: they compare exactly.
var defaultThresholds = map[loaders.DType]struct{ relL2, beyond float64 }{
	loaders.Float64:      {1e-9, 0.10},
	loaders.Complex128:   {1e-9, 0.10},
	loaders.Float32:      {3e-4, 0.10},
	loaders.Complex64:    {3e-4, 0.10},
	loaders.Float16:      {1e-2, 0.25},
	loaders.BFloat16:     {4e-2, 0.25},
	loaders.Float8E4M3FN: {0.25, 0.50},
	loaders.Float8E5M2:   {0.50, 0.50},
}

// thresholds returns the default relative L2 error and fraction of
// elements beyond tolerance above which a pair of dtype d fails; both are 0
// (exact) for integers and bool.
func thresholds(d loaders.DType) (maxRelL2, maxBeyond float64) {
	t := defaultThresholds[d]
	return t.relL2, t.beyond
}
