// Package npyfile writes .npy files for the tests that generate their
// inputs as they run: the fuzz target that drives whole comparisons
// (cmd/graphdiff's FuzzCompareRuns) and the property tests of reading and
// of the update measurement. Fixtures kept in testdata are made by numpy
// through the scripts of testdata/gen; the files written here live only
// as long as a test's temporary directory.
//
// Write hands an array to github.com/sbinet/npyio where npyio can write
// it: a 0-d or 1-D array, in C order, of a little-endian (or one-byte)
// bool, integer, float32, float64, complex64 or complex128 dtype. npyio
// writes format version 2.0 and pads its header to no boundary in
// particular, so the data of its files is often not aligned to its
// elements. Every other array — float16 ('<f2', npyio has no writer for
// it), bfloat16 as ml_dtypes saves it ('<V2'), float8 ('|V1' for
// float8_e4m3fn, '<f1' for float8_e5m2, as ml_dtypes saves them),
// big-endian dtypes, Fortran order, two or more dimensions — is forged by
// Forge, a generator that follows numpy's format specification
// (https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html):
// the magic "\x93NUMPY", version 1.0, the header's length as a
// little-endian uint16, and the header, the repr of a dict with the keys
// 'descr', 'fortran_order' and 'shape' in numpy's order, padded with
// spaces and ended by '\n' so that the data starts at a multiple of 64
// bytes, as numpy's own writer pads it.
//
// Checked once, when this package was written: 813 files of both
// writers (every dtype FuzzCompareRuns generates, in 7 shapes from 0-d
// to 3-D with empty ones, both byte orders, both storage orders, its
// special values) loaded with Debian's numpy 1.24.2, numpy.load, hold the
// shapes and, element for element in C order, the bytes written, but the
// 28 of '<f1', a descr numpy knows only once ml_dtypes registers it.
package npyfile

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/sbinet/npyio/npy"
)

// Array is an array as an .npy file holds it.
type Array struct {
	// Descr is numpy's type descriptor: "<f4", ">i8", "|b1", "<V2".
	Descr string
	// Shape is the array's shape, empty for a 0-d array.
	Shape []int
	// Fortran is true when Data is in column-major order.
	Fortran bool
	// Data holds the elements in storage order, each in the byte order
	// Descr says.
	Data []byte
}

// Write writes a to path: through npyio where npyio can write it (see the
// package comment), else as Forge does.
func Write(path string, a Array) error {
	if v, ok := npyioValue(a); ok {
		var buf bytes.Buffer
		if err := npy.Write(&buf, v); err != nil {
			return fmt.Errorf("npyio: %s %v: %w", a.Descr, a.Shape, err)
		}
		return os.WriteFile(path, buf.Bytes(), 0o644)
	}
	return Forge(path, a)
}

// Forge writes a to path by numpy's format specification, version 1.0,
// whatever a holds.
func Forge(path string, a Array) error {
	var dims []string
	for _, d := range a.Shape {
		dims = append(dims, strconv.Itoa(d))
	}
	shape := "(" + strings.Join(dims, ", ") + ")"
	if len(a.Shape) == 1 {
		shape = "(" + dims[0] + ",)"
	}
	fortran := "False"
	if a.Fortran {
		fortran = "True"
	}
	header := fmt.Sprintf("{'descr': '%s', 'fortran_order': %s, 'shape': %s, }", a.Descr, fortran, shape)
	const preamble = 10 // magic, version, header length
	total := (preamble + len(header) + 1 + 63) / 64 * 64
	header += strings.Repeat(" ", total-preamble-len(header)-1) + "\n"
	if len(header) > math.MaxUint16 {
		return fmt.Errorf("header of %d bytes does not fit version 1.0", len(header))
	}
	out := make([]byte, 0, total+len(a.Data))
	out = append(out, "\x93NUMPY\x01\x00"...)
	out = binary.LittleEndian.AppendUint16(out, uint16(len(header)))
	out = append(out, header...)
	out = append(out, a.Data...)
	return os.WriteFile(path, out, 0o644)
}

