package report

import (
	"bufio"
	"cmp"
	"encoding/json"
	"io"
	"math"
	"slices"
	"strconv"

	"github.com/graphdiff/graphdiff/curve"
)

// curveJSON writes the JSON form of a curve analysis (CurveJSON) laid out
// as json.Encoder with a two-space indent would, except that every array
// of numbers is written on one line, its numbers separated by commas
// alone: the per-step arrays of a long curve hold millions of numbers,
// and a line for each gave a 1,000,000-step report 8 million lines, a
// fifth of its bytes indentation. The numbers are the text Float.MarshalJSON and
// json.Marshal give them, so the document decodes to the same values and
// json.Compact makes it CurveJSON's compact encoding byte for byte.
//
// The per-step arrays are streamed from the result, encoded a chunk at a
// time on all processors, rather than copied into a CurveJSON and
// encoded whole: memory stays flat however long the curve
// (bench/README.md).
func curveJSON(w io.Writer, r *curve.Result) error {
	short := *r // all but the arrays of numbers, which are streamed
	short.Steps, short.OnlyA, short.OnlyB, short.Spikes = nil, nil, nil, nil
	short.ValuesA, short.ValuesB, short.AbsDiff, short.RelDiff, short.Band, short.Drift, short.Level = nil, nil, nil, nil, nil, nil, nil
	head := NewCurveJSON(&short)
	d := curveDoc{w: bufio.NewWriterSize(w, writeBuffer)}
	d.value("verdict", head.Verdict)
	d.value("first_divergent_step", head.FirstDivergentStep)
	d.value("pattern", head.Pattern)
	d.value("a", head.A)
	d.value("b", head.B)
	d.value("dtype", head.DType)
	d.value("settings", head.Settings)
	d.value("evidence", head.Evidence)
	d.value("max_rel", head.MaxRel)
	d.value("max_rel_step", head.MaxRelStep)
	d.ints("only_a", r.OnlyA)
	d.ints("only_b", r.OnlyB)
	d.ints("spikes", r.Spikes)
	d.value("notes_a", head.NotesA)
	d.value("notes_b", head.NotesB)
	d.ints("steps", r.Steps)
	d.floats("a_values", r.ValuesA)
	d.floats("b_values", r.ValuesB)
	d.floats("abs_diff", r.AbsDiff)
	d.floats("rel_diff", r.RelDiff)
	d.floats("band", r.Band)
	d.floats("drift", r.Drift)
	d.floats("level", r.Level)
	if head.Baseline != nil {
		d.value("baseline", head.Baseline)
	}
	if d.err != nil {
		return d.err
	}
	d.w.WriteString("\n}\n")
	return d.w.Flush()
}

// curveDoc writes the members of a curve analysis's JSON object, in
// CurveJSON's order, one a line at an indent of two spaces.
type curveDoc struct {
	w       *bufio.Writer
	members int
	err     error // from encoding a value; w keeps its own
	numbers numberWriter
}

// key starts a member: the brace or the comma before it, and its name.
func (d *curveDoc) key(name string) {
	if d.members == 0 {
		d.w.WriteString("{\n  \"")
	} else {
		d.w.WriteString(",\n  \"")
	}
	d.members++
	d.w.WriteString(name)
	d.w.WriteString("\": ")
}

// value writes a member whose value json.MarshalIndent lays out as it
// would inside the object: strings, numbers, null, the settings, the
// evidence and notes (one string a line), the baseline.
func (d *curveDoc) value(name string, v any) {
	text, err := json.MarshalIndent(v, "  ", "  ")
	if err != nil {
		d.err = cmp.Or(d.err, err)
		return
	}
	d.key(name)
	d.w.Write(text)
}

// ints writes a member that is an array of integers, on one line.
func (d *curveDoc) ints(name string, vs []int64) {
	d.key(name)
	d.numbers.write(d.w, len(vs), func(text []byte, _ *floatMemo, i, j int) []byte {
		for k := i; k < j; k++ {
			if k > 0 {
				text = append(text, ',')
			}
			text = strconv.AppendInt(text, vs[k], 10)
		}
		return text
	})
}

