package report

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/graphdiff/graphdiff/compare"
	"github.com/graphdiff/graphdiff/judge"
	"github.com/graphdiff/graphdiff/loaders"
)

// carriedElsewhere are the fields of compare.Metrics that the "metrics"
// object does not carry, and where the report carries them instead.
var carriedElsewhere = map[string]string{
	"NormA":    `"partial": {"norm_a"} in a shard's report (PartialJSON)`,
	"NormDiff": `"partial": {"norm_diff"} in a shard's report (PartialJSON)`,
}

// leaves calls visit with every exported field of the struct v that is
// not itself a struct, named by its path ("MaxAbs.Index"), descending
// into the fields that are.
func leaves(v reflect.Value, path string, visit func(path string, f reflect.Value)) {
	for i := range v.NumField() {
		sf := v.Type().Field(i)
		if !sf.IsExported() {
			continue
		}
		p := path + sf.Name
		if f := v.Field(i); f.Kind() == reflect.Struct {
			leaves(f, p+".", visit)
		} else {
			visit(p, f)
		}
	}
}

// pointers returns where f's value lives in m, nil for a value made from
// other fields.
func pointers(f *metricField, m *compare.Metrics) []any {
	switch f.kind {
	case metricCount, metricElements:
		return []any{f.int(m)}
	case metricUint:
		return []any{f.uint(m)}
	case metricFloat:
		return []any{f.float(m)}
	case metricIndex:
		return []any{f.index(m)}
	case metricPeak:
		e := f.peak(m)
		return []any{&e.A, &e.B}
	}
	return nil
}

// TestMetricFieldsCoverMetrics fails when a field of compare.Metrics (or
// of its Extremes) has no key in metricFields, the one list the JSON
// report writes and reads a pair's metrics by, and is not carried
// elsewhere: a new metric missing from the report shows here. Two keys
// of one name, or two keys for one field, fail too.
func TestMetricFieldsCoverMetrics(t *testing.T) {
	t.Parallel()
	var m compare.Metrics
	owner := map[any]string{} // a field's address, typed, to its key
	keys := map[string]bool{}
	for i := range metricFields {
		f := &metricFields[i]
		if keys[f.key] {
			t.Errorf("key %q listed twice", f.key)
		}
		keys[f.key] = true
		for _, p := range pointers(f, &m) {
			if k, ok := owner[p]; ok {
				t.Errorf("keys %q and %q are one field", k, f.key)
			}
			owner[p] = f.key
		}
	}
	seen := map[string]bool{}
	leaves(reflect.ValueOf(&m).Elem(), "", func(path string, v reflect.Value) {
		seen[path] = true
		_, keyed := owner[v.Addr().Interface()]
		where, elsewhere := carriedElsewhere[path]
		switch {
		case !keyed && !elsewhere:
			t.Errorf("compare.Metrics.%s has no key in metricFields (report/metrics_json.go)", path)
		case keyed && elsewhere:
			t.Errorf("compare.Metrics.%s has a key in metricFields, and is said to be carried in %s", path, where)
		}
	})
	for path := range carriedElsewhere {
		if !seen[path] {
			t.Errorf("carriedElsewhere names compare.Metrics.%s, which is not a field", path)
		}
	}
}

// everyFieldSet returns metrics whose every exported field holds a value
// of its own (indexes of two dimensions, counts up to 30 of 1,000
// elements), so that a field the JSON form drops or mixes up shows.
func everyFieldSet(tb testing.TB) compare.Metrics {
	var m compare.Metrics
	n := 0
	leaves(reflect.ValueOf(&m).Elem(), "", func(path string, v reflect.Value) {
		n++
		switch {
		case v.Kind() == reflect.Int64:
			v.SetInt(int64(n))
		case v.Kind() == reflect.Uint64:
			v.SetUint(1<<63 + uint64(n))
		case v.Kind() == reflect.Float64:
			v.SetFloat(float64(n) + 1.0/3)
		case v.Type() == reflect.TypeFor[[]int]():
			v.Set(reflect.ValueOf([]int{n, 2 * n}))
		default:
			tb.Fatalf("compare.Metrics.%s: no test value for a %s", path, v.Type())
		}
	})
	m.Count = 1000
	return m
}

