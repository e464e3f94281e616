package compare

import (
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/graphdiff/graphdiff/loaders"
	"github.com/graphdiff/graphdiff/tolerances"
)

// DecodeJob is one step of decoding in two runs: the tokens each chose
// (integers, shape S) and the logits they chose them from (shape S×V, in
// the same storage order), with the sequences (rows: positions of S)
// that parted at an earlier step, which are left out.
type DecodeJob struct {
	TokA, TokB, LogA, LogB *loaders.Tensor
	// Parted marks, by row, the sequences left out; nil for none.
	Parted []bool
	// Tolerance is the logits' elementwise tolerance (LogitsMismatched).
	Tolerance tolerances.Tolerance
}

// Flip is a row whose tokens differ at this step while its sequence had
// not parted before: TokenA and TokenB the two runs' tokens; GapA =
// ℓ_A[TokenA] − ℓ_A[TokenB], how far below run A's own choice run B's
// token sat in run A's logits, and GapB = ℓ_B[TokenB] − ℓ_B[TokenA] the
// same in run B's; Scale the largest of the four logits |ℓ_A[TokenA]|,
// |ℓ_A[TokenB]|, |ℓ_B[TokenA]|, |ℓ_B[TokenB]|, the size their rounding
// is relative to (the row's other logits, masked ones at −3.4e38
// included, say nothing of it). Gaps and Scale are +Inf for a token
// outside the vocabulary.
type Flip struct {
	Row            int
	TokenA, TokenB int64
	GapA, GapB     float64
	Scale          float64
}

// Decode is what a DecodeJob measured.
type Decode struct {
	// Rows is the number of sequences, Vocab the logits' last dimension;
	// Parted how many rows were left out.
	Rows, Vocab, Parted int
	// Flips are the rows not left out whose tokens differ, in order.
	Flips []Flip
	// LogitsCount, LogitsSS = Σℓ_A², LogitsDD = Σ(ℓ_B − ℓ_A)² and
	// LogitsMismatched (elements beyond Tolerance) are over the finite
	// logits of the rows not left out: sequences that share their prefix,
	// whose logits compare, the rows flipping at this step included (NaN
	// and ±Inf are judged by position, as in the whole tensor). Masks are
	// left out of them too: Masked counts the logits equal in both runs at
	// half the largest finite value of their dtype or more (the
	// torch.finfo(dtype).min that masked vocabulary positions are filled
	// with), which carry nothing and would swamp the norms.
	LogitsCount, LogitsMismatched, Masked int64
	LogitsSS, LogitsDD                    float64
	// LogitsBB = Σℓ_B² and LogitsAB = Σℓ_A·ℓ_B over the same logits, for
	// their cosine.
	LogitsBB, LogitsAB float64
	// BFloat16 is set when every logit of both runs is a bfloat16 value
	// (a float32 whose low 16 bits are zero, or bfloat16 stored): logits
	// of a bfloat16 model saved as float32 round at bfloat16's epsilon.
	BFloat16 bool
}

// MeasureDecode reads a DecodeJob's four tensors whole (a step of
// decoding is small: rows × vocabulary) and measures it. The tokens must
// have shape S and the logits S×V in both runs, S of len(Parted) rows
// when Parted is set.
func MeasureDecode(j DecodeJob) (*Decode, error) {
	ta, err := readTokens(j.TokA)
	if err != nil {
		return nil, err
	}
	tb, err := readTokens(j.TokB)
	if err != nil {
		return nil, err
	}
	la, err := readValues(j.LogA)
	if err != nil {
		return nil, err
	}
	lb, err := readValues(j.LogB)
	if err != nil {
		return nil, err
	}
	rows := len(ta)
	if rows == 0 || len(tb) != rows || len(la) != len(lb) || len(la)%rows != 0 || (j.Parted != nil && len(j.Parted) != rows) {
		return nil, fmt.Errorf("decode step: %d and %d tokens, %d and %d logits, %d rows parted: shapes that do not pair", len(ta), len(tb), len(la), len(lb), len(j.Parted))
	}
	v := len(la) / rows
	d := &Decode{Rows: rows, Vocab: v, BFloat16: fitsBFloat16(j.LogA, la) && fitsBFloat16(j.LogB, lb)}
	maskAt := maxFinite(j.LogA.DType) / 2
	for r := range rows {
		if j.Parted != nil && j.Parted[r] {
			d.Parted++
			continue
		}
		ra, rb := la[r*v:(r+1)*v], lb[r*v:(r+1)*v]
		for i := range ra {
			if math.IsNaN(ra[i]) || math.IsNaN(rb[i]) || math.IsInf(ra[i], 0) || math.IsInf(rb[i], 0) {
				continue // judged by position, as in the whole tensor's metrics (SpecialMismatches)
			}
			if ra[i] == rb[i] && math.Abs(ra[i]) >= maskAt {
				d.Masked++
				continue
			}
			diff := rb[i] - ra[i]
			d.LogitsSS += ra[i] * ra[i]
			d.LogitsDD += diff * diff
			d.LogitsBB += rb[i] * rb[i]
			d.LogitsAB += ra[i] * rb[i]
			d.LogitsCount++
			if j.Tolerance.Beyond(math.Abs(diff), math.Abs(ra[i])) {
				d.LogitsMismatched++
			}
		}
		if ta[r] == tb[r] {
			continue
		}
		f := Flip{Row: r, TokenA: ta[r], TokenB: tb[r], GapA: math.Inf(1), GapB: math.Inf(1), Scale: math.Inf(1)}
		if in(f.TokenA, v) && in(f.TokenB, v) {
			a, b := f.TokenA, f.TokenB
			f.GapA, f.GapB = ra[a]-ra[b], rb[b]-rb[a]
			f.Scale = max(math.Abs(ra[a]), math.Abs(ra[b]), math.Abs(rb[a]), math.Abs(rb[b]))
		}
		d.Flips = append(d.Flips, f)
	}
	return d, nil
}

