package report

import (
	"math"
	"strconv"
)

// jsonReader reads the tokens of a JSON text one at a time, each after
// any whitespace; a method that reports false may have read part of its
// token.
type jsonReader struct {
	b []byte
	i int
}

// space reads whitespace.
func (r *jsonReader) space() {
	for r.i < len(r.b) && (r.b[r.i] == ' ' || r.b[r.i] == '\n' || r.b[r.i] == '\t' || r.b[r.i] == '\r') {
		r.i++
	}
}

// byte reads c.
func (r *jsonReader) byte(c byte) bool {
	r.space()
	return r.next(c)
}

// next reads c if it comes next, whitespace not skipped.
func (r *jsonReader) next(c byte) bool {
	if r.i < len(r.b) && r.b[r.i] == c {
		r.i++
		return true
	}
	return false
}

// literal reads s: null, true, false, or a string without escapes, with
// its quotes.
func (r *jsonReader) literal(s string) bool {
	r.space()
	return r.nextString(s)
}

// nextString reads s if it comes next, whitespace not skipped.
func (r *jsonReader) nextString(s string) bool {
	if len(r.b)-r.i >= len(s) && string(r.b[r.i:r.i+len(s)]) == s {
		r.i += len(s)
		return true
	}
	return false
}

// key reads "key" (key without escapes) and the colon after it.
func (r *jsonReader) key(key string) bool {
	return r.byte('"') && r.nextString(key) && r.next('"') && r.byte(':')
}

// end reports whether nothing but whitespace is left.
func (r *jsonReader) end() bool {
	r.space()
	return r.i == len(r.b)
}

// number reads a JSON number and returns its text, nil where there is
// none.
func (r *jsonReader) number() []byte {
	r.space()
	start := r.i
	r.next('-')
	if !r.next('0') && r.digits() == 0 {
		return nil
	}
	if r.next('.') && r.digits() == 0 {
		return nil
	}
	if r.next('e') || r.next('E') {
		if !r.next('+') {
			r.next('-')
		}
		if r.digits() == 0 {
			return nil
		}
	}
	return r.b[start:r.i]
}

// digits reads decimal digits and returns how many.
func (r *jsonReader) digits() int {
	start := r.i
	for r.i < len(r.b) && '0' <= r.b[r.i] && r.b[r.i] <= '9' {
		r.i++
	}
	return r.i - start
}

// int reads a number that is an integer of bits bits.
func (r *jsonReader) int(bits int) (int64, bool) {
	t := r.number()
	n, err := strconv.ParseInt(string(t), 10, bits) // a short string on the stack
	return n, t != nil && err == nil
}

// uint reads a number that is a uint64.
func (r *jsonReader) uint() (uint64, bool) {
	t := r.number()
	n, err := strconv.ParseUint(string(t), 10, 64)
	return n, t != nil && err == nil
}

// float reads what Float writes: a number, null (NaN), "inf" or "-inf".
func (r *jsonReader) float() (float64, bool) {
	switch {
	case r.literal("null"):
		return math.NaN(), true
	case r.literal(`"inf"`):
		return math.Inf(1), true
	case r.literal(`"-inf"`):
		return math.Inf(-1), true
	}
	t := r.number()
	v, err := strconv.ParseFloat(string(t), 64)
	return v, t != nil && err == nil
}

// floatPair reads an array of two of what float reads.
func (r *jsonReader) floatPair() (a, b float64, ok bool) {
	if !r.byte('[') {
		return 0, 0, false
	}
	if a, ok = r.float(); !ok || !r.byte(',') {
		return 0, 0, false
	}
	if b, ok = r.float(); !ok {
		return 0, 0, false
	}
	return a, b, r.byte(']')
}

// ints reads an array of ints, or null (nil).
func (r *jsonReader) ints() ([]int, bool) {
	if r.literal("null") {
		return nil, true
	}
	if !r.byte('[') {
		return nil, false
	}
	v := []int{}
	if r.byte(']') {
		return v, true
	}
	for {
		n, ok := r.int(strconv.IntSize)
		if !ok {
			return nil, false
		}
		v = append(v, int(n))
		if r.byte(']') {
			return v, true
		}
		if !r.byte(',') {
			return nil, false
		}
	}
}
