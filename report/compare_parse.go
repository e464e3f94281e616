package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/graphdiff/graphdiff/compare"
	"github.com/graphdiff/graphdiff/judge"
	"github.com/graphdiff/graphdiff/loaders"
	"github.com/graphdiff/graphdiff/tolerances"
)

// UnmarshalJSON implements json.Unmarshaler, the inverse of MarshalJSON:
// null is NaN, "inf" and "-inf" are ±Inf.
func (f *Float) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case "null":
		*f = Float(math.NaN())
		return nil
	case `"inf"`:
		*f = Float(math.Inf(1))
		return nil
	case `"-inf"`:
		*f = Float(math.Inf(-1))
		return nil
	}
	var v float64
	if err := json.Unmarshal(b, &v); err != nil {
		return fmt.Errorf("number, null, \"inf\" or \"-inf\" expected, not %s", b)
	}
	*f = Float(v)
	return nil
}

// ShardReport is a comparison read back from its JSON report, as
// `graphdiff merge` needs it: the result, and whether the comparison was
// made with --strict.
type ShardReport struct {
	*judge.Result
	Strict bool
}

// ReadCompareJSON reads a comparison's JSON report (see CompareJSON) back
// into a result: pairs with their status, reasons, limits and metrics,
// ignored pairs, errors, the shard and the renames it was compared with
// (--rename). A pair's sides carry the dtype, shape and file the report
// names. Causes, warnings and the curve are not read back: check.Merge
// recomputes them from the merged result.
func ReadCompareJSON(r io.Reader) (*ShardReport, error) {
	var in CompareJSON
	dec := json.NewDecoder(r)
	if err := dec.Decode(&in); err != nil {
		return nil, fmt.Errorf("not a graphdiff compare JSON report: %w", err)
	}
	if in.A == "" || in.B == "" || in.Tensors == nil {
		return nil, errors.New(`not a graphdiff compare JSON report: no "a", "b" or "tensors"`)
	}
	if n := in.Summary.NotCompared; n < 0 || (n > 0) != (in.StoppedAfterStep != nil) {
		return nil, fmt.Errorf(`not a graphdiff compare JSON report: %d pairs not compared, stopped_after_step %v`, n, in.StoppedAfterStep != nil)
	}
	res := &judge.Result{A: in.A, B: in.B, NotCompared: in.Summary.NotCompared}
	if in.Baseline != nil {
		res.BaselineRun = in.Baseline.Path
	}
	res.Taps = in.Taps
	for i, s := range in.Renamed {
		rn, err := loaders.ParseRename(s)
		if err != nil {
			return nil, fmt.Errorf("renamed[%d]: %w", i, err)
		}
		res.Renamed = append(res.Renamed, rn)
	}
	out := &ShardReport{Result: res}
	compute, model := loaders.Invalid, loaders.Invalid
	if in.ComputeDType != "" {
		d, err := loaders.ParseDType(in.ComputeDType)
		if err != nil {
			return nil, fmt.Errorf("compute_dtype: %w", err)
		}
		compute = d
	}
	if s := in.Shard; s != nil {
		if s.Count < 1 || s.Count > MaxShards || s.Index < 1 || s.Index > s.Count {
			return nil, fmt.Errorf("shard %d of %d: want 1 ≤ index ≤ count ≤ %d", s.Index, s.Count, MaxShards)
		}
		res.Shard = loaders.Shard{Index: s.Index, Count: s.Count}
		out.Strict = s.Strict
		res.Rules = tolerances.RunRules{Grad: s.Rules.Grad, GradGrowth: s.Rules.GradGrowth, Update: s.Rules.Update, Loss: s.Rules.Loss, Output: s.Rules.Output}
		if s.ModelDType != "" {
			d, err := loaders.ParseDType(s.ModelDType)
			if err != nil {
				return nil, fmt.Errorf("shard.model_dtype: %w", err)
			}
			model = d
		}
	}
	res.Precision = tolerances.NewPrecision(compute, model)
	res.Precision.ModelFromValues = in.ModelDTypeFromValues && model == loaders.BFloat16
	res.Precision.ComputeFromValues = in.ComputeDTypeFromValues && (compute == loaders.BFloat16 || compute == loaders.Float16)
	if in.StoppedAfterStep != nil {
		if *in.StoppedAfterStep < 0 {
			return nil, fmt.Errorf("stopped_after_step %d is negative", *in.StoppedAfterStep)
		}
		step := *in.StoppedAfterStep
		res.StoppedAfterStep = &step
	}
	// The error list holds the errors of discovery, then those of the
	// unreadable pairs in pair order (see judge.Result.AllErrors); each
	// pair takes its own back, with its path and member.
	listed := make([]error, len(in.Errors))
	for i, e := range in.Errors {
		listed[i] = errors.New(e.Message)
		if e.Path != "" {
			listed[i] = &loaders.Error{Path: e.Path, Member: e.Member, Err: errors.New(e.Message)}
		}
	}
	pairErrs := 0
	for _, tj := range in.Tensors {
		if judge.Status(tj.Status) == judge.StatusError && tj.Error != "" {
			pairErrs++
		}
	}
	if pairErrs > len(listed) {
		return nil, fmt.Errorf("not a graphdiff compare JSON report: %d unreadable pairs but %d errors", pairErrs, len(listed))
	}
	res.Errors, listed = listed[:len(listed)-pairErrs], listed[len(listed)-pairErrs:]
	for i, tj := range in.Tensors {
		t, err := tensorFromJSON(tj)
		if err != nil {
			return nil, fmt.Errorf("tensors[%d] (%s): %w", i, tj.Name, err)
		}
		if t.Status == judge.StatusError && t.Err != nil {
			if listed[0].Error() != tj.Error {
				return nil, fmt.Errorf("tensors[%d] (%s): its error is not in the error list", i, tj.Name)
			}
			t.Err, listed = listed[0], listed[1:]
		}
		res.Tensors = append(res.Tensors, t)
	}
	for _, ig := range in.Ignored {
		res.Ignored = append(res.Ignored, &judge.TensorResult{Pair: judge.Pair{Name: ig.Name, Step: stepOf(ig.Step), Kind: loaders.Kind(ig.Kind)}})
	}
	return out, nil
}

