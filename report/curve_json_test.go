package report

import (
	"bytes"
	"encoding/json"
	"math"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/graphdiff/graphdiff/curve"
	"github.com/graphdiff/graphdiff/judge"
	"github.com/graphdiff/graphdiff/loaders"
)

// curveJSONCase is a curve analysis whose JSON form is checked.
type curveJSONCase struct {
	name   string
	result func(t *testing.T) *curve.Result
}

// TestCurveJSONIsCurveJSON checks that `graphdiff curve --format json`
// holds exactly CurveJSON: compacted, it is json.Marshal's encoding of
// NewCurveJSON byte for byte (the same keys in the same order, every
// number in the same text), and its layout is json.Encoder's two-space
// indent but for the arrays of numbers, each on one line.
func TestCurveJSONIsCurveJSON(t *testing.T) {
	fixtureCurve := func(dir string, o curve.Options) func(t *testing.T) *curve.Result {
		return func(t *testing.T) *curve.Result {
			read := func(run string) *loaders.Curve {
				c, err := loaders.ReadCurve(filepath.Join("..", "testdata", "curves", dir, run), loaders.CurveOptions{})
				if err != nil {
					t.Fatal(err)
				}
				return c
			}
			return curve.Analyze(read("eager"), read("graph"), o)
		}
	}
	bf16 := curve.DefaultOptions()
	bf16.ComputeDType = loaders.BFloat16
	for _, tc := range []curveJSONCase{
		{"a drift that breaks", fixtureCurve("drift_then_break_long", curve.DefaultOptions())},
		{"bf16 compute", fixtureCurve("mlp_adam_bf16_lr_drop_under_drift", bf16)},
		{"no common step", func(*testing.T) *curve.Result {
			return &curve.Result{A: "a", B: "b", Verdict: judge.Fail, Pattern: curve.PatternNaN, Options: curve.DefaultOptions()}
		}},
		{"edge numbers, a baseline, hostile names", func(*testing.T) *curve.Result { return edgeCurve(40) }},
		{"chunks, with repeated numbers", func(*testing.T) *curve.Result { return edgeCurve(3*numberChunk + 7) }},
	} {
		t.Run(tc.name, func(t *testing.T) { runCurveJSON(t, tc) })
	}
}

