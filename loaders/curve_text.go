package loaders

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// readTextCurve opens a curve file and parses it: parse is parseCSVCurve
// (choice is the column) or parseJSONLCurve (choice is the key).
func readTextCurve(path, choice string, parse func(io.Reader, string, string) (*Curve, error)) (*Curve, error) {
	f, err := openRegular(path)
	if err != nil {
		return nil, &Error{Path: path, Err: unwrapPathError(err)}
	}
	defer f.Close()
	return parse(f, path, choice)
}

// parseCSVCurve reads a loss column from CSV text with a header row, as
// Lightning's CSVLogger and most scripts write them; path names it in
// errors. Rows whose value cell is empty (other metrics logged on that
// row) are skipped.
func parseCSVCurve(in io.Reader, path, column string) (*Curve, error) {
	r := csv.NewReader(bufio.NewReader(&lineLimit{r: io.LimitReader(in, maxCurveFile), max: maxCSVLine}))
	r.FieldsPerRecord = -1
	r.ReuseRecord = true
	fail := func(format string, args ...any) (*Curve, error) {
		return nil, &Error{Path: path, Err: fmt.Errorf(format, args...)}
	}
	header, err := r.Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return fail("empty CSV file: a header row naming the columns is needed")
		}
		if errors.Is(err, errLineTooLong) {
			return fail("a line is longer than %d bytes", maxCSVLine)
		}
		return fail("bad CSV header: %v", err)
	}
	if len(header) > maxCSVColumns {
		return fail("the header has %d columns, more than %d", len(header), maxCSVColumns)
	}
	header = append([]string(nil), header...)
	stepCol := findColumn(header, stepNames...)
	valCol := -1
	if column != "" {
		valCol = findColumn(header, column)
		if valCol < 0 {
			return fail("no column %q (columns: %s)", column, strings.Join(header, ", "))
		}
	} else {
		for i, h := range header {
			if i != stepCol && strings.Contains(strings.ToLower(h), "loss") {
				valCol = i
				break
			}
		}
		if valCol < 0 {
			return fail("no column with \"loss\" in its name (columns: %s); choose one with --column", strings.Join(header, ", "))
		}
	}
	c := &Curve{Source: fmt.Sprintf("%s (column %q)", path, header[valCol])}
	skipped := 0
	for row := 0; ; row++ {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if errors.Is(err, errLineTooLong) {
			return fail("line %d is longer than %d bytes", row+2, maxCSVLine)
		}
		if err != nil {
			return fail("%v", err)
		}
		if valCol >= len(rec) || strings.TrimSpace(rec[valCol]) == "" {
			skipped++
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(rec[valCol]), 64)
		if err != nil {
			return fail("line %d: value %q is not a number", row+2, rec[valCol])
		}
		step := int64(row)
		if stepCol >= len(rec) {
			return fail("line %d: no %q value (the row has %d of %d columns)", row+2, header[stepCol], len(rec), len(header))
		}
		if stepCol >= 0 {
			s, err := strconv.ParseFloat(strings.TrimSpace(rec[stepCol]), 64)
			st, ok := parseStep(s)
			if err != nil || !ok {
				return fail("line %d: step %q is not an integer", row+2, rec[stepCol])
			}
			step = st
		}
		c.Steps = append(c.Steps, step)
		c.Values = append(c.Values, v)
	}
	if skipped > 0 {
		c.Notes = append(c.Notes, fmt.Sprintf("%d rows without a %q value skipped", skipped, header[valCol]))
	}
	if stepCol < 0 {
		c.Notes = append(c.Notes, "no step column: the row index is the step")
	}
	if len(c.Values) == 0 {
		return fail("no %q values", header[valCol])
	}
	return c.normalize(), nil
}

// findColumn returns the index of the first header equal to one of names
// (case ignored, spaces trimmed), trying names in order; -1 when none.
func findColumn(header []string, names ...string) int {
	for _, n := range names {
		for i, h := range header {
			if strings.EqualFold(strings.TrimSpace(h), n) {
				return i
			}
		}
	}
	return -1
}

// pythonSpecials matches the non-standard NaN, Infinity and -Infinity
// tokens that Python's json.dumps writes, outside strings.
var pythonSpecials = regexp.MustCompile(`([:\[,]\s*)(-?Infinity|NaN)(\s*[,}\]])`)

