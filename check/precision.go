package check

import (
	"github.com/graphdiff/graphdiff/loaders"
	"github.com/graphdiff/graphdiff/tolerances"
)

// decidePrecision decides the comparison's Precision, once, before any
// pair is compared: the compute dtype the flags give (override), else the
// coarser one the runs' manifests state; the model's dtype from the
// gradients and parameters read so far (modelDType).
func decidePrecision(a, b *loaders.Run, override loaders.DType) tolerances.Precision {
	compute := override
	if compute == loaders.Invalid {
		compute = manifestCompute(a, b)
	}
	return tolerances.NewPrecision(compute, modelDType(a, b))
}

// modelDType returns the precision the model computes in when neither the
// flags nor the manifests say: the coarsest (largest epsilon) floating-point
// dtype either run stores a parameter or a gradient in (coarserWeight);
// Invalid when the runs hold neither. A model kept in bfloat16 computes in
// bfloat16, so its float32 loss and outputs carry bfloat16 noise and are
// compared at bfloat16; a float32 model changes nothing. Deferred entries
// not read yet count for nothing.
func modelDType(runs ...*loaders.Run) loaders.DType {
	d := loaders.Invalid
	for _, r := range runs {
		for _, e := range r.Entries {
			d = coarserWeight(d, e)
		}
	}
	return d
}

// coarserWeight returns the coarser of d and e's floating-point dtype, as
// the training program had it (its original dtype where a manifest gives
// one), when e is a gradient or a parameter; d otherwise.
func coarserWeight(d loaders.DType, e *loaders.Entry) loaders.DType {
	if e.Kind != loaders.KindGrad && e.Kind != loaders.KindParam {
		return d
	}
	t := e.DType
	if e.Original != loaders.Invalid {
		t = e.Original
	}
	if t.IsFloat() && tolerances.Epsilon(t) > tolerances.Epsilon(d) {
		return t
	}
	return d
}

// manifestCompute returns the coarser compute dtype the runs' manifests
// state, Invalid when neither states one.
func manifestCompute(runs ...*loaders.Run) loaders.DType {
	d := loaders.Invalid
	for _, r := range runs {
		if r.Manifest == nil || r.Manifest.Run.ComputeDType == "" {
			continue
		}
		c, err := loaders.ParseDType(r.Manifest.Run.ComputeDType)
		if err == nil && tolerances.Epsilon(c) > tolerances.Epsilon(d) {
			d = c
		}
	}
	return d
}
