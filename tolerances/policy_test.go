package tolerances

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/graphdiff/graphdiff/loaders"
)

const examplePolicy = `
# every bf16 gradient, then an exception for biases, then ignore inputs
rules:
  - match: {kind: grad, dtype: bfloat16}
    rtol: 2e-2
    max_rel_l2: 0.05
  - match: {name: "grads/**.bias", dtype: bf16}
    atol: 1e-3
  - match: {name: "inputs/*"}
    ignore: true
  - match: {}
    max_mismatch_fraction: 0.5
`

func TestResolvePolicy(t *testing.T) {
	p, err := ParsePolicy([]byte(examplePolicy))
	if err != nil {
		t.Fatal(err)
	}
	r := Resolver{Policy: p}
	cases := []struct {
		name    string
		kind    loaders.Kind
		a, b    loaders.DType
		compute loaders.DType
		want    Settings
	}{
		{"grads/fc1.weight", loaders.KindGrad, loaders.BFloat16, loaders.BFloat16, loaders.Invalid,
			Settings{DType: loaders.BFloat16, Tolerance: Tolerance{2e-2, 1e-5}, MaxRelL2: 0.05, MaxMismatchFraction: 0.5, PerTensor: true}},
		{"grads/block/fc1.bias", loaders.KindGrad, loaders.BFloat16, loaders.BFloat16, loaders.Invalid,
			Settings{DType: loaders.BFloat16, Tolerance: Tolerance{2e-2, 1e-3}, MaxRelL2: 0.05, MaxMismatchFraction: 0.5, PerTensor: true}},
		// float32 dumps of bfloat16 math: the compute dtype decides, so the bf16 rules apply
		{"grads/fc1.bias", loaders.KindGrad, loaders.Float32, loaders.Float32, loaders.BFloat16,
			Settings{DType: loaders.BFloat16, Tolerance: Tolerance{2e-2, 1e-3}, MaxRelL2: 0.05, MaxMismatchFraction: 0.5, PerTensor: true}},
		{"grads/fc1.bias", loaders.KindGrad, loaders.Float32, loaders.Float32, loaders.Invalid,
			Settings{DType: loaders.Float32, Tolerance: Tolerance{1.3e-6, 1e-5}, MaxRelL2: 3e-4, MaxMismatchFraction: 0.5}},
		{"inputs/x", loaders.KindInput, loaders.Float32, loaders.Float32, loaders.Invalid,
			Settings{DType: loaders.Float32, Tolerance: Tolerance{1.3e-6, 1e-5}, MaxRelL2: 3e-4, MaxMismatchFraction: 0.5, Ignore: true}},
		{"inputs/deep/x", loaders.KindInput, loaders.Float32, loaders.Float32, loaders.Invalid,
			Settings{DType: loaders.Float32, Tolerance: Tolerance{1.3e-6, 1e-5}, MaxRelL2: 3e-4, MaxMismatchFraction: 0.5}},
		// mixed dtypes compare in the coarser one
		{"loss", loaders.KindLoss, loaders.Float32, loaders.Float16, loaders.Invalid,
			Settings{DType: loaders.Float16, Tolerance: Tolerance{1e-3, 1e-5}, MaxRelL2: 1e-2, MaxMismatchFraction: 0.5}},
		// integers stay exact under a float compute dtype
		{"step_count", loaders.KindTensor, loaders.Int64, loaders.Int64, loaders.BFloat16,
			Settings{DType: loaders.Int64, MaxMismatchFraction: 0.5}},
	}
	for _, tc := range cases {
		if got := r.Resolve(tc.name, tc.kind, tc.a, tc.b, tc.compute); got != tc.want {
			t.Errorf("%s %s/%s compute %s:\n got %+v\nwant %+v", tc.name, tc.a, tc.b, tc.compute, got, tc.want)
		}
	}
	// command-line values win over the policy
	rtol := 0.5
	r.Overrides.RTol = &rtol
	if got := r.Resolve("grads/fc1.weight", loaders.KindGrad, loaders.BFloat16, loaders.BFloat16, loaders.Invalid); got.RTol != 0.5 || got.MaxRelL2 != 0.05 {
		t.Errorf("override: %+v", got)
	}
}