// floats writes a member that is an array of Float, on one line. Each
// chunk tries the memo on its first memoTrial numbers and keeps it only
// where it found at least one in four of them there: most arrays hold a
// value once, and a look-up that misses costs more than the memo saves.
func (d *curveDoc) floats(name string, vs []float64) {
	d.key(name)
	d.numbers.write(d.w, len(vs), func(text []byte, memo *floatMemo, i, j int) []byte {
		memoize, hits := true, 0
		for k := i; k < j; k++ {
			if k > 0 {
				text = append(text, ',')
			}
			if k == i+memoTrial {
				memoize = 4*hits >= memoTrial
			}
			if !memoize {
				text = appendFloat(text, Float(vs[k]))
				continue
			}
			var hit bool
			if text, hit = memo.append(text, vs[k]); hit {
				hits++
			}
		}
		return text
	})
}

// memoTrial is how many numbers of a chunk try the memo.
const memoTrial = 1024

// numberChunk is how many numbers of an array one goroutine encodes at a
// time: about 400 KiB of text for float64 losses.
const numberChunk = 16 << 10

// maxNumberText is the longest text of a number with its comma: a
// float64's ("-2.2250738585072014e-308,"); an int64's is shorter.
const maxNumberText = 25

// numberWriter writes arrays of numbers, encoding chunks of numberChunk
// numbers on all processors (inOrder); a written chunk's buffer and memo
// encode a later one, so what it holds is a few MiB whatever the length
// of the arrays.
type numberWriter struct {
	chunks inOrder[numberText]
}

// numberText is the text of one chunk of an array and the memo its
// encoder keeps.
type numberText struct {
	text []byte
	memo floatMemo
}

// write writes the array [ encode(0, numberChunk) encode(numberChunk, …)
// … ] to w, the chunks encoded concurrently and written in order (a short
// array, in one chunk, with no goroutine). encode appends the text of the
// numbers [i, j) to text, each but the array's first after a comma, and
// text has room for them all.
func (nw *numberWriter) write(w *bufio.Writer, n int, encode func(text []byte, memo *floatMemo, i, j int) []byte) {
	w.WriteByte('[')
	nw.chunks.run(max(1, (n+numberChunk-1)/numberChunk), func(k int, c *numberText) {
		i, j := k*numberChunk, min((k+1)*numberChunk, n)
		c.text = encode(slices.Grow(c.text[:0], (j-i)*maxNumberText), &c.memo, i, j)
	}, func(_ int, c *numberText) {
		if len(c.text) > w.Available() {
			w.Flush() // so that the chunk goes out whole, not copied into w
		}
		w.Write(c.text)
	})
	w.WriteByte(']')
}

// memoBits is log2 of the entries a floatMemo holds.
const memoBits = 12

// floatMemo remembers the text of numbers encoded lately, by their bits,
// in a table indexed by a hash of them (a later number of the same slot
// takes its place): the per-step arrays repeat values, the jump band
// holding still over many steps and the differences of float32 losses
// taking a few thousand values in a million steps, and formatting a
// float64 the shortest way costs about 30 ns (appendShortFloat), a
// look-up a few.
type floatMemo [1 << memoBits]struct {
	bits uint64
	n    uint8 // 0: empty
	text [24]byte
}

// append appends v's JSON text (appendFloat) to dst, and says
// whether the memo held it. The text is copied whole, in fixed-size
// stores, to and from the room dst has past its end.
func (m *floatMemo) append(dst []byte, v float64) ([]byte, bool) {
	bits := math.Float64bits(v)
	e := &m[bits*0x9e3779b97f4a7c15>>(64-memoBits)]
	n := len(dst)
	dst = slices.Grow(dst, len(e.text))
	if e.n > 0 && e.bits == bits {
		*(*[len(e.text)]byte)(dst[n : n+len(e.text)]) = e.text
		return dst[:n+int(e.n)], true
	}
	dst = appendFloat(dst, Float(v))
	e.bits, e.n, e.text = bits, uint8(len(dst)-n), *(*[len(e.text)]byte)(dst[n : n+len(e.text)])
	return dst, false
}
