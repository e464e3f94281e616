package loaders

import "slices"

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
	// Moment is Tensor.Moment: how an optimizer's state tensor carries
	// the gradient, the zero Moment for any other tensor.
	Moment Moment
}

// Meta returns the entry's description as a value.
func (e *Entry) Meta() *Meta {
	return &Meta{File: e.File, Member: e.Member, DType: e.DType, Original: e.Original,
		Shape: slices.Clone(e.Shape), FortranOrder: e.FortranOrder, Moment: e.Moment}
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
