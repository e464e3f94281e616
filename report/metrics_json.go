package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"

	"github.com/graphdiff/graphdiff/compare"
)

// metricFields are the keys of a compared pair's "metrics" object, in the
// order the report writes them, each with where its value lives in a
// compare.Metrics. The object is written (appendMetrics: the pairs of the
// report and MetricsJSON.MarshalJSON alike), read back
// (MetricsJSON.UnmarshalJSON) and checked (checkMetrics) from this list
// alone: a new metric is one line here.
//
// Every exported field of compare.Metrics has a key here
// (TestMetricFieldsCoverMetrics), except NormA and NormDiff: a shard's
// report carries them in "partial", for merge (PartialJSON).
var metricFields = [...]metricField{
	countKey("count", func(m *compare.Metrics) *int64 { return &m.Count }),
	elementsKey("mismatched", func(m *compare.Metrics) *int64 { return &m.Mismatched }),
	madeFloatKey("mismatch_fraction", (*compare.Metrics).MismatchFraction),
	indexKey("first_mismatch_index", func(m *compare.Metrics) *[]int { return &m.FirstMismatch }),
	floatKey("max_abs", func(m *compare.Metrics) *float64 { return &m.MaxAbs.Value }),
	indexKey("max_abs_index", func(m *compare.Metrics) *[]int { return &m.MaxAbs.Index }),
	peakKey("max_abs_values", func(m *compare.Metrics) *compare.Extreme { return &m.MaxAbs }),
	floatKey("max_rel", func(m *compare.Metrics) *float64 { return &m.MaxRel.Value }),
	indexKey("max_rel_index", func(m *compare.Metrics) *[]int { return &m.MaxRel.Index }),
	peakKey("max_rel_values", func(m *compare.Metrics) *compare.Extreme { return &m.MaxRel }),
	floatKey("rel_l2", func(m *compare.Metrics) *float64 { return &m.RelL2 }),
	floatKey("cosine", func(m *compare.Metrics) *float64 { return &m.Cosine }),
	floatKey("p50_abs", func(m *compare.Metrics) *float64 { return &m.P50 }),
	floatKey("p90_abs", func(m *compare.Metrics) *float64 { return &m.P90 }),
	floatKey("p99_abs", func(m *compare.Metrics) *float64 { return &m.P99 }),
	uintKey("max_ulp", func(m *compare.Metrics) *uint64 { return &m.MaxULP }),
	elementsKey("nan_a", func(m *compare.Metrics) *int64 { return &m.NaNA }),
	elementsKey("nan_b", func(m *compare.Metrics) *int64 { return &m.NaNB }),
	elementsKey("inf_a", func(m *compare.Metrics) *int64 { return &m.InfA }),
	elementsKey("inf_b", func(m *compare.Metrics) *int64 { return &m.InfB }),
	madeBoolKey("nan_inf_positions_agree", (*compare.Metrics).SpecialsAgree),
	elementsKey("nan_inf_mismatches", func(m *compare.Metrics) *int64 { return &m.SpecialMismatches }),
}

// metricField is one key of the "metrics" object and where its value is:
// the accessor its kind names.
type metricField struct {
	key   string
	kind  metricKind
	int   func(*compare.Metrics) *int64           // metricCount, metricElements
	uint  func(*compare.Metrics) *uint64          // metricUint
	float func(*compare.Metrics) *float64         // metricFloat
	index func(*compare.Metrics) *[]int           // metricIndex
	peak  func(*compare.Metrics) *compare.Extreme // metricPeak
	of    func(*compare.Metrics) float64          // metricMadeFloat
	holds func(*compare.Metrics) bool             // metricMadeBool
}

// metricKind is how a key's value is written and read.
type metricKind uint8

const (
	metricCount     metricKind = iota // an int64
	metricElements                    // an int64 that counts elements: 0 ≤ n ≤ count when read
	metricUint                        // a uint64
	metricFloat                       // a float64, as Float writes and reads it
	metricIndex                       // a C-order index, null for none
	metricPeak                        // [a, b] at an Extreme, null where it has no index
	metricMadeFloat                   // a float64 made from other fields: written, not read back
	metricMadeBool                    // a bool made from other fields: written, not read back
)