// Selective reports whether the logits' sums leave something out: rows
// that parted before, or masks.
func (d *Decode) Selective() bool { return d.Parted > 0 || d.Masked > 0 }

// LogitsMetrics returns the logits pair's metrics m with the numbers a
// verdict reads taken over the logits d measured (the rows that had not
// parted, masks left out): Mismatched, NormA = √Σℓ_A², NormDiff =
// √Σ(ℓ_B − ℓ_A)², RelL2 = NormDiff/NormA (0 for equal logits, +Inf for
// differing ones of norm 0) and Cosine = Σℓ_Aℓ_B/√(Σℓ_A²Σℓ_B²). Count
// stays the tensor's elements (a report is checked against its shape), so
// the elements left out count as matching in the mismatch fraction;
// maxima, percentiles, ULP and NaN/Inf counts stay the whole tensor's (a
// mask equal in both runs adds nothing to a difference).
func (d *Decode) LogitsMetrics(m *Metrics) *Metrics {
	c := *m
	c.Mismatched = d.LogitsMismatched
	c.NormA, c.NormDiff = math.Sqrt(d.LogitsSS), math.Sqrt(d.LogitsDD)
	switch {
	case d.LogitsDD == 0:
		c.RelL2 = 0
	case d.LogitsSS == 0:
		c.RelL2 = math.Inf(1)
	default:
		c.RelL2 = c.NormDiff / c.NormA
	}
	if d.LogitsSS > 0 && d.LogitsBB > 0 {
		c.Cosine = d.LogitsAB / math.Sqrt(d.LogitsSS*d.LogitsBB)
	}
	return &c
}

func in(tok int64, v int) bool { return tok >= 0 && tok < int64(v) }

// maxFinite returns the largest finite value of floating-point dtype d
// (float32's for the others).
func maxFinite(d loaders.DType) float64 {
	switch d {
	case loaders.Float64:
		return math.MaxFloat64
	case loaders.BFloat16:
		return 0x1.fep127
	case loaders.Float16:
		return 65504
	}
	return math.MaxFloat32
}

// fitsBFloat16 reports whether values xs of tensor t are all bfloat16
// values: t is bfloat16, or float32 with each value's low 16 bits zero.
func fitsBFloat16(t *loaders.Tensor, xs []float64) bool {
	switch t.DType {
	case loaders.BFloat16:
		return true
	case loaders.Float32:
		for _, x := range xs {
			if math.Float32bits(float32(x))&0xFFFF != 0 {
				return false
			}
		}
		return true
	}
	return false
}

// readTokens reads every element of integer tensor t exactly: 8-byte
// integers by their bits (a uint64 beyond 2^63 comes out negative, outside
// any vocabulary), narrower ones through float64, which holds them
// exactly.
func readTokens(t *loaders.Tensor) ([]int64, error) {
	if t.DType.Size() != 8 {
		vs, err := readValues(t)
		out := make([]int64, len(vs))
		for i, v := range vs {
			out[i] = int64(v)
		}
		return out, err
	}
	r, err := t.Open()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	bits := make([]uint64, t.Len())
	n := 0
	for n < len(bits) {
		k, err := r.ReadBits64(bits[n:])
		n += k
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if n != len(bits) {
		return nil, fmt.Errorf("read %d of %d tokens", n, len(bits))
	}
	out := make([]int64, len(bits))
	for i, b := range bits {
		out[i] = int64(b)
	}
	return out, nil
}

// readValues reads every element of t as float64.
func readValues(t *loaders.Tensor) ([]float64, error) {
	r, err := t.Open()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	out := make([]float64, t.Len()*int64(t.DType.Components()))
	n := 0
	for n < len(out) {
		k, err := r.Read(out[n:])
		n += k
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if n != len(out) {
		return nil, fmt.Errorf("read %d of %d values", n, len(out))
	}
	return out, nil
}
