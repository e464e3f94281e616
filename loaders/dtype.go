package loaders

import (
	"fmt"
	"strings"
)

// DType is the element type of a tensor as graphdiff decodes it.
type DType uint8

// The element types graphdiff reads. Their String values are numpy's dtype
// names, with ml_dtypes' names for the formats numpy lacks.
const (
	Invalid DType = iota
	Bool
	Int8
	Int16
	Int32
	Int64
	Uint8
	Uint16
	Uint32
	Uint64
	Float8E4M3FN
	Float8E5M2
	Float16
	BFloat16
	Float32
	Float64
	Complex64
	Complex128
)

var dtypeInfo = [...]struct {
	name string
	size int
}{
	Invalid:      {"invalid", 0},
	Bool:         {"bool", 1},
	Int8:         {"int8", 1},
	Int16:        {"int16", 2},
	Int32:        {"int32", 4},
	Int64:        {"int64", 8},
	Uint8:        {"uint8", 1},
	Uint16:       {"uint16", 2},
	Uint32:       {"uint32", 4},
	Uint64:       {"uint64", 8},
	Float8E4M3FN: {"float8_e4m3fn", 1},
	Float8E5M2:   {"float8_e5m2", 1},
	Float16:      {"float16", 2},
	BFloat16:     {"bfloat16", 2},
	Float32:      {"float32", 4},
	Float64:      {"float64", 8},
	Complex64:    {"complex64", 8},
	Complex128:   {"complex128", 16},
}

// String returns the dtype's name as numpy spells it ("float32", "int8",
// "bool"), or ml_dtypes' name for bfloat16, float8_e4m3fn and float8_e5m2.
func (d DType) String() string {
	if int(d) < len(dtypeInfo) {
		return dtypeInfo[d].name
	}
	return fmt.Sprintf("DType(%d)", d)
}

// Size returns the size of one element in bytes (8 for complex64: two
// float32 parts).
func (d DType) Size() int {
	if int(d) < len(dtypeInfo) {
		return dtypeInfo[d].size
	}
	return 0
}

// IsFloat reports whether d is a real floating-point type, float8 included.
func (d DType) IsFloat() bool { return d >= Float8E4M3FN && d <= Float64 }

// IsComplex reports whether d is complex64 or complex128.
func (d DType) IsComplex() bool { return d == Complex64 || d == Complex128 }

// IsInteger reports whether d is a signed or unsigned integer type.
func (d DType) IsInteger() bool { return d >= Int8 && d <= Uint64 }

// Components returns how many float64 values one element decodes to: 2 for
// complex types (real, imaginary), 1 otherwise.
func (d DType) Components() int {
	if d.IsComplex() {
		return 2
	}
	return 1
}

// MarshalText writes the dtype's name, so that JSON shows "bfloat16".
func (d DType) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// dtypeAliases maps every accepted spelling to its dtype: numpy's names,
// torch's names (without "torch."), and the short forms people type.
var dtypeAliases = map[string]DType{
	"bool": Bool, "bool_": Bool,
	"int8": Int8, "int16": Int16, "int32": Int32, "int64": Int64,
	"uint8": Uint8, "uint16": Uint16, "uint32": Uint32, "uint64": Uint64,
	"float8_e4m3fn": Float8E4M3FN, "e4m3fn": Float8E4M3FN, "e4m3": Float8E4M3FN, "fp8_e4m3": Float8E4M3FN,
	"float8_e5m2": Float8E5M2, "e5m2": Float8E5M2, "fp8_e5m2": Float8E5M2,
	"float16": Float16, "half": Float16, "fp16": Float16, "f16": Float16,
	"bfloat16": BFloat16, "bf16": BFloat16,
	"float32": Float32, "float": Float32, "fp32": Float32, "f32": Float32,
	"float64": Float64, "double": Float64, "fp64": Float64, "f64": Float64,
	"complex64": Complex64, "complex128": Complex128, "cfloat": Complex64, "cdouble": Complex128,
}

// ParseDType returns the dtype named s: numpy's names ("float32"), torch's
// ("torch.bfloat16", "half"), ml_dtypes' ("float8_e4m3fn") or short forms
// ("bf16", "fp32", "e5m2"). Case is ignored.
func ParseDType(s string) (DType, error) {
	key := strings.ToLower(strings.TrimPrefix(strings.TrimSpace(s), "torch."))
	if d, ok := dtypeAliases[key]; ok {
		return d, nil
	}
	return Invalid, fmt.Errorf("unknown dtype %q (want a numpy or torch name such as float32, bfloat16, float8_e4m3fn)", s)
}

// ParseFloat8 returns the float8 format named s ("e4m3fn", "e5m2" or their
// full names), for hints about raw one-byte data.
func ParseFloat8(s string) (DType, error) {
	d, err := ParseDType(s)
	if err != nil || (d != Float8E4M3FN && d != Float8E5M2) {
		return Invalid, fmt.Errorf("unknown float8 format %q (want e4m3fn or e5m2)", s)
	}
	return d, nil
}