func stepOf(p *int) int {
	if p == nil {
		return loaders.NoStep
	}
	return *p
}

// MaxShards is the most shards a report may say a comparison was split
// into.
const MaxShards = 1 << 16

// checkShape refuses negative dimensions and shapes of more than
// loaders.MaxDims dimensions.
func checkShape(what string, shape []int) error {
	if len(shape) > loaders.MaxDims {
		return fmt.Errorf("%s has %d dimensions, more than %d", what, len(shape), loaders.MaxDims)
	}
	for _, d := range shape {
		if d < 0 {
			return fmt.Errorf("%s %v has a negative dimension", what, shape)
		}
	}
	return nil
}

func tensorFromJSON(tj TensorJSON) (*judge.TensorResult, error) {
	if tj.Step != nil && *tj.Step < 0 {
		return nil, fmt.Errorf("step %d is negative", *tj.Step)
	}
	if err := checkShape("shape", tj.Shape); err != nil {
		return nil, err
	}
	if err := checkShape("shape_b", tj.ShapeB); err != nil {
		return nil, err
	}
	t := &judge.TensorResult{Pair: judge.Pair{Name: tj.Name, Step: stepOf(tj.Step), Kind: loaders.Kind(tj.Kind)},
		Decision: judge.Decision{Status: judge.Status(tj.Status), Reasons: tj.Reasons}}
	if tj.Error != "" {
		t.Err = errors.New(tj.Error)
	}
	dtA, err := loaders.ParseDType(tj.DType)
	if err != nil {
		return nil, err
	}
	dtB, shapeB := dtA, tj.Shape
	if tj.DTypeB != "" {
		if dtB, err = loaders.ParseDType(tj.DTypeB); err != nil {
			return nil, err
		}
	}
	if tj.ShapeB != nil {
		shapeB = tj.ShapeB
	}
	entry := func(file string, d loaders.DType, shape []int) *loaders.Meta {
		return &loaders.Meta{File: file, DType: d, Shape: append([]int{}, shape...)}
	}
	switch t.Status {
	case judge.StatusExtra:
		t.B = entry(tj.FileB, dtA, tj.Shape) // an extra tensor's dtype and shape are the second run's
	case judge.StatusMissing:
		t.A = entry(tj.FileA, dtA, tj.Shape)
	default:
		t.A, t.B = entry(tj.FileA, dtA, tj.Shape), entry(tj.FileB, dtB, shapeB)
		if m := tj.Moment; m != nil {
			t.A.Moment = loaders.Moment{State: m.State, Decay: float64(m.Decay), Gain: float64(m.Gain), Param: m.Param}
			t.B.Moment = t.A.Moment
		}
	}
	if l := tj.Limits; l != nil {
		d, err := loaders.ParseDType(l.CompareDType)
		if err != nil {
			return nil, fmt.Errorf("limits: %w", err)
		}
		t.Settings.DType = d
		t.Settings.RTol, t.Settings.ATol = float64(l.RTol), float64(l.ATol)
		t.MaxRelL2, t.MaxMismatchFraction = float64(l.MaxRelL2), float64(l.MaxMismatchFraction)
		t.Settings.MaxRelL2, t.Settings.MaxMismatchFraction = t.MaxRelL2, t.MaxMismatchFraction
		t.Settings.PerTensor = l.PerTensor
		t.Settings.FailOnDTypeChange = l.FailOnDTypeChange
	}
	if j := tj.Judged; j != nil {
		t.Rule, t.Measure, t.Limit = judge.Rule(j.Rule), float64(j.Measure), float64(j.Limit)
	}
	if m := tj.Metrics; m != nil {
		if n, ok := elements(tj.Shape); !ok || m.Count != n {
			return nil, fmt.Errorf("metrics.count %d is not the %v elements of shape %v", m.Count, n, tj.Shape)
		}
		if err := checkMetrics((*compare.Metrics)(m)); err != nil {
			return nil, err
		}
		t.Metrics = (*compare.Metrics)(m)
	}
	if p := tj.Partial; p != nil && t.Metrics != nil {
		t.Metrics.NormA, t.Metrics.NormDiff = float64(p.NormA), float64(p.NormDiff)
		if u := p.Update; u != nil {
			if u.Count != t.Metrics.Count || u.MovedA < 0 || u.MovedA > u.Count || u.MovedB < 0 || u.MovedB > u.Count ||
				u.UlpMovedA < 0 || u.UlpMovedA > u.MovedA || u.UlpMovedB < 0 || u.UlpMovedB > u.MovedB {
				return nil, fmt.Errorf("partial.update: count %d, moved %d and %d, for %d elements", u.Count, u.MovedA, u.MovedB, t.Metrics.Count)
			}
			var binned int64
			for _, b := range u.Bins {
				if b.N < 0 || b.N > u.Count-binned {
					return nil, fmt.Errorf("partial.update: bins of more than %d elements", u.Count)
				}
				binned += b.N
			}
			t.Update = &compare.Update{Count: u.Count, MovedA: u.MovedA, MovedB: u.MovedB, UlpMovedA: u.UlpMovedA, UlpMovedB: u.UlpMovedB}
			for _, b := range u.Bins {
				t.Update.Bins = append(t.Update.Bins, compare.UpdateBin{Exp: b.Exp, N: b.N, UU: float64(b.UU), DU: float64(b.DU), DD: float64(b.DD), PU: float64(b.PU)})
			}
			if len(u.Worst) > compare.WorstElems {
				return nil, fmt.Errorf("partial.update.worst: %d elements, at most %d", len(u.Worst), compare.WorstElems)
			}
			for _, w := range u.Worst {
				if !inShape(w.Index, tj.Shape) {
					return nil, fmt.Errorf("partial.update.worst: index %v outside shape %v", w.Index, tj.Shape)
				}
				t.Update.Worst = append(t.Update.Worst, compare.UpdateElem{Index: w.Index, Exp: w.GradExp, D: float64(w.Diff)})
			}
		}
		if p.Masked < 0 || p.Masked > t.Metrics.Count {
			return nil, fmt.Errorf("partial.masked: %d of %d elements", p.Masked, t.Metrics.Count)
		}
		t.Masked = p.Masked
		if d := p.Decode; d != nil {
			dec, err := decodeOf(d, t.Metrics.Count)
			if err != nil {
				return nil, fmt.Errorf("partial.decode: %w", err)
			}
			t.Decode = dec
		}
	}
	if n := tj.Noise; n != nil {
		t.Noise = &compare.Metrics{Count: n.Count, Mismatched: n.Mismatched, RelL2: float64(n.RelL2),
			MaxAbs: compare.Extreme{Value: float64(n.MaxAbs)}}
	}
	return t, nil
}

