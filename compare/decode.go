package compare

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"slices"

	"github.com/graphdiff/graphdiff/loaders"
	"github.com/graphdiff/graphdiff/tolerances"
)

// DecodeJob is one step of decoding in two runs: the tokens each chose
// (integers, shape S) and the logits they chose them from (shape S×V, in
// the same storage order), with the sequences (rows: positions of S)
// that parted at an earlier step, which are left out.
type DecodeJob struct {
	TokA, TokB, LogA, LogB *loaders.Tensor
	// Width is how many tokens each row holds: 1, or the sequence so far
	// with the step's token last (0 is 1). A row whose earlier tokens
	// differ between the runs is a flip no near tie explains.
	Width int
	// Positions is how many positions' logits each row holds, the step's
	// last (0 is 1): the logits of a whole sequence, [B, T, V], beside
	// one token per row. The near tie is read at the last position; the
	// logits' sums cover every position of the rows that had not parted.
	Positions int
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
	// LogitsCount counts the finite logits of the rows not left out:
	// sequences that share their prefix, whose logits compare, the rows
	// flipping at this step included (NaN and ±Inf are judged by
	// position, as in the whole tensor); Masked the masks left out of them
	// (unmaskedSums: the torch.finfo(dtype).min that masked vocabulary
	// positions are filled with, which carry nothing and would swamp the
	// norms). LogitsMetrics gives the metrics over those logits.
	LogitsCount, Masked int64
	logits              unmaskedSums
	// BFloat16 is set when every logit of both runs is a bfloat16 value
	// (a float32 whose low 16 bits are zero, or bfloat16 stored): logits
	// of a bfloat16 model saved as float32 round at bfloat16's epsilon.
	BFloat16 bool
	// TokensA and TokensB are every row's token in each run, parted rows
	// included; LogitsA and LogitsB every row's logits as a fingerprint
	// (RowPrint): what the step put out, which a diagnosis compares
	// across steps (the next step's input is this step's token).
	TokensA, TokensB []int64
	LogitsA, LogitsB []uint64
}

// RowPrint is the fingerprint of a row of logits: FNV-1a (64 bits) of the
// values' float64 bits, little-endian, in order. Rows that are equal bit
// for bit have equal prints; unequal rows, equal prints with probability
// 2^-64.
func RowPrint(row []float64) uint64 {
	b := make([]byte, 0, 8*len(row))
	for _, x := range row {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
	}
	h := fnv.New64a()
	h.Write(b)
	return h.Sum64()
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
	la, err := j.LogA.Values()
	if err != nil {
		return nil, err
	}
	lb, err := j.LogB.Values()
	if err != nil {
		return nil, err
	}
	w := max(j.Width, 1)
	rows := len(ta) / w
	if rows == 0 || len(ta)%w != 0 || len(tb) != len(ta) || len(la) != len(lb) || len(la)%rows != 0 || (j.Parted != nil && len(j.Parted) != rows) {
		return nil, fmt.Errorf("decode step: %d and %d tokens of %d a row, %d and %d logits, %d rows parted: shapes that do not pair", len(ta), len(tb), w, len(la), len(lb), len(j.Parted))
	}
	// each row's earlier tokens agree, or the row flipped before its step
	history := make([]bool, rows)
	if w > 1 { // the step's tokens are the rows' last
		sa, sb := make([]int64, rows), make([]int64, rows)
		for r := range rows {
			row, last := r*w, r*w+w-1
			history[r] = !slices.Equal(ta[row:last], tb[row:last])
			sa[r], sb[r] = ta[last], tb[last]
		}
		ta, tb = sa, sb
	}
	span, p := len(la)/rows, max(j.Positions, 1) // a row's logits, and its positions
	if span%p != 0 {
		return nil, fmt.Errorf("decode step: rows of %d logits are no %d positions", span, p)
	}
	v := span / p
	// step returns row r's logits at its last position: the step's
	step := func(l []float64, r int) []float64 { return l[(r+1)*span-v : (r+1)*span] }
	d := &Decode{Rows: rows, Vocab: v, BFloat16: fitsBFloat16(j.LogA, la) && fitsBFloat16(j.LogB, lb),
		TokensA: ta, TokensB: tb, LogitsA: make([]uint64, rows), LogitsB: make([]uint64, rows)}
	d.logits = newUnmaskedSums(j.LogA.DType, j.Tolerance)
	for r := range rows {
		d.LogitsA[r], d.LogitsB[r] = RowPrint(step(la, r)), RowPrint(step(lb, r))
	}
	for r := range rows {
		if j.Parted != nil && j.Parted[r] {
			d.Parted++
			continue
		}
		d.logits.add(la[r*span:(r+1)*span], lb[r*span:(r+1)*span])
		ra, rb := step(la, r), step(lb, r)
		if ta[r] == tb[r] && !history[r] {
			continue
		}
		f := Flip{Row: r, TokenA: ta[r], TokenB: tb[r], GapA: math.Inf(1), GapB: math.Inf(1), Scale: math.Inf(1)}
		if in(f.TokenA, v) && in(f.TokenB, v) && !history[r] {
			a, b := f.TokenA, f.TokenB
			f.GapA, f.GapB = ra[a]-ra[b], rb[b]-rb[a]
			f.Scale = max(math.Abs(ra[a]), math.Abs(ra[b]), math.Abs(rb[a]), math.Abs(rb[b]))
		}
		d.Flips = append(d.Flips, f)
	}
	d.LogitsCount, d.Masked = d.logits.count, d.logits.masked
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
func (d *Decode) LogitsMetrics(m *Metrics) *Metrics { return d.logits.metrics(m) }

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

// readTokens reads every element of integer tensor t exactly, as the
// pair comparison does (intReader: 8-byte integers by their bits, a
// uint64 beyond 2^63 coming out negative, outside any vocabulary).
func readTokens(t *loaders.Tensor) ([]int64, error) {
	r, err := t.Open()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	read := intReader(t.DType)
	out := make([]int64, 0, t.Len())
	var buf [intBufElems]uint64
	for {
		n, err := read(r, buf[:])
		for _, b := range buf[:n] {
			out = append(out, int64(b))
		}
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
	}
}
