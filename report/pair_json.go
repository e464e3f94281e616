package report

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"

	"github.com/graphdiff/graphdiff/compare"
)

// The JSON report's pairs are written by hand, laid out as they go:
// encoding/json's reflection, its check of Float's MarshalJSON output and
// indenting after were most of the cost of a report of many small pairs
// (bench/README.md). appendPairJSON writes exactly what
// json.MarshalIndent(t, pairPrefix, pairIndent) writes for a TensorJSON
// (tests check it byte for byte).

// pairPrefix and pairIndent are the layout of a pair in the report's
// "tensors" array.
const pairPrefix, pairIndent = "    ", "  "

// pairPad[d] begins a line at depth d of a pair: a newline, pairPrefix and
// d pairIndents.
var pairPad = func() (pad [4]string) {
	for d := range pad {
		pad[d] = "\n" + pairPrefix + strings.Repeat(pairIndent, d)
	}
	return pad
}()

// appendPairJSON appends t laid out as json.MarshalIndent(t, pairPrefix,
// pairIndent) lays it out.
func appendPairJSON(b []byte, t *TensorJSON) []byte { return appendPairJSONCached(b, t, nil) }

// limitsCache is the limits last laid out and their text: pairs of one
// dtype mostly share their limits, and formatting their four numbers again
// for each was a sizeable part of the encoding (bench/README.md).
type limitsCache struct {
	limits LimitsJSON
	text   []byte
	ok     bool
}

// appendPairJSONCached is appendPairJSON, with the limits' text taken from
// c (nil: none) when they are those c holds, and kept there otherwise.
func appendPairJSONCached(b []byte, t *TensorJSON, c *limitsCache) []byte {
	b = appendKey(b, '{', 1, "name")
	b = appendString(b, t.Name)
	b = appendKey(b, ',', 1, "step")
	if t.Step == nil {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendInt(b, int64(*t.Step), 10)
	}
	b = appendStringField(b, 1, "kind", t.Kind)
	b = appendStringField(b, 1, "status", t.Status)
	b = appendStringField(b, 1, "dtype", t.DType)
	if t.DTypeB != "" {
		b = appendStringField(b, 1, "dtype_b", t.DTypeB)
	}
	b = appendKey(b, ',', 1, "shape")
	b = appendInts(b, 1, t.Shape)
	if len(t.ShapeB) > 0 {
		b = appendKey(b, ',', 1, "shape_b")
		b = appendInts(b, 1, t.ShapeB)
	}
	if t.FileA != "" {
		b = appendStringField(b, 1, "file_a", t.FileA)
	}
	if t.FileB != "" {
		b = appendStringField(b, 1, "file_b", t.FileB)
	}
	if m := t.Moment; m != nil {
		b = appendKey(b, ',', 1, "moment")
		b = appendKey(b, '{', 2, "state")
		b = appendString(b, m.State)
		b = appendFloatField(b, 2, "decay", m.Decay)
		b = appendFloatField(b, 2, "gain", m.Gain)
		b = appendStringField(b, 2, "param", m.Param)
		b = appendClose(b, 1, '}')
	}
	if l := t.Limits; l != nil {
		b = appendKey(b, ',', 1, "limits")
		if c != nil && c.ok && *l == c.limits { // never for a NaN
			b = append(b, c.text...)
		} else {
			start := len(b)
			b = appendLimits(b, l)
			if c != nil {
				c.limits, c.text, c.ok = *l, append(c.text[:0], b[start:]...), true
			}
		}
	}
	if j := t.Judged; j != nil {
		b = appendKey(b, ',', 1, "judged_by")
		b = appendKey(b, '{', 2, "rule")
		b = appendString(b, j.Rule)
		b = appendFloatField(b, 2, "measure", j.Measure)
		b = appendFloatField(b, 2, "limit", j.Limit)
		b = appendFloatField(b, 2, "ratio", j.Ratio)
		b = appendClose(b, 1, '}')
	}
	b = appendKey(b, ',', 1, "metrics")
	if m := t.Metrics; m == nil {
		b = append(b, "null"...)
	} else {
		b = appendMetrics(b, (*compare.Metrics)(m))
	}
	if n := t.Noise; n != nil {
		b = appendKey(b, ',', 1, "noise")
		b = appendKey(b, '{', 2, "rel_l2")
		b = appendFloat(b, n.RelL2)
		b = appendIntField(b, 2, "count", n.Count)
		b = appendIntField(b, 2, "mismatched", n.Mismatched)
		b = appendFloatField(b, 2, "mismatch_fraction", n.MismatchFraction)
		b = appendFloatField(b, 2, "max_abs", n.MaxAbs)
		b = appendClose(b, 1, '}')
	}
	if len(t.Reasons) > 0 {
		b = appendKey(b, ',', 1, "reasons")
		for i, r := range t.Reasons {
			b = append(b, "[,"[min(i, 1)])
			b = append(b, pairPad[2]...)
			b = appendString(b, r)
		}
		b = appendClose(b, 1, ']')
	}
	if t.Error != "" {
		b = appendStringField(b, 1, "error", t.Error)
	}
	if t.Partial != nil {
		// shards only: rare enough for the reflective encoder, laid out
		// from the depth of its key
		enc, _ := json.MarshalIndent(t.Partial, pairPad[1][1:], pairIndent)
		b = appendKey(b, ',', 1, "partial")
		b = append(b, enc...)
	}
	return appendClose(b, 0, '}')
}

