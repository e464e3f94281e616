package report

import (
	"io"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/graphdiff/graphdiff/curve"
	"github.com/graphdiff/graphdiff/judge"
	"github.com/graphdiff/graphdiff/loaders"
)

// longCurve is the analysis of two float32 loss curves of n steps that
// drift apart by rounding, as curve's BenchmarkAnalyzeCurves1M makes
// them: every per-step array full, a drift that passes.
func longCurve(tb testing.TB, n int) *curve.Result {
	rng := rand.New(rand.NewPCG(5, 6))
	a := &loaders.Curve{Steps: make([]int64, n), Values: make([]float64, n), Source: "eager/losses.npy"}
	c := &loaders.Curve{Steps: make([]int64, n), Values: make([]float64, n), Source: "graph/losses.npy"}
	for i := range n {
		a.Steps[i], c.Steps[i] = int64(i), int64(i)
		a.Values[i] = float64(float32(2*math.Exp(-float64(i)/2e5) + 0.1 + 0.05*rng.Float64()))
		c.Values[i] = float64(float32(a.Values[i] * (1 + 1e-7*rng.NormFloat64()*math.Sqrt(float64(i)))))
	}
	r := curve.Analyze(a, c, curve.DefaultOptions())
	if r.Verdict != judge.Pass {
		tb.Fatalf("verdict %s: %q", r.Verdict, r.Evidence)
	}
	return r
}

// countingWriter counts the bytes written to it.
type countingWriter struct{ n int64 }

func (w *countingWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	return len(p), nil
}

// BenchmarkCurveJSON1M writes the JSON form of a 1,000,000-step curve
// analysis, as `graphdiff curve --format json` does (bench/README.md):
// bytes per second of output, and the allocations, which stay flat
// whatever the curve's length.
func BenchmarkCurveJSON1M(b *testing.B) {
	r := longCurve(b, 1_000_000)
	var out countingWriter
	if err := Curve(&out, JSON, r, TextOptions{}); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(out.n)
	b.ReportAllocs()
	for b.Loop() {
		if err := Curve(io.Discard, JSON, r, TextOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCurveArrayText formats each per-step array of a
// 1,000,000-step curve analysis on one core, as one chunk of curveJSON
// does (appendFloat after a comma, no memo): the cost of a number by the
// kind of values the array holds (float32 losses widened, their
// differences and ratios, the drift and level fits).
func BenchmarkCurveArrayText(b *testing.B) {
	r := longCurve(b, 1_000_000)
	text := make([]byte, 0, numberChunk*maxNumberText)
	for _, a := range []struct {
		name string
		vs   []float64
	}{{"a_values", r.ValuesA}, {"abs_diff", r.AbsDiff}, {"rel_diff", r.RelDiff}, {"band", r.Band}, {"drift", r.Drift}, {"level", r.Level}} {
		b.Run(a.name, func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				k := i % (len(a.vs) / numberChunk) * numberChunk
				text = text[:0]
				for _, v := range a.vs[k : k+numberChunk] {
					text = appendFloat(append(text, ','), Float(v))
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*numberChunk), "ns/number")
		})
	}
}
