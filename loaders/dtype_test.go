package loaders

import (
	"fmt"
	"io"
	"testing"
)

// TestNarrowFloatTables decodes every bit pattern of float16, bfloat16,
// float8_e4m3fn and float8_e5m2 as numpy and ml_dtypes saved them and
// compares each value with numpy's / ml_dtypes' own conversion to float32
// (testdata/dtypes, made by testdata/gen/gpu_fixtures.py): bitwise for
// every non-NaN pattern (so ±0, subnormals and ±Inf), NaN for NaN.
func TestNarrowFloatTables(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		dtype    DType
		patterns int
		opts     Options
	}{
		{"float16", Float16, 1 << 16, Options{}},
		{"bfloat16", BFloat16, 1 << 16, Options{}}, // '<V2' read as bfloat16 by default
		{"float8_e4m3fn", Float8E4M3FN, 256, Options{V1: Float8E4M3FN}},
		{"float8_e5m2", Float8E5M2, 256, Options{}}, // ml_dtypes writes '<f1'
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bits := openOne(t, fixture("dtypes", tc.name+"_bits.npy"), tc.opts)
			if bits.DType != tc.dtype || bits.Len() != int64(tc.patterns) {
				t.Fatalf("read as %s with %d elements", bits.DType, bits.Len())
			}
			want := readC(t, openOne(t, fixture("dtypes", tc.name+"_float32.npy"), Options{}), 1<<12)
			got := readC(t, bits, 1<<12)
			nan := 0
			for i := range want {
				if !sameValue(got[i], want[i]) {
					t.Errorf("pattern %#x: got %v, ml_dtypes %v", i, got[i], want[i])
				}
				if want[i] != want[i] {
					nan++
				}
			}
			t.Logf("%d patterns, %d NaN", len(want), nan)
			for _, bufLen := range []int{1 << 12, 1000, 13} { // and to float32, through the float32 decoders
				got := readFloat32(t, bits, bufLen)
				for i := range want {
					if !sameValue(float64(got[i]), want[i]) {
						t.Fatalf("pattern %#x as float32 (buffer %d): got %v, ml_dtypes %v", i, bufLen, got[i], want[i])
					}
				}
			}
		})
	}
}

// readFloat32 reads a tensor's elements in storage order with ReadFloat32,
// bufLen at a time.
func readFloat32(t *testing.T, tn *Tensor, bufLen int) []float32 {
	t.Helper()
	r, err := tn.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	out := make([]float32, 0, tn.Len())
	buf := make([]float32, bufLen)
	for {
		n, err := r.ReadFloat32(buf)
		out = append(out, buf[:n]...)
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestFloat8Specials pins the points of the float8 formats that decide
// their ranges, as the OCP 8-bit floating point specification defines them.
func TestFloat8Specials(t *testing.T) {
	t.Parallel()
	cases := []struct {
		table *[256]float64
		bits  byte
		want  string
	}{
		{&e4m3Table, 0x7E, "448"},               // largest finite e4m3fn
		{&e4m3Table, 0x7F, "NaN"},               // e4m3fn has no Inf
		{&e4m3Table, 0x78, "256"},               // top binade is finite
		{&e4m3Table, 0x01, "0.001953125"},       // smallest subnormal 2^-9
		{&e4m3Table, 0x80, "-0"},                // negative zero
		{&e5m2Table, 0x7B, "57344"},             // largest finite e5m2
		{&e5m2Table, 0x7C, "+Inf"},              // e5m2 has Inf
		{&e5m2Table, 0xFC, "-Inf"},              //
		{&e5m2Table, 0x7D, "NaN"},               //
		{&e5m2Table, 0x01, "1.52587890625e-05"}, // smallest subnormal 2^-16
	}
	for _, tc := range cases {
		if got := fmt.Sprint(tc.table[tc.bits]); got != tc.want {
			t.Errorf("pattern %#x = %s, want %s", tc.bits, got, tc.want)
		}
	}
}

func TestParseDType(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]DType{
		"float32": Float32, "torch.bfloat16": BFloat16, "BF16": BFloat16, "half": Float16,
		"e4m3fn": Float8E4M3FN, "float8_e5m2": Float8E5M2, "int64": Int64, "bool": Bool,
	} {
		if got, err := ParseDType(in); err != nil || got != want {
			t.Errorf("ParseDType(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := ParseDType("float3"); err == nil {
		t.Error("ParseDType(float3): no error")
	}
	if _, err := ParseFloat8("bf16"); err == nil {
		t.Error("ParseFloat8(bf16): no error")
	}
}