// npyioValue returns a as the Go value npyio writes as it (a slice for a
// 1-D array, a scalar for a 0-d one), and false where npyio cannot write
// it.
func npyioValue(a Array) (any, bool) {
	if a.Fortran || len(a.Shape) > 1 {
		return nil, false
	}
	var v any
	le := binary.LittleEndian
	switch a.Descr {
	case "|b1":
		v = each(a.Data, 1, func(b []byte) bool { return b[0] != 0 })
	case "|u1":
		v = each(a.Data, 1, func(b []byte) uint8 { return b[0] })
	case "|i1":
		v = each(a.Data, 1, func(b []byte) int8 { return int8(b[0]) })
	case "<u2":
		v = each(a.Data, 2, le.Uint16)
	case "<i2":
		v = each(a.Data, 2, func(b []byte) int16 { return int16(le.Uint16(b)) })
	case "<u4":
		v = each(a.Data, 4, le.Uint32)
	case "<i4":
		v = each(a.Data, 4, func(b []byte) int32 { return int32(le.Uint32(b)) })
	case "<u8":
		v = each(a.Data, 8, le.Uint64)
	case "<i8":
		v = each(a.Data, 8, func(b []byte) int64 { return int64(le.Uint64(b)) })
	case "<f4":
		v = each(a.Data, 4, func(b []byte) float32 { return math.Float32frombits(le.Uint32(b)) })
	case "<f8":
		v = each(a.Data, 8, func(b []byte) float64 { return math.Float64frombits(le.Uint64(b)) })
	case "<c8":
		v = each(a.Data, 8, func(b []byte) complex64 {
			return complex(math.Float32frombits(le.Uint32(b)), math.Float32frombits(le.Uint32(b[4:])))
		})
	case "<c16":
		v = each(a.Data, 16, func(b []byte) complex128 {
			return complex(math.Float64frombits(le.Uint64(b)), math.Float64frombits(le.Uint64(b[8:])))
		})
	default:
		return nil, false
	}
	if len(a.Shape) == 0 {
		return first(v), true
	}
	return v, true
}

// each decodes data, size bytes an element, into a slice.
func each[T any](data []byte, size int, elem func([]byte) T) []T {
	out := make([]T, len(data)/size)
	for i := range out {
		out[i] = elem(data[i*size:])
	}
	return out
}

// first returns the one element of a slice made by each, as a scalar.
func first(v any) any {
	switch s := v.(type) {
	case []bool:
		return s[0]
	case []uint8:
		return s[0]
	case []int8:
		return s[0]
	case []uint16:
		return s[0]
	case []int16:
		return s[0]
	case []uint32:
		return s[0]
	case []int32:
		return s[0]
	case []uint64:
		return s[0]
	case []int64:
		return s[0]
	case []float32:
		return s[0]
	case []float64:
		return s[0]
	case []complex64:
		return s[0]
	case []complex128:
		return s[0]
	}
	panic(fmt.Sprintf("npyfile: no scalar of %T", v))
}

// FortranOrder returns the elements of data, size bytes each, given in C
// (row-major) order for an array of the given shape, in Fortran
// (column-major) order: the first index varying fastest.
func FortranOrder(shape []int, size int, data []byte) []byte {
	out := make([]byte, len(data))
	n := len(data) / size
	idx := make([]int, len(shape))
	for c := range n {
		// idx of C position c, then its Fortran position
		rest := c
		for d := len(shape) - 1; d >= 0; d-- {
			idx[d] = rest % shape[d]
			rest /= shape[d]
		}
		f, stride := 0, 1
		for d := range shape {
			f += idx[d] * stride
			stride *= shape[d]
		}
		copy(out[f*size:(f+1)*size], data[c*size:(c+1)*size])
	}
	return out
}

// Swap returns data with the bytes of each part of part bytes reversed:
// little-endian to big-endian and back. part is the element's size, or
// half of it for a complex element, whose two parts swap separately.
func Swap(data []byte, part int) []byte {
	out := make([]byte, len(data))
	for i := 0; i+part <= len(data); i += part {
		for k := range part {
			out[i+k] = data[i+part-1-k]
		}
	}
	return out
}