// metricsDiff returns the exported fields where a and b differ, "" when
// none: NaN equals NaN, -0 differs from 0 and nil from [].
func metricsDiff(a, b *compare.Metrics) string {
	show := func(m *compare.Metrics) (fields []string) {
		leaves(reflect.ValueOf(m).Elem(), "", func(path string, v reflect.Value) {
			fields = append(fields, fmt.Sprintf("%s %#v", path, v.Interface()))
		})
		return fields
	}
	var diff []string
	for i, x := range show(a) {
		if y := show(b)[i]; x != y {
			diff = append(diff, x+", then "+y)
		}
	}
	return strings.Join(diff, "; ")
}

// TestMetricsRoundTrip writes a pair's metrics as a shard's report does
// and reads the pair back as merge does: every exported field of
// compare.Metrics comes back as it was, NaN, ±Inf, -0, subnormals, the
// largest counts and the index of a 0-d tensor included. The metrics are
// read the quick way (readMetricsAsWritten), and encoding/json's way
// agrees.
func TestMetricsRoundTrip(t *testing.T) {
	t.Parallel()
	nan, inf := math.NaN(), math.Inf(1)
	noPeak := compare.Extreme{Value: nan, A: nan, B: nan}
	type testCase struct {
		name    string
		shape   []int
		metrics compare.Metrics
	}
	cases := []testCase{
		{"every field set", []int{10, 100}, everyFieldSet(t)},
		{"equal", []int{4}, compare.Metrics{Count: 4, MaxAbs: compare.Extreme{A: nan, B: nan}, MaxRel: compare.Extreme{A: nan, B: nan},
			Cosine: 1, NormA: 2}},
		{"no finite pair", []int{2, 1}, compare.Metrics{Count: 2, Mismatched: 1, FirstMismatch: []int{1, 0}, MaxAbs: noPeak, MaxRel: noPeak,
			Cosine: 1, P50: nan, P90: nan, P99: nan, NaNA: 2, NaNB: 1, InfB: 1, SpecialMismatches: 1}},
		{"reference zero", []int{3}, compare.Metrics{Count: 3, Mismatched: 3, FirstMismatch: []int{0},
			MaxAbs: compare.Extreme{Value: 5e-324, Index: []int{2}, A: math.Copysign(0, -1), B: -5e-324},
			MaxRel: compare.Extreme{Value: inf, Index: []int{2}, A: 0, B: -5e-324},
			RelL2:  inf, Cosine: nan, NormDiff: 1e-300, P50: 5e-324, P90: 5e-324, P99: math.MaxFloat64}},
		{"0-d", []int{}, compare.Metrics{Count: 1, Mismatched: 1, FirstMismatch: []int{},
			MaxAbs: compare.Extreme{Value: 1, Index: []int{}, A: -inf, B: math.Inf(-1)}, MaxRel: compare.Extreme{Value: 0.5, Index: []int{}, A: 2, B: 1},
			RelL2: 0.5, Cosine: -1, MaxULP: math.MaxUint64}},
		{"largest count", []int{math.MaxInt64}, compare.Metrics{Count: math.MaxInt64, Mismatched: math.MaxInt64,
			MaxAbs: noPeak, MaxRel: noPeak, NaNA: math.MaxInt64, NaNB: math.MaxInt64, P50: nan, P90: nan, P99: nan}},
	}
	paths, err := filepath.Glob("testdata/compare_json/*.json")
	if err != nil || len(paths) == 0 {
		t.Fatalf("%v, %d reports", err, len(paths))
	}
	for _, path := range paths { // metrics graphdiff measured
		sr := readReport(t, path)
		for _, p := range sr.Tensors {
			if p.Metrics != nil {
				cases = append(cases, testCase{path + ": " + p.Name, p.A.Shape, *p.Metrics})
			}
		}
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			roundTrip(t, tc.shape, &tc.metrics)
		})
	}
}

