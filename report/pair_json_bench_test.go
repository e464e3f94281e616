package report

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/graphdiff/graphdiff/compare"
	"github.com/graphdiff/graphdiff/judge"
	"github.com/graphdiff/graphdiff/loaders"
	"github.com/graphdiff/graphdiff/outcome"
)

// benchPairs are the pairs of 8 steps x 2,000 gradients of 1,024 float32
// that match, with the limits and metrics of each (the report of
// bench/costs.sh's small files).
func benchPairs() []*judge.TensorResult {
	var ts []*judge.TensorResult
	for step := range 8 {
		for i := range 2000 {
			name := fmt.Sprintf("grads/layer_%04d.weight", i)
			m := &loaders.Meta{File: fmt.Sprintf("step_%06d/%s.npy", step, name), DType: loaders.Float32, Shape: []int{1024}}
			t := &judge.TensorResult{Pair: judge.Pair{Name: name, Step: step, Kind: loaders.KindGrad, A: m, B: m,
				Metrics: &compare.Metrics{Count: 1024, Mismatched: 2, FirstMismatch: []int{0}, RelL2: 4.491636916051608e-05 + float64(i)*1e-9,
					Cosine: 0.9999999989933931, MaxULP: 33554,
					MaxAbs: compare.Extreme{Value: 0.001000046730041504, Index: []int{0}, A: 1.7045365571975708, B: 1.7055366039276123},
					MaxRel: compare.Extreme{Value: 0.0029322637803464047, Index: []int{1000}, A: 0.3410290479660034, B: 0.34202903509140015}}},
				Decision: judge.Decision{Status: judge.StatusMatch, MaxRelL2: 3e-4, MaxMismatchFraction: 0.1}}
			t.Settings.DType, t.Settings.RTol, t.Settings.ATol = loaders.Float32, 1.3e-6, 1e-5
			ts = append(ts, t)
		}
	}
	return ts
}

// BenchmarkMarshalPairs encodes benchPairs on all processors, as the JSON
// report does.
func BenchmarkMarshalPairs(b *testing.B) {
	ts := benchPairs()
	n := 0
	b.ReportAllocs()
	for b.Loop() {
		marshalPairs(ts, false, func(_ int, p []byte) { n += len(p) })
	}
	b.SetBytes(int64(n / b.N))
}

// BenchmarkAppendPairJSON encodes benchPairs one after another on one
// processor: the encoder's own cost, without the scheduling of
// BenchmarkMarshalPairs.
func BenchmarkAppendPairJSON(b *testing.B) {
	ts := benchPairs()
	var s pairScratch
	var limits limitsCache
	var buf []byte
	n := 0
	b.ReportAllocs()
	for b.Loop() {
		for _, t := range ts {
			tj := s.tensorJSON(t, false)
			buf = appendPairJSONCached(buf[:0], &tj, &limits)
			n += len(buf)
		}
	}
	b.SetBytes(int64(n / b.N))
}

// BenchmarkReadPairJSON reads benchPairs' JSON report back, as merge
// reads a shard's.
func BenchmarkReadPairJSON(b *testing.B) {
	var doc bytes.Buffer
	if err := compareJSON(&doc, &outcome.Comparison{Result: &judge.Result{A: "a", B: "b", Tensors: benchPairs()}}); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(doc.Len()))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ReadCompareJSON(bytes.NewReader(doc.Bytes())); err != nil {
			b.Fatal(err)
		}
	}
}