func TestParsePolicyErrors(t *testing.T) {
	cases := []struct{ yaml, want string }{
		{"rules:\n  - match: {nme: x}\n", "field nme not found"},
		{"rule:\n  - {}\n", "field rule not found"},
		{"rules:\n  - rtol: -1\n", "rule 1: rtol must be between 0 and"},
		{"rules:\n  - max_mismatch_fraction: 2\n", "max_mismatch_fraction must be between 0 and 1"},
		{"rules:\n  - match: {kind: weights}\n", `unknown kind "weights"`},
		{"rules:\n  - match: {dtype: float3}\n", `unknown dtype "float3"`},
		{"rules:\n  - match: {name: 'a[b'}\n", "unclosed '['"},
		{"rules: [", "yaml"},
	}
	for _, tc := range cases {
		_, err := ParsePolicy([]byte(tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.yaml, err, tc.want)
		}
	}
	if p, err := ParsePolicy(nil); err != nil || len(p.Rules) != 0 {
		t.Errorf("empty policy: %v %v", p, err)
	}
}

// TestPolicyBombsAreRefusedAtOnce: a glob of megabytes (it would compile
// to gigabytes of regular expression) and tens of thousands of rules (each
// tensor is matched against every one) are refused before any work, with
// a message of one short line; the largest glob and rule count allowed
// still parse.
func TestPolicyBombsAreRefusedAtOnce(t *testing.T) {
	longGlob := strings.Repeat("a*", 2<<20)
	var many strings.Builder
	many.WriteString("rules:\n")
	for i := range maxRules + 1 {
		fmt.Fprintf(&many, "  - {match: {name: 'a%d*'}, max_rel_l2: 0.1}\n", i)
	}
	for _, tc := range []struct{ yaml, want string }{
		{"rules:\n  - match: {name: '" + longGlob + "'}\n", "a glob of 4194304 bytes (at most 4096)"},
		{many.String(), "1025 rules (at most 1024)"},
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := ParsePolicy([]byte(tc.yaml))
		runtime.ReadMemStats(&after)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want %q", err, tc.want)
			continue
		}
		if len(err.Error()) > 200 {
			t.Errorf("a message of %d bytes: %.200s...", len(err.Error()), err)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 256<<20 {
			t.Errorf("%q: allocated %d MiB before refusing", tc.want, alloc>>20)
		}
	}
	ok := "rules:\n  - match: {name: '" + strings.Repeat("x", maxGlobLen) + "'}\n    ignore: true\n"
	if _, err := ParsePolicy([]byte(ok)); err != nil {
		t.Errorf("a glob of %d bytes: %v", maxGlobLen, err)
	}
}

func TestGlob(t *testing.T) {
	cases := []struct {
		glob, name string
		want       bool
	}{
		{"grads/*", "grads/fc1.weight", true},
		{"grads/*", "grads/block/fc1.weight", false},
		{"grads/**", "grads/block/fc1.weight", true},
		{"**.bias", "params/fc1.bias", true},
		{"fc?.weight", "fc1.weight", true},
		{"fc[12].weight", "fc3.weight", false},
		{"fc[!12].weight", "fc3.weight", true},
		{"loss", "losses", false},
	}
	for _, tc := range cases {
		re, err := globRegexp(tc.glob)
		if err != nil {
			t.Fatal(err)
		}
		if got := re.MatchString(tc.name); got != tc.want {
			t.Errorf("%q matches %q = %v", tc.glob, tc.name, got)
		}
	}
}

// TestPolicyRunSection: a policy's run section overrides the run-level
// rules it names and keeps the others; bad values and unknown keys are
// errors.
func TestPolicyRunSection(t *testing.T) {
	p, err := ParsePolicy([]byte("run:\n  grad: 40\n  update: 3.5\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultRunRules
	want.Grad, want.Update = 40, 3.5
	if got := (Resolver{Policy: p}).Run(); got != want {
		t.Errorf("rules %+v, want %+v", got, want)
	}
	if got := (Resolver{}).Run(); got != DefaultRunRules {
		t.Errorf("no policy: %+v", got)
	}
	for _, bad := range []string{"run:\n  grad: -1\n", "run:\n  loss: 0\n", "run:\n  gard: 4\n", "run:\n  output: .inf\n"} {
		if _, err := ParsePolicy([]byte(bad)); err == nil {
			t.Errorf("%q: accepted", bad)
		}
	}
}