func runCurveJSON(t *testing.T, tc curveJSONCase) {
	r := tc.result(t)
	var out bytes.Buffer
	if err := Curve(&out, JSON, r, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	want, err := json.Marshal(NewCurveJSON(r))
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := json.Compact(&got, out.Bytes()); err != nil {
		t.Fatalf("not JSON: %v\n%.400s", err, out.Bytes())
	}
	if !bytes.Equal(got.Bytes(), want) {
		i := 0
		for i < min(got.Len(), len(want)) && got.Bytes()[i] == want[i] {
			i++
		}
		t.Fatalf("compacted, the output parts from CurveJSON at byte %d:\n got …%.200s\nwant …%.200s", i, got.Bytes()[i:], want[i:])
	}
	// the layout: the indented document, each array of numbers on its line
	var doc CurveJSON
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	doc.OnlyA, doc.OnlyB, doc.Spikes, doc.Steps = []int64{}, []int64{}, []int64{}, []int64{}
	doc.AValues, doc.BValues, doc.AbsDiff, doc.RelDiff, doc.Band, doc.Drift, doc.Level = []Float{}, []Float{}, []Float{}, []Float{}, []Float{}, []Float{}, []Float{}
	indented, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(out.String(), "\n")
	wantLines := strings.Split(string(indented)+"\n", "\n")
	if len(lines) != len(wantLines) {
		t.Fatalf("%d lines, want %d (the indented form, arrays of numbers on one line):\n%.600s", len(lines), len(wantLines), out.Bytes())
	}
	for i, line := range lines {
		key, _, isArray := strings.Cut(wantLines[i], ": []")
		if isArray && strings.HasPrefix(line, key+": [") && strings.HasSuffix(strings.TrimSuffix(line, ","), "]") {
			continue
		}
		if line != wantLines[i] {
			t.Errorf("line %d: %.200q, want %q", i+1, line, wantLines[i])
		}
	}
}

// edgeNumbers are the numbers whose text is checked: signed zeros,
// subnormals, the extremes, the switch between plain and exponent forms
// ('g': from 1e-4 down and 1e21 up), NaN and ±Inf.
var edgeNumbers = []float64{0, math.Copysign(0, -1), 5e-324, -5e-324, 2.2250738585072014e-308, -2.2250738585072014e-308,
	math.MaxFloat64, -math.MaxFloat64, 1e-4, 9.999999999999999e-5, 1e-7, 1e20, 1e21, 123456789012345680, 0.1, 1.0 / 3,
	float64(float32(0.1)), math.NaN(), math.Inf(1), math.Inf(-1), 1, -1, 2e-16, 65504, 3.3895313892515355e38}

// edgeCurve is a curve analysis of n steps whose per-step arrays hold
// edgeNumbers and values drawn from a few thousand others, repeated in
// and out of order as differences of float32 losses are, or each once,
// with every optional member present and sources that JSON must escape.
func edgeCurve(n int) *curve.Result {
	o := curve.DefaultOptions()
	o.DType, o.ComputeDType, o.RTol, o.MaxDrift = loaders.Float32, loaders.BFloat16, 0.0078125, 1e-3
	first := int64(n / 2)
	r := &curve.Result{A: "eager/<loss>&\u2028.csv", B: "graph/\x1b[2J\"loss\".csv", Verdict: judge.Fail, Pattern: curve.PatternSudden,
		FirstDivergentStep: &first, Options: o, MaxRel: math.Inf(1), MaxRelStep: -3,
		OnlyA: []int64{-1, math.MaxInt64}, OnlyB: []int64{math.MinInt64}, Spikes: []int64{7, 9},
		Evidence: []string{"a <jump> & more", ""}, NotesA: []string{"skipped 2 rows"},
		Baseline: &curve.Baseline{Source: "base/<l>.npy", Steps: n, MaxRel: math.NaN(), MaxRelStep: 4, Limit: 1e-300, Identical: true}}
	columns := []*[]float64{&r.ValuesA, &r.ValuesB, &r.AbsDiff, &r.RelDiff, &r.Band, &r.Drift, &r.Level}
	for c, col := range columns {
		*col = make([]float64, n)
		for i := range n {
			switch k := i*(c+1) + c; {
			case i < len(edgeNumbers):
				(*col)[i] = edgeNumbers[(i+c)%len(edgeNumbers)]
			case c == len(columns)-1: // a value once: no use for the memo
				(*col)[i] = float64(i) * 1.0000001e-3
			case c%2 == 0: // a few thousand values, out of order
				(*col)[i] = float64(float32(k%5003)) * 0x1p-24
			default: // runs of one value
				(*col)[i] = 1 + float64(i/97)*1e-3
			}
		}
	}
	r.Steps = make([]int64, n)
	for i := range r.Steps {
		r.Steps[i] = int64(i)*1000 - 7
	}
	return r
}

// TestCurveJSONMemoryIsFlat checks that writing a curve's JSON form
// allocates the same whatever the curve's length: four times the steps
// take no more than a few MiB more (the chunks' buffers), where the
// document grows by tens of MB.
func TestCurveJSONMemoryIsFlat(t *testing.T) {
	allocated := func(r *curve.Result) (alloc uint64, written int64) {
		var out countingWriter
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if err := Curve(&out, JSON, r, TextOptions{}); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc, out.n
	}
	short, long := longCurve(t, 100_000), longCurve(t, 400_000)
	allocated(short) // warm: what the first report allocates once
	shortAlloc, shortOut := allocated(short)
	longAlloc, longOut := allocated(long)
	if longAlloc > shortAlloc+4<<20 {
		t.Errorf("writing %d steps (%d bytes) allocated %d bytes, %d steps (%d bytes) %d: memory grows with the curve",
			len(long.Steps), longOut, longAlloc, len(short.Steps), shortOut, shortAlloc)
	}
}

// TestFloatMemoIsAppendFloatJSON checks the memo against the text it
// stands for, on numbers that share its slots and numbers that repeat,
// so that it is both read and written over.
func TestFloatMemoIsAppendFloatJSON(t *testing.T) {
	var memo floatMemo
	const n = 200_000
	held := 0
	for i := range n {
		v := float64(float32(i%9001)) * 0x1p-20 // more values than slots
		if i%3 == 0 {
			v = edgeNumbers[i%len(edgeNumbers)]
		}
		got, hit := memo.append([]byte("x"), v)
		want := appendFloat([]byte("x"), Float(v))
		if f, _ := Float(v).MarshalJSON(); !bytes.Equal(got, want) || !bytes.Equal(want[1:], f) {
			t.Fatalf("%v: memo %s (held: %t), appendFloat %s, Float.MarshalJSON %s", v, got[1:], hit, want[1:], f)
		}
		if hit {
			held++
		}
	}
	if held < n/4 || held > n*9/10 {
		t.Errorf("the memo held %d of %d numbers: the test reads or writes it too little", held, n)
	}
}
