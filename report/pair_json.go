package report

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
)

// The JSON report's pairs are written by hand: a comparison of thousands
// of small tensors spends more time in encoding/json's reflection and in
// validating Float's MarshalJSON output than in comparing. appendPairJSON
// writes exactly what json.Marshal writes for a TensorJSON, and
// indentJSON lays it out as json.MarshalIndent would (tests check both
// byte for byte).

// appendPairJSON appends t as compact JSON.
func appendPairJSON(b []byte, t *TensorJSON) []byte {
	b = appendKey(b, '{', "name")
	b = appendString(b, t.Name)
	b = appendKey(b, ',', "step")
	if t.Step == nil {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendInt(b, int64(*t.Step), 10)
	}
	b = appendStringField(b, "kind", t.Kind)
	b = appendStringField(b, "status", t.Status)
	b = appendStringField(b, "dtype", t.DType)
	if t.DTypeB != "" {
		b = appendStringField(b, "dtype_b", t.DTypeB)
	}
	b = appendKey(b, ',', "shape")
	b = appendInts(b, t.Shape)
	if len(t.ShapeB) > 0 {
		b = appendKey(b, ',', "shape_b")
		b = appendInts(b, t.ShapeB)
	}
	if t.FileA != "" {
		b = appendStringField(b, "file_a", t.FileA)
	}
	if t.FileB != "" {
		b = appendStringField(b, "file_b", t.FileB)
	}
	if l := t.Limits; l != nil {
		b = appendKey(b, ',', "limits")
		b = appendKey(b, '{', "compare_dtype")
		b = appendString(b, l.CompareDType)
		b = appendFloatField(b, "rtol", l.RTol)
		b = appendFloatField(b, "atol", l.ATol)
		b = appendFloatField(b, "max_rel_l2", l.MaxRelL2)
		b = appendFloatField(b, "max_mismatch_fraction", l.MaxMismatchFraction)
		if l.PerTensor {
			b = appendKey(b, ',', "per_tensor")
			b = append(b, "true"...)
		}
		b = append(b, '}')
	}
	b = appendKey(b, ',', "metrics")
	if m := t.Metrics; m == nil {
		b = append(b, "null"...)
	} else {
		b = appendKey(b, '{', "count")
		b = strconv.AppendInt(b, m.Count, 10)
		b = appendIntField(b, "mismatched", m.Mismatched)
		b = appendFloatField(b, "mismatch_fraction", m.MismatchFraction)
		b = appendKey(b, ',', "first_mismatch_index")
		b = appendInts(b, m.FirstMismatch)
		b = appendFloatField(b, "max_abs", m.MaxAbs)
		b = appendKey(b, ',', "max_abs_index")
		b = appendInts(b, m.MaxAbsIndex)
		b = appendKey(b, ',', "max_abs_values")
		b = appendFloats(b, m.MaxAbsValues)
		b = appendFloatField(b, "max_rel", m.MaxRel)
		b = appendKey(b, ',', "max_rel_index")
		b = appendInts(b, m.MaxRelIndex)
		b = appendKey(b, ',', "max_rel_values")
		b = appendFloats(b, m.MaxRelValues)
		b = appendFloatField(b, "rel_l2", m.RelL2)
		b = appendFloatField(b, "cosine", m.Cosine)
		b = appendFloatField(b, "p50_abs", m.P50)
		b = appendFloatField(b, "p90_abs", m.P90)
		b = appendFloatField(b, "p99_abs", m.P99)
		b = appendKey(b, ',', "max_ulp")
		b = strconv.AppendUint(b, m.MaxULP, 10)
		b = appendIntField(b, "nan_a", m.NaNA)
		b = appendIntField(b, "nan_b", m.NaNB)
		b = appendIntField(b, "inf_a", m.InfA)
		b = appendIntField(b, "inf_b", m.InfB)
		b = appendKey(b, ',', "nan_inf_positions_agree")
		b = strconv.AppendBool(b, m.SpecialsAgree)
		b = appendIntField(b, "nan_inf_mismatches", m.SpecialMismatches)
		b = append(b, '}')
	}
	if n := t.Noise; n != nil {
		b = appendKey(b, ',', "noise")
		b = appendKey(b, '{', "rel_l2")
		b = appendFloat(b, n.RelL2)
		b = appendIntField(b, "count", n.Count)
		b = appendIntField(b, "mismatched", n.Mismatched)
		b = appendFloatField(b, "mismatch_fraction", n.MismatchFraction)
		b = appendFloatField(b, "max_abs", n.MaxAbs)
		b = append(b, '}')
	}
	if len(t.Reasons) > 0 {
		b = appendKey(b, ',', "reasons")
		for i, r := range t.Reasons {
			b = append(b, "[,"[min(i, 1)])
			b = appendString(b, r)
		}
		b = append(b, ']')
	}
	if t.Error != "" {
		b = appendStringField(b, "error", t.Error)
	}
	if t.Partial != nil {
		// shards only: rare enough for the reflective encoder
		enc, _ := json.Marshal(t.Partial)
		b = appendKey(b, ',', "partial")
		b = append(b, enc...)
	}
	return append(b, '}')
}