// maxJSONLine caps one JSON line.
const maxJSONLine = 1 << 20

// parseJSONLCurve reads one value per line from JSON-lines text:
// {"step": 3, "loss": 0.25}; path names it in errors. Lines without the
// value key are skipped. Python's NaN and Infinity tokens are accepted.
func parseJSONLCurve(f io.Reader, path, key string) (*Curve, error) {
	fail := func(format string, args ...any) (*Curve, error) {
		return nil, &Error{Path: path, Err: fmt.Errorf(format, args...)}
	}
	sc := bufio.NewScanner(io.LimitReader(f, maxCurveFile))
	sc.Buffer(make([]byte, 64<<10), maxJSONLine)
	c := &Curve{}
	skipped, noStep, line := 0, 0, 0
	for sc.Scan() {
		line++
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		text = pythonSpecials.ReplaceAll(text, []byte(`$1"$2"$3`))
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(text, &obj); err != nil {
			return fail("line %d: not a JSON object: %v", line, err)
		}
		if key == "" {
			key = pickLossKey(obj)
		}
		raw, ok := obj[key]
		if !ok || key == "" {
			skipped++
			continue
		}
		v, ok := jsonNumber(raw)
		if !ok {
			return fail("line %d: %q is %s, not a number", line, key, raw)
		}
		step := int64(line - 1)
		found := false
		for _, n := range stepNames {
			if sraw, ok := obj[n]; ok {
				s, ok1 := jsonNumber(sraw)
				st, ok2 := parseStep(s)
				if !ok1 || !ok2 {
					return fail("line %d: %q is %s, not an integer step", line, n, sraw)
				}
				step, found = st, true
				break
			}
		}
		if !found {
			noStep++
		}
		c.Steps = append(c.Steps, step)
		c.Values = append(c.Values, v)
	}
	if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
		return fail("line %d is longer than %d bytes", line+1, maxJSONLine)
	} else if err != nil {
		return fail("%v", err)
	}
	if len(c.Values) == 0 {
		if key == "" {
			return fail("no key with \"loss\" in its name; choose one with --key")
		}
		return fail("no %q values", key)
	}
	c.Source = fmt.Sprintf("%s (key %q)", path, key)
	if skipped > 0 {
		c.Notes = append(c.Notes, fmt.Sprintf("%d lines without %q skipped", skipped, key))
	}
	if noStep > 0 {
		c.Notes = append(c.Notes, fmt.Sprintf("%d lines without a step key: their line index is the step", noStep))
	}
	return c.normalize(), nil
}

// pickLossKey returns "loss" if present, else the alphabetically first key
// containing "loss", else "".
func pickLossKey(obj map[string]json.RawMessage) string {
	if _, ok := obj["loss"]; ok {
		return "loss"
	}
	var keys []string
	for k := range obj {
		if strings.Contains(strings.ToLower(k), "loss") {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return ""
	}
	sort.Strings(keys)
	return keys[0]
}

// jsonNumber reads a JSON number, or one of the strings "NaN",
// "Infinity", "-Infinity" (Python's tokens after rewriting).
func jsonNumber(raw json.RawMessage) (float64, bool) {
	var v float64
	if json.Unmarshal(raw, &v) == nil {
		return v, true
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		switch s {
		case "NaN":
			return math.NaN(), true
		case "Infinity":
			return math.Inf(1), true
		case "-Infinity":
			return math.Inf(-1), true
		}
	}
	return 0, false
}

// maxCSVLine caps one line of a CSV curve, and maxCSVColumns its columns:
// a loss log's lines are short, and a reader must not size memory from a
// line that never ends.
const (
	maxCSVLine    = 1 << 20
	maxCSVColumns = 1 << 12
)

var errLineTooLong = errors.New("line too long")

// lineLimit passes a reader through, failing with errLineTooLong once a
// line (bytes between newlines) passes max bytes.
type lineLimit struct {
	r      io.Reader
	n, max int
}

func (l *lineLimit) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	for i, b := range p[:n] {
		if b == '\n' {
			l.n = 0
			continue
		}
		if l.n++; l.n > l.max {
			return i, errLineTooLong
		}
	}
	return n, err
}
