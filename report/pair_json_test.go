package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/graphdiff/graphdiff/compare"
	"github.com/graphdiff/graphdiff/judge"
	"github.com/graphdiff/graphdiff/loaders"
)

// TestPairJSONMatchesEncodingJSON checks the hand-written pair encoding
// against encoding/json's MarshalIndent on random pairs with every field
// present or absent, arrays nil, empty and full, NaN and ±Inf, and
// strings that need escaping.
func TestPairJSONMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 5))
	strs := []string{"", "grads/layer.0.weight", `q"uote\back`, "<a&b>", "tab\tnew\nline\x01", "ünï", "bad\xffutf8", "\u2028sep", "x"}
	str := func() string { return strs[rng.IntN(len(strs))] }
	floats := []float64{0, math.Copysign(0, -1), 1e-5, 1.3e-06, 3.162110188004715e-05, 146.31509370953546, 1e300, 5e-324, math.NaN(), math.Inf(1), math.Inf(-1), -2.5}
	flt := func() Float { return Float(floats[rng.IntN(len(floats))]) }
	ints := func() []int {
		switch rng.IntN(3) {
		case 0:
			return nil
		case 1:
			return []int{}
		}
		v := make([]int, 1+rng.IntN(4))
		for i := range v {
			v[i] = rng.IntN(1 << 20)
		}
		return v
	}
	maybe := func() bool { return rng.IntN(2) == 0 }
	for i := range 3000 {
		p := TensorJSON{Name: str(), Kind: str(), Status: str(), DType: str(), DTypeB: str(),
			Shape: ints(), ShapeB: ints(), FileA: str(), FileB: str(), Error: str()}
		if maybe() {
			s := rng.IntN(1000) - 1
			p.Step = &s
		}
		if maybe() {
			p.Limits = &LimitsJSON{CompareDType: str(), RTol: flt(), ATol: flt(), MaxRelL2: flt(), MaxMismatchFraction: flt()}
		}
		if maybe() {
			p.Metrics = &MetricsJSON{Count: rng.Int64(), Mismatched: rng.Int64N(100), FirstMismatch: ints(),
				MaxAbs: compare.Extreme{Value: float64(flt()), Index: ints(), A: float64(flt()), B: float64(flt())},
				MaxRel: compare.Extreme{Value: float64(flt()), Index: ints(), A: float64(flt()), B: float64(flt())},
				RelL2:  float64(flt()), Cosine: float64(flt()), P50: float64(flt()), P90: float64(flt()), P99: float64(flt()),
				MaxULP: rng.Uint64(), NaNA: rng.Int64N(3), NaNB: rng.Int64N(3), InfA: rng.Int64N(3), InfB: rng.Int64N(3),
				SpecialMismatches: rng.Int64N(3)}
			if maybe() {
				p.Metrics.Count = 0 // no mismatch fraction
			}
		}
		if maybe() {
			p.Judged = &JudgedJSON{Rule: str(), Measure: flt(), Limit: flt(), Ratio: flt()}
		}
		if maybe() {
			p.Moment = &MomentJSON{State: str(), Decay: flt(), Gain: flt(), Param: str()}
		}
		if maybe() {
			p.Noise = &NoiseJSON{RelL2: flt(), Count: rng.Int64(), Mismatched: rng.Int64N(9), MismatchFraction: flt(), MaxAbs: flt()}
		}
		if rng.IntN(4) == 0 { // shards only, through encoding/json
			p.Partial = &PartialJSON{NormA: flt(), NormDiff: flt()}
			if maybe() {
				p.Partial.Update = &UpdateJSON{Count: rng.Int64N(9), Bins: []UpdateBinJSON{{Exp: -3, N: 2, UU: flt()}},
					Worst: []UpdateElemJSON{{Index: ints(), Diff: flt()}}}
			}
		}
		switch rng.IntN(3) {
		case 0:
			p.Reasons = []string{}
		case 1:
			p.Reasons = []string{str(), str()}
		}
		want, err := json.MarshalIndent(&p, pairPrefix, pairIndent)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendPairJSON(nil, &p); !bytes.Equal(got, want) {
			t.Fatalf("pair %d:\nencoding/json %s\nhand-written  %s", i, want, got)
		}
	}
}

// TestMarshalPairsInOrder encodes more pairs than the batches in flight
// can hold, so that written batches' buffers encode later ones: every
// pair comes to the writer once, in order, encoded as it is alone. Pairs
// with and without metrics, steps, dimensions, the limits and the rule of
// the pair before follow each other, so that one pair's encoding showing what the
// encoder kept from the one before fails.
func TestMarshalPairsInOrder(t *testing.T) {
	t.Parallel()
	var ts []*judge.TensorResult
	for i := range 20*pairBatch + 7 {
		name := fmt.Sprintf("grads/layer_%d.weight%s", i%97, strings.Repeat("x", i%13)) // encodings of many lengths
		p := &judge.TensorResult{Pair: judge.Pair{Name: name, Step: i / 100, Kind: loaders.KindGrad,
			A: &loaders.Meta{File: name + ".npy", DType: loaders.Float32, Shape: []int{i % 7, 3}}},
			Decision: judge.Decision{Status: judge.StatusMissing, Reasons: []string{"not in b"}}}
		switch i % 5 {
		case 1:
			p.Step = loaders.NoStep
		case 2:
			p.A.Shape = nil // a scalar
		}
		if i%3 != 0 { // compared: limits and metrics, peaks at some
			p.Status, p.Reasons, p.B = judge.StatusMatch, nil, p.A
			// limits repeated from one pair to the next, or not
			p.Settings.RTol, p.Settings.ATol, p.MaxRelL2 = float64(i/4%3)*1e-6, 1e-5, 3e-4
			p.Settings.PerTensor = i%11 == 0
			if i%13 == 0 {
				p.Settings.DType = loaders.BFloat16
			}
			m := &compare.Metrics{Count: int64(i), Mismatched: int64(i % 4), RelL2: float64(i) / 7}
			if i%4 != 0 {
				m.MaxAbs = compare.Extreme{Value: float64(i), Index: []int{i}, A: float64(i) + 0.5, B: -float64(i)}
				m.MaxRel = compare.Extreme{Value: 2 * float64(i), Index: []int{i, 1}, A: 3, B: float64(i) / 3}
			}
			p.Metrics = m
			if i%7 != 0 { // judged by a rule, or not
				p.Rule, p.Measure, p.Limit = judge.RuleGradRatio, float64(i)/3, float64(i%5)
			}
		}
		ts = append(ts, p)
	}
	k := 0
	marshalPairs(ts, false, func(i int, got []byte) {
		tj := tensorJSON(ts[k], false)
		want := appendPairJSON(nil, &tj)
		if i != k || !bytes.Equal(got, want) {
			t.Fatalf("pair %d came as pair %d:\n%s\nwant\n%s", k, i, got, want)
		}
		k++
	})
	if k != len(ts) {
		t.Errorf("%d pairs written, want %d", k, len(ts))
	}
}
