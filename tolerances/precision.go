package tolerances

import (
	"fmt"

	"github.com/graphdiff/graphdiff/loaders"
)

// TF32Epsilon is TF32's epsilon, 2^-10 (10 explicit mantissa bits):
// float32 models are often computed in TF32 (PyTorch's default for cuDNN
// convolutions; matmuls under torch.set_float32_matmul_precision("high")),
// which their dumps cannot show.
const TF32Epsilon = 0x1p-10

// Precision is the arithmetic a comparison assumes the runs did, decided
// once, before any pair is compared, from the flags, the manifests and
// the dumps; every stage that speaks of rounding (the pairs' comparison
// dtype, the run-level rules, the loss curve, the reports) reads it.
type Precision struct {
	// Compute is the dtype the math ran in as given by --compute-dtype or
	// a manifest (autocast), Invalid when neither says. ComputeFromValues
	// is set where neither said and the dumps did: outputs stored in a
	// 16-bit dtype beside float32 parameters, or float32 gradients
	// holding bfloat16 values (the weight gradients of matmuls and
	// convolutions run in bfloat16 under autocast); Compute is then that
	// dtype.
	Compute           loaders.DType
	ComputeFromValues bool
	// Model is the coarsest floating-point dtype the runs store
	// gradients and parameters in (their original dtype where a manifest
	// gives one), Invalid when they hold neither. ModelFromValues is set
	// where the files say float32 and the values say bfloat16 (every
	// sampled value's low 16 bits zero: a bfloat16 model saved with
	// .float()); Model is then BFloat16.
	Model           loaders.DType
	ModelFromValues bool
	// Epsilon is the working epsilon ε the run-level rules and the loss
	// curve are in units of (see NewPrecision).
	Epsilon float64
	// ParamEpsilon is the epsilon of the dtype the parameters are stored
	// in (float32's 2^-23 when unknown): the optimizer's own arithmetic
	// rounds at that level.
	ParamEpsilon float64
}

// NewPrecision returns the precision of runs computed in compute (Invalid:
// not given) whose model is stored in model (Invalid: unknown). Its
// working epsilon is
//
//	ε = max(ε(compute), ε(model), 2^-10)
//
// with TF32's 2^-10 left out when the model is float64 (float64 math is
// never done in TF32); with neither dtype known ε is 2^-10. Integer dtypes
// have epsilon 0 and count for nothing.
func NewPrecision(compute, model loaders.DType) Precision {
	e := max(Epsilon(compute), Epsilon(model))
	if model != loaders.Float64 || e == 0 {
		e = max(e, TF32Epsilon)
	}
	pe := Epsilon(model)
	if pe == 0 {
		pe = Epsilon(loaders.Float32)
	}
	return Precision{Compute: compute, Model: model, Epsilon: e, ParamEpsilon: pe}
}

// ComparisonCompute is the compute dtype a pair is compared in when it is
// coarser than the pair's own dtypes (Resolver.Resolve): the given compute
// dtype, else the model's (a bfloat16 model's float32 loss carries
// bfloat16 noise); Invalid when neither is known.
func (p Precision) ComparisonCompute() loaders.DType {
	if p.Compute != loaders.Invalid {
		return p.Compute
	}
	return p.Model
}

// Coarsest is the coarser (larger epsilon) of the compute and the model
// dtype, the one known where only one is; Invalid when neither is.
func (p Precision) Coarsest() loaders.DType {
	if p.Compute != loaders.Invalid && Epsilon(p.Model) > Epsilon(p.Compute) {
		return p.Model
	}
	return p.ComparisonCompute()
}

// String describes the precision as the reports state it, e.g.
// "compute bfloat16, model float32, ε = 2^-7".
func (p Precision) String() string {
	name := func(d loaders.DType) string {
		if d == loaders.Invalid {
			return "unknown"
		}
		return d.String()
	}
	return fmt.Sprintf("compute %s, model %s, ε = %g", name(p.Compute), name(p.Model), p.Epsilon)
}

// Coarser reports whether d is a floating-point dtype coarser (larger
// epsilon) than the model dtype p was decided with: a comparison that
// finds one after it began must decide its precision again.
func (p Precision) Coarser(d loaders.DType) bool {
	return d.IsFloat() && Epsilon(d) > Epsilon(p.Model)
}