// countKey and the constructors after it make a key of their kind, whose
// accessor then has the type the kind reads and writes.
func countKey(key string, at func(*compare.Metrics) *int64) metricField {
	return metricField{key: key, kind: metricCount, int: at}
}

func elementsKey(key string, at func(*compare.Metrics) *int64) metricField {
	return metricField{key: key, kind: metricElements, int: at}
}

func uintKey(key string, at func(*compare.Metrics) *uint64) metricField {
	return metricField{key: key, kind: metricUint, uint: at}
}

func floatKey(key string, at func(*compare.Metrics) *float64) metricField {
	return metricField{key: key, kind: metricFloat, float: at}
}

func indexKey(key string, at func(*compare.Metrics) *[]int) metricField {
	return metricField{key: key, kind: metricIndex, index: at}
}

func peakKey(key string, at func(*compare.Metrics) *compare.Extreme) metricField {
	return metricField{key: key, kind: metricPeak, peak: at}
}

func madeFloatKey(key string, of func(*compare.Metrics) float64) metricField {
	return metricField{key: key, kind: metricMadeFloat, of: of}
}

func madeBoolKey(key string, holds func(*compare.Metrics) bool) metricField {
	return metricField{key: key, kind: metricMadeBool, holds: holds}
}

// MetricsJSON is a compared pair's metrics (compare.Metrics) in the JSON
// report: an object of the keys metricFields lists, in that order. It is
// compare.Metrics itself, so that a pair's JSON form points to its metrics
// instead of copying them.
type MetricsJSON compare.Metrics

// MarshalJSON implements json.Marshaler.
func (m MetricsJSON) MarshalJSON() ([]byte, error) {
	return appendMetrics(nil, (*compare.Metrics)(&m)), nil
}

// appendMetrics appends m's "metrics" object laid out as the value of a
// key at depth 1 of a pair (see appendPairJSON).
func appendMetrics(b []byte, m *compare.Metrics) []byte {
	for i := range metricFields {
		f := &metricFields[i]
		b = append(b, metricKeys[i]...)
		switch f.kind {
		case metricCount, metricElements:
			b = strconv.AppendInt(b, *f.int(m), 10)
		case metricUint:
			b = strconv.AppendUint(b, *f.uint(m), 10)
		case metricFloat:
			b = appendFloat(b, Float(*f.float(m)))
		case metricIndex:
			b = appendInts(b, 2, *f.index(m))
		case metricPeak:
			if e := f.peak(m); e.Index == nil {
				b = append(b, "null"...)
			} else {
				b = appendFloats(b, 2, []Float{Float(e.A), Float(e.B)})
			}
		case metricMadeFloat:
			b = appendFloat(b, Float(f.of(m)))
		case metricMadeBool:
			b = strconv.AppendBool(b, f.holds(m))
		}
	}
	return appendClose(b, 1, '}')
}

// metricKeys are the keys of metricFields as appendMetrics lays them out
// (appendKey at depth 2, after a brace or a comma): one copy for each
// instead of six appends keeps the table's encoder as fast as the
// field-by-field one it replaced (bench/README.md).
var metricKeys = func() (keys [len(metricFields)]string) {
	for i, f := range metricFields {
		keys[i] = string(appendKey(nil, "{,"[min(i, 1)], 2, f.key))
	}
	return keys
}()

// UnmarshalJSON implements json.Unmarshaler, the inverse of MarshalJSON:
// the values at a peak are NaN where there are none, as compare leaves
// them; mismatch_fraction and nan_inf_positions_agree are made from the
// other keys, so are not kept.
func (m *MetricsJSON) UnmarshalJSON(b []byte) error {
	var out compare.Metrics
	if !readMetricsAsWritten(b, &out) {
		out = compare.Metrics{} // what was read before the surprise
		if err := readMetrics(b, &out); err != nil {
			return err
		}
	}
	*m = MetricsJSON(out)
	return nil
}