func readReport(t *testing.T, path string) *ShardReport {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sr, err := ReadCompareJSON(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return sr
}

func roundTrip(t *testing.T, shape []int, m *compare.Metrics) {
	meta := &loaders.Meta{File: "t.npy", DType: loaders.Float32, Shape: shape}
	p := &judge.TensorResult{Pair: judge.Pair{Name: "t", Step: 1, Kind: loaders.KindParam, A: meta, B: meta, Metrics: m}, Decision: judge.Decision{Status: judge.StatusMatch}}
	p.Settings.DType = loaders.Float32
	tj := tensorJSON(p, true)
	var back TensorJSON
	if err := json.Unmarshal(appendPairJSON(nil, &tj), &back); err != nil {
		t.Fatal(err)
	}
	got, err := tensorFromJSON(back)
	if err != nil {
		t.Fatal(err)
	}
	if d := metricsDiff(m, got.Metrics); d != "" {
		t.Errorf("written and read back: %s", d)
	}

	written, err := json.Marshal((*MetricsJSON)(m))
	if err != nil {
		t.Fatal(err)
	}
	var quick, slow compare.Metrics
	if !readMetricsAsWritten(written, &quick) {
		t.Errorf("%s is not read as written", written)
	}
	if err := readMetrics(written, &slow); err != nil {
		t.Fatal(err)
	}
	if d := metricsDiff(&quick, &slow); d != "" {
		t.Errorf("read as written and through encoding/json: %s", d)
	}
}

// TestReadMetricsRefuses reads metrics whose counts cannot be: the error
// names the key.
func TestReadMetricsRefuses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		set  func(m *compare.Metrics)
		want string
	}{
		{"more mismatched than count", func(m *compare.Metrics) { m.Mismatched = 11 }, "metrics.mismatched 11 is not between 0 and the count 10"},
		{"negative NaN count", func(m *compare.Metrics) { m.NaNB = -1 }, "metrics.nan_b -1 is not between 0 and the count 10"},
		{"more special mismatches than count", func(m *compare.Metrics) { m.SpecialMismatches = 12 }, "metrics.nan_inf_mismatches 12"},
		{"count not the shape's", func(m *compare.Metrics) { m.Count = 9 }, "metrics.count 9 is not the 10 elements"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := compare.Metrics{Count: 10}
			tc.set(&m)
			meta := &loaders.Meta{File: "t.npy", DType: loaders.Float32, Shape: []int{10}}
			p := &judge.TensorResult{Pair: judge.Pair{Name: "t", A: meta, B: meta, Metrics: &m}, Decision: judge.Decision{Status: judge.StatusMatch}}
			p.Settings.DType = loaders.Float32
			tj := tensorJSON(p, false)
			var back TensorJSON
			if err := json.Unmarshal(appendPairJSON(nil, &tj), &back); err != nil {
				t.Fatal(err)
			}
			if _, err := tensorFromJSON(back); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// FuzzMetricsJSON reads arbitrary bytes as a "metrics" object: what the
// quick reader takes, encoding/json takes too and reads the same, and
// neither panics.
func FuzzMetricsJSON(f *testing.F) {
	for _, m := range []compare.Metrics{{}, everyFieldSet(f)} {
		written := string(appendMetrics(nil, &m))
		compact, _ := json.Marshal((*MetricsJSON)(&m))
		f.Add(compact)
		f.Add([]byte(written))
		for _, r := range []*strings.Replacer{ // what only encoding/json reads, or nothing does
			strings.NewReplacer(`"count"`, `"COUNT"`),
			strings.NewReplacer(`"cosine"`, `"\u0063osine"`),
			strings.NewReplacer(`"rel_l2": `, `"rel_l2": "Inf"`),
			strings.NewReplacer(`"max_ulp": `, `"max_ulp": -`),
			strings.NewReplacer(`"nan_a": `, `"nan_a": 1e3`),
			strings.NewReplacer(`"nan_inf_mismatches"`, `"extra": {"a": [null]}, "nan_inf_mismatches"`),
		} {
			f.Add([]byte(r.Replace(written)))
		}
	}
	paths, _ := filepath.Glob("testdata/compare_json/*.json")
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		var doc struct {
			Tensors []struct{ Metrics json.RawMessage }
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			f.Fatal(err)
		}
		for _, p := range doc.Tensors {
			f.Add([]byte(p.Metrics))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var quick, slow compare.Metrics
		ok := readMetricsAsWritten(data, &quick)
		err := readMetrics(data, &slow)
		switch {
		case ok && err != nil:
			t.Fatalf("read as written, but encoding/json refuses it: %v", err)
		case ok:
			if d := metricsDiff(&quick, &slow); d != "" {
				t.Fatalf("read as written and through encoding/json: %s", d)
			}
		}
	})
}