// inShape reports whether idx is an index of an array of that shape.
func inShape(idx, shape []int) bool {
	if len(idx) != len(shape) {
		return false
	}
	for i, v := range idx {
		if v < 0 || v >= shape[i] {
			return false
		}
	}
	return true
}

// elements returns the number of elements of a shape, false when it
// overflows an int64.
func elements(shape []int) (int64, bool) {
	n := int64(1)
	for _, d := range shape {
		if d < 0 || d != 0 && n > math.MaxInt64/int64(d) {
			return 0, false
		}
		n *= int64(d)
	}
	return n, true
}

// decodeOf is the compare.Decode a shard's report gives for a pair of
// count elements, checked: rows, vocabulary and counts that a decoding
// step of that pair can have, flips on distinct rows in order.
func decodeOf(d *DecodeJSON, count int64) (*compare.Decode, error) {
	// (how many logits were measured the token pair cannot bound: every
	// position's count, for a whole sequence's logits)
	if d.Rows < 1 || d.Vocab < 2 || d.Parted < 0 || d.Parted > d.Rows || len(d.Flips) > d.Rows-d.Parted ||
		d.LogitsCount < 0 || d.Masked < 0 || d.Masked > d.LogitsCount {
		return nil, fmt.Errorf("%d rows, vocabulary %d, %d parted, %d flips, %d logits, %d masked",
			d.Rows, d.Vocab, d.Parted, len(d.Flips), d.LogitsCount, d.Masked)
	}
	if count%int64(d.Rows) != 0 {
		return nil, fmt.Errorf("%d rows do not divide the pair's %d elements", d.Rows, count)
	}
	if len(d.TokensA) != d.Rows || len(d.TokensB) != d.Rows || len(d.LogitsA) != d.Rows || len(d.LogitsB) != d.Rows {
		return nil, fmt.Errorf("%d rows with %d and %d tokens, %d and %d logits' prints", d.Rows, len(d.TokensA), len(d.TokensB), len(d.LogitsA), len(d.LogitsB))
	}
	out := &compare.Decode{Rows: d.Rows, Vocab: d.Vocab, Parted: d.Parted, LogitsCount: d.LogitsCount, Masked: d.Masked, BFloat16: d.BFloat16,
		TokensA: d.TokensA, TokensB: d.TokensB}
	var err error
	if out.LogitsA, err = parsePrints(d.LogitsA); err != nil {
		return nil, err
	}
	if out.LogitsB, err = parsePrints(d.LogitsB); err != nil {
		return nil, err
	}
	for i, f := range d.Flips {
		if f.Row < 0 || f.Row >= d.Rows || (i > 0 && f.Row <= d.Flips[i-1].Row) {
			return nil, fmt.Errorf("flip row %d out of order or outside %d rows", f.Row, d.Rows)
		}
		out.Flips = append(out.Flips, compare.Flip{Row: f.Row, TokenA: f.TokenA, TokenB: f.TokenB,
			GapA: float64(f.GapA), GapB: float64(f.GapB), Scale: float64(f.Scale)})
	}
	return out, nil
}

// parsePrints reads row fingerprints written in hexadecimal (prints).
func parsePrints(hex []string) ([]uint64, error) {
	out := make([]uint64, len(hex))
	for i, h := range hex {
		p, err := strconv.ParseUint(h, 16, 64)
		if err != nil {
			return nil, fmt.Errorf("logits' print %q: not a 64-bit hexadecimal number", h)
		}
		out[i] = p
	}
	return out, nil
}