// appendKey appends sep (an opening brace or a comma), a new line at
// depth and "key": .
func appendKey(b []byte, sep byte, depth int, key string) []byte {
	b = append(b, sep)
	b = append(b, pairPad[depth]...)
	b = append(b, '"')
	b = append(b, key...)
	return append(b, '"', ':', ' ')
}

// appendClose appends a new line at depth and c, the end of an object or
// array whose members are at depth+1.
func appendClose(b []byte, depth int, c byte) []byte {
	return append(append(b, pairPad[depth]...), c)
}

// appendLimits appends the limits object that is the value of a key at
// depth 1.
func appendLimits(b []byte, l *LimitsJSON) []byte {
	b = appendKey(b, '{', 2, "compare_dtype")
	b = appendString(b, l.CompareDType)
	b = appendFloatField(b, 2, "rtol", l.RTol)
	b = appendFloatField(b, 2, "atol", l.ATol)
	b = appendFloatField(b, 2, "max_rel_l2", l.MaxRelL2)
	b = appendFloatField(b, 2, "max_mismatch_fraction", l.MaxMismatchFraction)
	if l.PerTensor {
		b = appendKey(b, ',', 2, "per_tensor")
		b = append(b, "true"...)
	}
	return appendClose(b, 1, '}')
}

func appendStringField(b []byte, depth int, key, v string) []byte {
	return appendString(appendKey(b, ',', depth, key), v)
}

func appendIntField(b []byte, depth int, key string, v int64) []byte {
	return strconv.AppendInt(appendKey(b, ',', depth, key), v, 10)
}

func appendFloatField(b []byte, depth int, key string, v Float) []byte {
	return appendFloat(appendKey(b, ',', depth, key), v)
}

// appendFloat appends what Float.MarshalJSON returns, finite numbers
// by appendShortFloat (the same text as strconv's).
func appendFloat(b []byte, f Float) []byte {
	v := float64(f)
	switch {
	case math.IsNaN(v):
		return append(b, "null"...)
	case math.IsInf(v, 1):
		return append(b, `"inf"`...)
	case math.IsInf(v, -1):
		return append(b, `"-inf"`...)
	}
	return appendShortFloat(b, v)
}

// appendInts appends an int array that is the value of a key at depth:
// null for nil, [] when empty, else an element a line, at depth+1.
func appendInts(b []byte, depth int, v []int) []byte {
	switch {
	case v == nil:
		return append(b, "null"...)
	case len(v) == 0:
		return append(b, "[]"...)
	}
	for i, x := range v {
		b = append(b, "[,"[min(i, 1)])
		b = append(b, pairPad[depth+1]...)
		b = strconv.AppendInt(b, int64(x), 10)
	}
	return appendClose(b, depth, ']')
}

// appendFloats is appendInts for a Float array.
func appendFloats(b []byte, depth int, v []Float) []byte {
	switch {
	case v == nil:
		return append(b, "null"...)
	case len(v) == 0:
		return append(b, "[]"...)
	}
	for i, x := range v {
		b = append(b, "[,"[min(i, 1)])
		b = append(b, pairPad[depth+1]...)
		b = appendFloat(b, x)
	}
	return appendClose(b, depth, ']')
}

// appendString appends s as encoding/json quotes it. Printable ASCII
// without the characters it escapes (" \ < > &) is copied; anything else
// goes through encoding/json.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7E || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
