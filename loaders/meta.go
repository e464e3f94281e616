package loaders

import (
	"slices"
	"strings"
)

// Meta is what is known of a tensor without its data: a value that
// results carry in place of the tensor, so that they hold no file handle
// and can be rendered, encoded and decoded anywhere.
type Meta struct {
	// File is the file's path relative to the run root, '/'-separated;
	// Member the .npz member or .safetensors key inside it ("" for a file
	// of one tensor).
	File, Member string
	// DType is how the stored bytes are decoded; Original the dtype the
	// training program used when it differs (see Tensor.Original).
	DType, Original DType
	// Shape is the array's shape; empty for a 0-d array.
	Shape []int
	// FortranOrder is true when the bytes are in column-major order.
	FortranOrder bool
	// Moment is Tensor.Moment, how an optimizer's state tensor carries
	// the gradient (the zero Moment for any other tensor), with its Param
	// the name of the parameter's pair (Entry.MomentParam), not its name
	// in the file.
	Moment Moment
	// Hyper is Tensor.Hyper: an optimizer's hyperparameter held as a
	// tensor.
	Hyper bool
}

// Meta returns the entry's description as a value.
func (e *Entry) Meta() *Meta {
	m := e.Moment
	m.Param = e.MomentParam()
	return &Meta{File: e.File, Member: e.Member, DType: e.DType, Original: e.Original,
		Shape: slices.Clone(e.Shape), FortranOrder: e.FortranOrder, Moment: m, Hyper: e.Hyper}
}

// MomentParam returns the name the pairs give the parameter whose
// gradient the entry's moment carries (Tensor.Moment.Param, named in the
// file): the entry's own name with its name in the file replaced by the
// parameter's ("checkpoint/optimizer_state_dict/state/3/exp_avg" →
// "checkpoint/model_state_dict/fc.bias"), or the pair another file of
// the step holds it under (Moment.Pair); "" where the moment names no
// parameter, or a manifest renamed the entry.
func (e *Entry) MomentParam() string {
	if e.Tensor != nil && e.Moment.Pair != "" {
		return e.Moment.Pair // matched in another file of the step (matchAcross)
	}
	if e.Tensor == nil || e.Moment.Param == "" {
		return ""
	}
	prefix, ok := strings.CutSuffix(e.Name, e.Tensor.Name)
	if !ok || prefix != "" && !strings.HasSuffix(prefix, "/") {
		return ""
	}
	return prefix + e.Moment.Param
}

// Effective returns the dtype the tensor had in the training program:
// Original when set, else DType.
func (m *Meta) Effective() DType {
	if m.Original != Invalid {
		return m.Original
	}
	return m.DType
}

// Len returns the number of elements: the product of the shape, 1 for a
// 0-d array.
func (m *Meta) Len() int64 {
	n := int64(1)
	for _, d := range m.Shape {
		n *= int64(d)
	}
	return n
}