// metricsRead is the struct encoding/json reads a "metrics" object into:
// a field per key of metricFields, in order, of the Go type its kind is
// written from, so that a key is read as a struct field of that type
// always was (null leaves an int64 at 0, a key matches in any case, an
// unknown key is skipped, a value of the wrong type is an error).
var metricsRead = func() reflect.Type {
	types := [...]reflect.Type{
		metricCount: reflect.TypeFor[int64](), metricElements: reflect.TypeFor[int64](),
		metricUint: reflect.TypeFor[uint64](), metricFloat: reflect.TypeFor[Float](),
		metricIndex: reflect.TypeFor[[]int](), metricPeak: reflect.TypeFor[[]Float](),
		metricMadeFloat: reflect.TypeFor[Float](), metricMadeBool: reflect.TypeFor[bool](),
	}
	fields := make([]reflect.StructField, len(metricFields))
	for i, f := range metricFields {
		fields[i] = reflect.StructField{Name: "F" + strconv.Itoa(i), Type: types[f.kind],
			Tag: reflect.StructTag(`json:"` + f.key + `"`)}
	}
	return reflect.StructOf(fields)
}()

// readMetrics reads any JSON object into m through encoding/json and
// metricsRead.
func readMetrics(b []byte, m *compare.Metrics) error {
	in := reflect.New(metricsRead)
	if err := json.Unmarshal(b, in.Interface()); err != nil {
		if te := (*json.UnmarshalTypeError)(nil); errors.As(err, &te) {
			te.Struct = "MetricsJSON"
		}
		return err
	}
	v := in.Elem()
	for i := range metricFields {
		f, p := &metricFields[i], v.Field(i).Addr().Interface()
		switch f.kind {
		case metricCount, metricElements:
			*f.int(m) = *p.(*int64)
		case metricUint:
			*f.uint(m) = *p.(*uint64)
		case metricFloat:
			*f.float(m) = float64(*p.(*Float))
		case metricIndex:
			*f.index(m) = *p.(*[]int)
		case metricPeak:
			e := f.peak(m)
			e.A, e.B = math.NaN(), math.NaN()
			if ab := *p.(*[]Float); len(ab) == 2 {
				e.A, e.B = float64(ab[0]), float64(ab[1])
			}
		}
	}
	return nil
}

// readMetricsAsWritten reads into m an object laid out as appendMetrics
// writes one: every key of metricFields once, in order, each value of
// its kind's type (a peak null or two numbers), any whitespace between.
// It reports false for anything else, which readMetrics then reads as
// encoding/json would (FuzzMetricsJSON checks that the two agree): read
// through encoding/json's reflection alone, the metrics made reading a
// report back much slower (bench/README.md).
func readMetricsAsWritten(b []byte, m *compare.Metrics) bool {
	r := jsonReader{b: b}
	for i := range metricFields {
		f := &metricFields[i]
		if !r.byte("{,"[min(i, 1)]) || !r.key(f.key) {
			return false
		}
		ok := true
		switch f.kind {
		case metricCount, metricElements:
			*f.int(m), ok = r.int(64)
		case metricUint:
			*f.uint(m), ok = r.uint()
		case metricFloat:
			*f.float(m), ok = r.float()
		case metricIndex:
			*f.index(m), ok = r.ints()
		case metricPeak:
			e := f.peak(m)
			e.A, e.B = math.NaN(), math.NaN()
			if !r.literal("null") {
				e.A, e.B, ok = r.floatPair()
			}
		case metricMadeFloat:
			_, ok = r.float()
		case metricMadeBool:
			ok = r.literal("true") || r.literal("false")
		}
		if !ok {
			return false
		}
	}
	return r.byte('}') && r.end()
}

// checkMetrics refuses metrics read back whose counts of elements are
// negative or more than the count.
func checkMetrics(m *compare.Metrics) error {
	for i := range metricFields {
		if f := &metricFields[i]; f.kind == metricElements {
			if n := *f.int(m); n < 0 || n > m.Count {
				return fmt.Errorf("metrics.%s %d is not between 0 and the count %d", f.key, n, m.Count)
			}
		}
	}
	return nil
}
