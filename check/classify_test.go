package check

import (
	"errors"
	"slices"
	"testing"

	"github.com/graphdiff/graphdiff/judge"
	"github.com/graphdiff/graphdiff/loaders"
	"github.com/graphdiff/graphdiff/tolerances"
)

// TestClassify decides, for each way a pair can stand before it is
// compared, its class and what its result says.
func TestClassify(t *testing.T) {
	t.Parallel()
	entry := func(d loaders.DType, shape ...int) *loaders.Entry {
		return &loaders.Entry{Name: "grads/w", Step: 1, Kind: loaders.KindGrad, Tensor: &loaders.Tensor{DType: d, Shape: shape}}
	}
	f32, errRead := entry(loaders.Float32, 4, 3), errors.New("truncated")
	ignore := true
	ignoring := tolerances.Resolver{Policy: &tolerances.Policy{Rules: []tolerances.Rule{{Match: tolerances.Match{Name: "grads/*"}, Ignore: &ignore}}}}
	for _, tc := range []struct {
		name       string
		a, b       *loaders.Entry
		errA, errB error
		resolver   tolerances.Resolver
		class      class
		status     judge.Status
		reason     string
		err        error
	}{
		{name: "both read, alike", a: f32, b: f32, class: toCompare},
		{name: "neither read", errA: errRead, errB: errRead, class: unlisted},
		{name: "second unreadable", a: f32, errB: errRead, class: settled, status: judge.StatusError, reason: "could not be read in B", err: errRead},
		{name: "first unreadable", b: f32, errA: errRead, class: settled, status: judge.StatusError, reason: "could not be read in A", err: errRead},
		{name: "missing", a: f32, class: settled, status: judge.StatusMissing, reason: "not in B"},
		{name: "extra", b: f32, class: settled, status: judge.StatusExtra, reason: "not in A"},
		{name: "shapes differ", a: f32, b: entry(loaders.Float32, 3, 4), class: settled, status: judge.StatusShapeMismatch, reason: "shape (4, 3) in A, (3, 4) in B"},
		{name: "real against complex", a: f32, b: entry(loaders.Complex64, 4, 3), class: settled, status: judge.StatusDTypeMismatch, reason: "dtype float32 in A, complex64 in B"},
		{name: "float32 against bfloat16: compared", a: f32, b: entry(loaders.BFloat16, 4, 3), class: toCompare},
		{name: "ignored by the policy", a: f32, b: f32, resolver: ignoring, class: ignored},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := sides{Name: "grads/w", Step: 1, Kind: loaders.KindGrad, A: tc.a, B: tc.b, ErrA: tc.errA, ErrB: tc.errB, RootA: "A", RootB: "B"}
			c := classify(s, tc.resolver, tolerances.NewPrecision(loaders.Invalid, loaders.Float32))
			if c.class != tc.class || c.Decision.Status != tc.status || c.Err != tc.err {
				t.Fatalf("class %d, status %q, error %v; want %d, %q, %v", c.class, c.Decision.Status, c.Err, tc.class, tc.status, tc.err)
			}
			if want := []string{tc.reason}; tc.reason != "" && !slices.Equal(c.Decision.Reasons, want) {
				t.Errorf("reasons %q, want %q", c.Decision.Reasons, want)
			}
			if both := tc.a != nil && tc.b != nil; both != (c.Settings.DType != loaders.Invalid) {
				t.Errorf("settings %+v: want them resolved where both sides were read (%v)", c.Settings, both)
			}
			if r := c.result(s); c.class == settled && (r.Status != tc.status || r.Name != "grads/w" || (tc.a != nil) != (r.A != nil)) {
				t.Errorf("result %+v", r)
			}
		})
	}
}
