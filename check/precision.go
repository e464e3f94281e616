package check

import (
	"errors"
	"io"
	"math"
	"slices"

	"github.com/graphdiff/graphdiff/loaders"
	"github.com/graphdiff/graphdiff/tolerances"
)

// decidePrecision decides the comparison's Precision, once, before any
// pair is compared: the compute dtype the flags give (override), else the
// coarser one the runs' manifests state; the model's dtype from the
// gradients and parameters read so far (modelDType), or from their values
// where those are float32 holding bfloat16 (revealBFloat16), or from the
// outputs' values where the runs hold neither (inference); and, where no
// flag or manifest gives the compute dtype, the one both runs' outputs or
// float32 gradients show autocast ran in (revealAutocast).
func decidePrecision(a, b *loaders.Run, override loaders.DType) tolerances.Precision {
	compute := override
	if compute == loaders.Invalid {
		compute = manifestCompute(a, b)
	}
	model := modelDType(a, b)
	if (model == loaders.Float32 || model == loaders.Invalid) && revealBFloat16(a, b) {
		p := tolerances.NewPrecision(compute, loaders.BFloat16)
		p.ModelFromValues = true
		return p
	}
	if compute == loaders.Invalid && model == loaders.Float32 {
		if da, db := revealAutocast(a), revealAutocast(b); da != loaders.Invalid && da == db {
			p := tolerances.NewPrecision(da, model)
			p.ComputeFromValues = true
			return p
		}
	}
	return tolerances.NewPrecision(compute, model)
}

// revealAutocast reads autocast from run r's dumps where no flag or
// manifest says it, and returns the dtype it computed in (Invalid: none
// shown). An output of that step stored as bfloat16 or float16 while the
// parameters are float32 (the model's forward ran under autocast) says
// that dtype.
// Otherwise: under torch.autocast a matmul or convolution runs in
// bfloat16 and its weight's gradient is computed in bfloat16, then stored
// in the float32 .grad of a float32 parameter — float32 values whose low
// 16 bits are zero — while the parameters themselves hold float32 values
// (revealBFloat16 found them not bfloat16). It samples the float32
// gradients (no original dtype from a manifest) of the first step that
// has gradients read (readFirstParts reads that step whole), the first
// revealSample values of each, and reports whether the tensors holding such
// values, one of them using bfloat16's whole mantissa (bfloat16Values),
// hold more than half of the sampled elements: under autocast the weights
// of matmuls and convolutions, most of a model's elements, get such
// gradients (71–96% of the sampled elements in the autocast runs of
// testdata), while in a float32 or TF32 run only rounding-level gradients
// do (a bias ahead of a normalization, whose gradient is what cancellation
// leaves, a few significant bits: 2% in resnet_bn_convbias_state_dict_ok).
// A float32 gradient value has zero low 16 bits by chance once in 65,536.
// Entries not read yet are not sampled.
func revealAutocast(r *loaders.Run) loaders.DType {
	step := loaders.NoStep // the first step with a gradient read: the sample, alike however the run is read
	for _, e := range r.Entries {
		if e.Kind == loaders.KindGrad && live(e) != nil && (step == loaders.NoStep || e.Step < step) {
			step = e.Step
		}
	}
	for _, e := range r.Entries {
		if e.Step == step && e.Kind == loaders.KindOutput && e.Original == loaders.Invalid && live(e) != nil &&
			(e.DType == loaders.BFloat16 || e.DType == loaders.Float16) {
			return e.DType
		}
	}
	var bf, all int64
	for _, e := range r.Entries {
		if e.Step != step || e.Kind != loaders.KindGrad || e.DType != loaders.Float32 || e.Original != loaders.Invalid || live(e) == nil {
			continue
		}
		n := min(int64(revealSample), e.Tensor.Len())
		all += n
		if ok, full := bfloat16Values(e.Tensor); ok && full {
			bf += n
		}
	}
	if 2*bf > all {
		return loaders.BFloat16
	}
	return loaders.Invalid
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

// revealSample is how many leading values of each tensor revealBFloat16
// reads.
const revealSample = 4096

// revealBFloat16 reads what the files do not say: numpy has no bfloat16,
// so a bfloat16 model's tensors are saved with .float(), as float32 whose
// low 16 bits are all zero. It reports whether the first tensor of each
// parameter name stored as float32 (with no original dtype from a
// manifest) holds such values in both runs,
// over its first revealSample values, and at least one value uses
// bfloat16's whole mantissa (bfloat16Values): the model is then bfloat16
// (decidePrecision), its rounding, not float32's, what its numbers carry.
// Parameters alone are sampled: under autocast, float32 parameters hold
// float32 values while gradients that came out of bfloat16 arithmetic may
// be bfloat16 values.
// A dump with neither parameters nor gradients (inference: logits,
// tokens) has its float32 outputs and tensors of no kind word sampled
// instead: the values a bfloat16 model computed.
// Entries not read yet (deferred) are not sampled; where none could be,
// nothing is revealed. A float32 value drawn at random has zero low bits
// once in 65,536, so 4,096 values of every sampled tensor cannot all be so
// by chance.
func revealBFloat16(runs ...*loaders.Run) bool {
	kind := loaders.KindParam
	if !slices.ContainsFunc(runs, holdsWeights) {
		kind = loaders.KindOutput // inference: the model's outputs, named so or not
	}
	weights := func(e *loaders.Entry) bool {
		k := e.Kind
		if k == loaders.KindTensor {
			k = loaders.KindOutput
		}
		return k == kind && e.DType == loaders.Float32 && e.Original == loaders.Invalid
	}
	sampled, full := 0, false
	for _, r := range runs {
		seen := map[string]bool{}
		for _, e := range r.Entries {
			if !weights(e) || seen[e.Name] || live(e) == nil {
				continue
			}
			seen[e.Name] = true
			ok, f := bfloat16Values(e.Tensor)
			if !ok {
				return false
			}
			sampled++
			full = full || f
		}
	}
	return sampled > 0 && full
}

// bfloat16Values reports whether t's first revealSample values (all of
// them when fewer) are float32 whose low 16 bits are zero, and whether one
// uses bfloat16's whole mantissa (bit 16 set: its last bit), which values
// a bfloat16 computation rounded do half the time and values with few
// significant bits (0, 1.5, small integers: a hand-made or test tensor)
// never; false when they cannot be read.
func bfloat16Values(t *loaders.Tensor) (ok, full bool) {
	r, err := t.Open()
	if err != nil {
		return false, false
	}
	defer r.Close()
	buf := make([]float32, min(int64(revealSample), t.Len()))
	n, err := r.ReadFloat32(buf)
	if err != nil && !errors.Is(err, io.EOF) || n < len(buf) {
		return false, false
	}
	for _, v := range buf {
		bits := math.Float32bits(v)
		if bits&0xffff != 0 {
			return false, false
		}
		full = full || bits&0x10000 != 0
	}
	return true, full
}

// holdsWeights reports whether run r holds a parameter or a gradient.
func holdsWeights(r *loaders.Run) bool {
	return r != nil && slices.ContainsFunc(r.Entries, func(e *loaders.Entry) bool {
		return e.Kind == loaders.KindParam || e.Kind == loaders.KindGrad
	})
}