// appendKey appends sep (an opening brace or a comma) and "key":.
func appendKey(b []byte, sep byte, key string) []byte {
	b = append(b, sep, '"')
	b = append(b, key...)
	return append(b, '"', ':')
}

func appendStringField(b []byte, key, v string) []byte {
	return appendString(appendKey(b, ',', key), v)
}

func appendIntField(b []byte, key string, v int64) []byte {
	return strconv.AppendInt(appendKey(b, ',', key), v, 10)
}

func appendFloatField(b []byte, key string, v Float) []byte {
	return appendFloat(appendKey(b, ',', key), v)
}

// appendFloat appends what Float.MarshalJSON returns.
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
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}

// appendInts appends an int array, null for nil.
func appendInts(b []byte, v []int) []byte {
	if v == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, x := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(x), 10)
	}
	return append(b, ']')
}

// appendFloats appends a Float array, null for nil.
func appendFloats(b []byte, v []Float) []byte {
	if v == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, x := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendFloat(b, x)
	}
	return append(b, ']')
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

// indentJSON appends compact JSON (no space outside strings, as json.Marshal
// and appendPairJSON write it) to dst laid out as json.Indent lays it out:
// every member and element on a line of its own, beginning with prefix and
// one indent per level, "{}" and "[]" kept whole, ": " after keys. Unlike
// json.Indent it does not validate src, which costs more than encoding the
// pair did.
func indentJSON(dst, src []byte, prefix, indent string) []byte {
	depth := 0
	opened := false // the last byte opened an object or array
	for i := 0; i < len(src); {
		c := src[i]
		if opened {
			opened = false
			if c == '}' || c == ']' {
				depth--
				dst = append(dst, c)
				i++
				continue
			}
			dst = newlineJSON(dst, prefix, indent, depth)
		}
		switch c {
		case '"': // to the quote no odd run of backslashes escapes
			j := i + 1
			for {
				j += bytes.IndexByte(src[j:], '"')
				k := j
				for src[k-1] == '\\' {
					k--
				}
				if (j-k)%2 == 0 {
					break
				}
				j++
			}
			dst = append(dst, src[i:j+1]...)
			i = j + 1
		case '{', '[':
			dst = append(dst, c)
			depth++
			opened = true
			i++
		case '}', ']':
			depth--
			dst = newlineJSON(dst, prefix, indent, depth)
			dst = append(dst, c)
			i++
		case ',':
			dst = append(dst, ',')
			dst = newlineJSON(dst, prefix, indent, depth)
			i++
		case ':':
			dst = append(dst, ':', ' ')
			i++
		default: // a number or a literal, copied whole
			j := i + 1
			for j < len(src) && !structuralJSON[src[j]] {
				j++
			}
			dst = append(dst, src[i:j]...)
			i = j
		}
	}
	return dst
}

// structuralJSON marks the bytes that end a number or literal in compact
// JSON.
var structuralJSON = [256]bool{'"': true, '{': true, '}': true, '[': true, ']': true, ',': true, ':': true}

func newlineJSON(dst []byte, prefix, indent string, depth int) []byte {
	dst = append(dst, '\n')
	dst = append(dst, prefix...)
	for range depth {
		dst = append(dst, indent...)
	}
	return dst
}
