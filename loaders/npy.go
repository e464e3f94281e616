package loaders

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unsafe"
)

// The .npy format (numpy's NEP 1, format versions 1.0, 2.0 and 3.0):
//
//	"\x93NUMPY" major minor HEADER_LEN header data
//
// HEADER_LEN is a little-endian uint16 in version 1.0 and a uint32 in 2.0
// and 3.0 (3.0 allows UTF-8 in the header). The header is the text of a
// Python dict literal with exactly the keys 'descr', 'fortran_order' and
// 'shape', padded with spaces and ending in '\n'.
//
// graphdiff parses the header itself rather than through npyio, whose
// v0.9.0 parser knows no version 3.0, allocates whatever length the file
// claims and slices the header without bounds checks. Nothing here
// allocates from a value read from the file before checking it against the
// file's size and a fixed cap.

// npyMagic starts every .npy file.
var npyMagic = []byte("\x93NUMPY")

// maxHeaderLen caps a header's length. numpy writes a few hundred bytes for
// any dtype graphdiff reads; its own reader refuses more than 10,000 by
// default.
const maxHeaderLen = 1 << 20

// MaxDims is numpy's limit on the number of dimensions (NPY_MAXDIMS in 2.x),
// and the most any reader here takes.
const MaxDims = 64

// npyHeader is a parsed .npy preamble and header.
type npyHeader struct {
	Major, Minor byte
	Descr        string
	Fortran      bool
	Shape        []int
	DataOffset   int64 // bytes before the first data byte
}

// readNPYHeader reads the preamble and header of an .npy stream whose total
// size is size bytes.
func readNPYHeader(r io.Reader, size int64) (npyHeader, error) {
	pre := make([]byte, 12)
	n, err := io.ReadFull(r, pre[:10])
	if n == 0 && err != io.EOF && size != 0 { // a read that failed outright
		return npyHeader{}, errors.New("file ends inside the .npy preamble (0 bytes)")
	}
	if n == 10 && (pre[6] == 2 || pre[6] == 3) { // a 4-byte header length
		m, _ := io.ReadFull(r, pre[10:])
		n += m
	}
	h, hlen, err := parseNPYPreamble(pre[:n], size)
	if err != nil {
		return h, err
	}
	buf := make([]byte, hlen)
	if _, err := io.ReadFull(r, buf); err != nil {
		return h, fmt.Errorf("file ends inside the .npy header: %w", err)
	}
	return h, h.parseHeaderText(string(buf), hlen)
}

// npyHeaderOf is readNPYHeader over a stream held whole in memory.
func npyHeaderOf(whole []byte) (npyHeader, error) {
	h, hlen, err := parseNPYPreamble(whole[:min(len(whole), 12)], int64(len(whole)))
	if err != nil {
		return h, err
	}
	// hlen fits: parseNPYPreamble checked it against the size
	text := whole[h.DataOffset : h.DataOffset+hlen]
	if len(text) > 0 {
		// parseCanonical keeps nothing of the text (the descr is
		// interned): the held bytes serve as they are, uncopied, though
		// Release recycles them
		if descr, fortran, shape, ok := parseCanonical(unsafe.String(&text[0], len(text))); ok {
			h.DataOffset += hlen
			h.Descr, h.Fortran, h.Shape = descr, fortran, shape
			return h, nil
		}
	}
	return h, h.parseHeaderText(string(text), hlen)
}

// parseNPYPreamble checks the preamble of an .npy stream of size bytes,
// given its first min(size, 12) bytes (fewer where the stream ended early),
// and returns the header's length, checked against the size and
// maxHeaderLen, with the version and the offset of the header text.
func parseNPYPreamble(pre []byte, size int64) (h npyHeader, hlen int64, err error) {
	n := len(pre)
	switch {
	case n == 0:
		return h, 0, errors.New("empty file, not an .npy array")
	case n >= 6 && !bytes.Equal(pre[:6], npyMagic), n < 6 && !bytes.HasPrefix(npyMagic, pre[:n]):
		return h, 0, errors.New("not an .npy file (no \\x93NUMPY magic)")
	case n < 10:
		return h, 0, fmt.Errorf("file ends inside the .npy preamble (%d bytes)", n)
	}
	h.Major, h.Minor = pre[6], pre[7]
	switch h.Major {
	case 1:
		hlen = int64(binary.LittleEndian.Uint16(pre[8:]))
		h.DataOffset = 10
	case 2, 3:
		if n < 12 {
			return h, 0, errors.New("file ends inside the .npy preamble")
		}
		hlen = int64(binary.LittleEndian.Uint32(pre[8:]))
		h.DataOffset = 12
	default:
		return h, 0, fmt.Errorf("unsupported .npy format version %d.%d (graphdiff reads 1.0, 2.0 and 3.0)", h.Major, h.Minor)
	}
	if hlen > size-h.DataOffset {
		return h, 0, fmt.Errorf("header length %d runs past the end of the file (%d bytes)", hlen, size)
	}
	if hlen > maxHeaderLen {
		return h, 0, fmt.Errorf("header length %d exceeds the %d-byte limit", hlen, maxHeaderLen)
	}
	return h, hlen, nil
}

// parseHeaderText reads the header's text, of hlen bytes, into h and moves
// DataOffset past it.
func (h *npyHeader) parseHeaderText(text string, hlen int64) error {
	h.DataOffset += hlen
	if err := h.parseDict(text); err != nil {
		return fmt.Errorf("bad .npy header: %w", err)
	}
	return nil
}

// parseDict fills the header from the dict literal text.
func (h *npyHeader) parseDict(text string) error {
	if descr, fortran, shape, ok := parseCanonical(text); ok {
		h.Descr, h.Fortran, h.Shape = descr, fortran, shape
		return nil
	}
	return h.parseLiteral(text)
}

// parseLiteral is parseDict through the general Python literal parser.
func (h *npyHeader) parseLiteral(text string) error {
	p := &pyParser{s: text}
	v, err := p.value()
	if err != nil {
		return err
	}
	p.skipSpace()
	if p.i != len(p.s) {
		return fmt.Errorf("unexpected %q after the header dict", p.rest())
	}
	dict, ok := v.(pyDict)
	if !ok {
		return errors.New("header is not a dict")
	}
	seen := 0
	for _, kv := range dict {
		switch kv.key {
		case "descr":
			switch d := kv.val.(type) {
			case string:
				h.Descr = d
			case pyList:
				return errors.New("structured dtype (a list of fields) is not supported: graphdiff compares plain numeric arrays")
			default:
				return errors.New("'descr' is not a string")
			}
		case "fortran_order":
			b, ok := kv.val.(bool)
			if !ok {
				return errors.New("'fortran_order' is not True or False")
			}
			h.Fortran = b
		case "shape":
			t, ok := kv.val.(pyTuple)
			if !ok {
				return errors.New("'shape' is not a tuple")
			}
			if len(t) > MaxDims {
				return fmt.Errorf("shape has %d dimensions, more than %d", len(t), MaxDims)
			}
			h.Shape = make([]int, len(t))
			for i, d := range t {
				n, ok := d.(int64)
				if !ok {
					return fmt.Errorf("shape entry %d is not an integer", i)
				}
				if n < 0 {
					return fmt.Errorf("shape entry %d is negative (%d)", i, n)
				}
				if n > math.MaxInt32*int64(1<<31) {
					return fmt.Errorf("shape entry %d is too large (%d)", i, n)
				}
				h.Shape[i] = int(n)
			}
		default:
			return fmt.Errorf("unexpected key %q", kv.key)
		}
		seen++
	}
	if seen != 3 || h.Descr == "" || h.Shape == nil && !hasKey(dict, "shape") || !hasKey(dict, "fortran_order") {
		return errors.New("header must have exactly the keys 'descr', 'fortran_order' and 'shape'")
	}
	return nil
}

// parseCanonical reads a header exactly as numpy writes one for a plain
// dtype (format.py's _write_array_header: the keys sorted, each followed by
// ", ", then "}", spaces and "\n"):
//
//	{'descr': '<f4', 'fortran_order': False, 'shape': (64, 32), }
//
// It reports false for anything else, and the general parser decides:
// a descr holding other than letters, digits and <>|=, an integer with a
// leading zero or more than 18 digits, other spacing, other key order, more
// than MaxDims dimensions. What it accepts, the general parser reads the
// same (FuzzNPYHeaderText checks this); a run of thousands of small files
// spends most of its header time here, without the general parser's
// allocations. It keeps no part of text: the descr is one of
// commonDescrs or a copy (npyHeaderOf hands it bytes that are recycled).
func parseCanonical(text string) (descr string, fortran bool, shape []int, ok bool) {
	rest, found := strings.CutPrefix(text, "{'descr': '")
	if !found {
		return "", false, nil, false
	}
	i := 0
	for i < len(rest) && i <= 8 && descrByte(rest[i]) {
		i++
	}
	if i == 0 || i > 8 {
		return "", false, nil, false
	}
	descr = internDescr(rest[:i])
	if rest, found = strings.CutPrefix(rest[i:], "', 'fortran_order': "); !found {
		return "", false, nil, false
	}
	switch {
	case strings.HasPrefix(rest, "False"):
		rest = rest[len("False"):]
	case strings.HasPrefix(rest, "True"):
		fortran, rest = true, rest[len("True"):]
	default:
		return "", false, nil, false
	}
	if rest, found = strings.CutPrefix(rest, ", 'shape': ("); !found {
		return "", false, nil, false
	}
	var dims [MaxDims]int
	n := 0
	for len(rest) > 0 && rest[0] != ')' {
		j := 0
		for j < len(rest) && j <= 18 && rest[j] >= '0' && rest[j] <= '9' {
			j++
		}
		if j == 0 || j > 18 || j > 1 && rest[0] == '0' || n == MaxDims {
			return "", false, nil, false
		}
		d, err := strconv.Atoi(rest[:j])
		if err != nil || d > math.MaxInt32*(1<<31) {
			return "", false, nil, false
		}
		dims[n], n, rest = d, n+1, rest[j:]
		switch {
		case strings.HasPrefix(rest, ", "):
			rest = rest[2:]
		case strings.HasPrefix(rest, ",)"):
			rest = rest[1:]
		case strings.HasPrefix(rest, ")") && n > 1:
		default: // (5) is not a tuple
			return "", false, nil, false
		}
	}
	if rest, found = strings.CutPrefix(rest, "), }"); !found {
		return "", false, nil, false
	}
	if strings.TrimRight(rest, " \n") != "" {
		return "", false, nil, false
	}
	shape = make([]int, n) // never nil: () is a shape
	copy(shape, dims[:n])
	return descr, fortran, shape, true
}

// internDescr returns descr as a string of its own, shared for the common
// ones: a substring would keep the whole header text alive as long as the
// tensor (18 MB for 100,000 pairs).
func internDescr(descr string) string {
	for _, d := range commonDescrs {
		if d == descr {
			return d
		}
	}
	return strings.Clone(descr)
}

var commonDescrs = [...]string{"<f4", "<f2", "<u2", "<f8", "<i8", "<i4", "|u1", "|i1", "|b1", "<c8", "<c16", ">f4"}

// descrByte reports whether c may appear in a plain dtype descr ("<f4").
func descrByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("<>|=", c) >= 0
}

func hasKey(d pyDict, k string) bool {
	for _, kv := range d {
		if kv.key == k {
			return true
		}
	}
	return false
}

// descrDType maps a numpy type descriptor ("<f4", ">i8", "|b1", "<V2") to a
// dtype and byte order.
func descrDType(descr string, opts Options) (DType, bool, error) {
	big := false
	code := descr
	if code != "" {
		switch code[0] {
		case '<', '|', '=':
			code = code[1:]
		case '>':
			big = true
			code = code[1:]
		}
	}
	switch code {
	case "b1", "?":
		return Bool, false, nil
	case "i1", "b":
		return Int8, false, nil
	case "u1", "B":
		return Uint8, false, nil
	case "i2":
		return Int16, big, nil
	case "u2":
		return Uint16, big, nil
	case "i4":
		return Int32, big, nil
	case "u4":
		return Uint32, big, nil
	case "i8":
		return Int64, big, nil
	case "u8":
		return Uint64, big, nil
	case "f2":
		return Float16, big, nil
	case "f4":
		return Float32, big, nil
	case "f8":
		return Float64, big, nil
	case "c8":
		return Complex64, big, nil
	case "c16":
		return Complex128, big, nil
	case "V2":
		return opts.v2(), big, nil
	case "f1":
		// numpy has no 1-byte float: ml_dtypes registers float8_e5m2 with
		// kind 'f', so np.save writes '<f1' for it (ml_dtypes 0.6.0 with
		// numpy 2.5.2), while its other float8 types are '<V1'.
		return Float8E5M2, false, nil
	case "V1":
		if opts.V1 == Invalid {
			return Invalid, false, fmt.Errorf("1-byte raw dtype %q is float8 data whose format is not recorded: give --float8 e4m3fn|e5m2 or a manifest dtype", descr)
		}
		return opts.V1, false, nil
	case "O":
		return Invalid, false, errors.New("object array (pickled Python objects) refused: graphdiff never unpickles")
	}
	switch {
	case strings.HasPrefix(code, "U"), strings.HasPrefix(code, "S"), strings.HasPrefix(code, "a"):
		return Invalid, false, fmt.Errorf("string dtype %q is not a numeric tensor", descr)
	case strings.HasPrefix(code, "M8"), strings.HasPrefix(code, "m8"):
		return Invalid, false, fmt.Errorf("datetime dtype %q is not a numeric tensor", descr)
	}
	return Invalid, false, fmt.Errorf("unsupported dtype %q", descr)
}

// elementCount returns the product of shape and the byte size of that many
// elements of size es, or an error when either overflows int64.
func elementCount(shape []int, es int) (elems, bytes int64, err error) {
	elems = 1
	for _, d := range shape {
		if d < 0 {
			return 0, 0, fmt.Errorf("negative dimension %d in shape %s", d, FormatShape(shape))
		}
		if d != 0 && elems > math.MaxInt64/int64(d) {
			return 0, 0, fmt.Errorf("shape %s has more elements than fit in 64 bits", FormatShape(shape))
		}
		elems *= int64(d)
	}
	if es > 0 && elems > math.MaxInt64/int64(es) {
		return 0, 0, fmt.Errorf("shape %s needs more bytes than fit in 64 bits", FormatShape(shape))
	}
	return elems, elems * int64(es), nil
}

// npyHeadRead is how many bytes the first read of an .npy file asks for:
// numpy pads headers to a multiple of 64 bytes, most fit in 256.
const npyHeadRead = 512

// readNPY reads the header of the .npy data at [base, base+size) of the
// file that open opens and returns its tensor. path and member name it in
// errors.
func readNPY(open opener, base, size int64, path, member string, opts Options) (*Tensor, error) {
	ra, closer, err := open()
	if err != nil {
		return nil, &Error{Path: path, Member: member, Err: err}
	}
	defer closer.Close()
	t := new(Tensor)
	if err := describeNPY(t, ra, base, size, path, member, opts); err != nil {
		return nil, err
	}
	t.data.open = open
	return t, nil
}

// describeNPY reads the header of the .npy data at [base, base+size) of ra
// and describes its tensor in t, with where its data lies but no way to
// open it.
func describeNPY(t *Tensor, ra io.ReaderAt, base, size int64, path, member string, opts Options) error {
	// Buffered: the preamble and the header in one read.
	h, err := readNPYHeader(bufio.NewReaderSize(io.NewSectionReader(ra, base, size), npyHeadRead), size)
	return describeHeader(t, h, err, base, size, path, member, opts)
}

// describeHeldNPY is describeNPY for a file held whole in memory: its
// header is read in place.
func describeHeldNPY(t *Tensor, whole []byte, path string, opts Options) error {
	h, err := npyHeaderOf(whole)
	return describeHeader(t, h, err, 0, int64(len(whole)), path, "", opts)
}

// describeHeader is describeNPY once the header is read (or failed with
// err).
func describeHeader(t *Tensor, h npyHeader, err error, base, size int64, path, member string, opts Options) error {
	if err != nil {
		return &Error{Path: path, Member: member, Err: err}
	}
	if err := fillNPYTensor(t, h, size, path, member, opts); err != nil {
		return err
	}
	t.data = dataRef{offset: base + h.DataOffset, size: size - h.DataOffset}
	return nil
}

// npyTensor checks a header against the size of the whole .npy stream and
// describes its tensor (without a data reference).
func npyTensor(h npyHeader, size int64, path, member string, opts Options) (*Tensor, error) {
	t := new(Tensor)
	if err := fillNPYTensor(t, h, size, path, member, opts); err != nil {
		return nil, err
	}
	return t, nil
}

// fillNPYTensor is npyTensor into t: a run of many small files describes
// each in its entry's own Tensor, allocating none.
func fillNPYTensor(t *Tensor, h npyHeader, size int64, path, member string, opts Options) error {
	fail := func(err error) error { return &Error{Path: path, Member: member, Err: err} }
	dt, big, err := descrDType(h.Descr, opts)
	if err != nil {
		return fail(err)
	}
	_, nbytes, err := elementCount(h.Shape, dt.Size())
	if err != nil {
		return fail(err)
	}
	if have := size - h.DataOffset; have != nbytes {
		return fail(fmt.Errorf("shape %s of %s needs %d data bytes but %s %d", FormatShape(h.Shape), h.Descr, nbytes, holder(member), have))
	}
	*t = Tensor{
		Path:         path,
		Member:       member,
		DType:        dt,
		Shape:        h.Shape,
		FortranOrder: h.Fortran,
		BigEndian:    big && dt.Size() > 1,
		Descr:        h.Descr,
	}
	return nil
}

// pyParser parses the subset of Python literals that .npy headers use:
// dicts, tuples, lists, strings, integers, True, False and None.
type pyParser struct {
	s     string
	i     int
	depth int
}

type (
	pyDict []pyKV
	pyKV   struct {
		key string
		val any
	}
	pyTuple []any
	pyList  []any
)

const maxPyDepth = 32

func (p *pyParser) skipSpace() {
	for p.i < len(p.s) && strings.IndexByte(" \t\r\n", p.s[p.i]) >= 0 {
		p.i++
	}
}

func (p *pyParser) rest() string {
	r := p.s[p.i:]
	if len(r) > 20 {
		r = r[:20] + "…"
	}
	return r
}

func (p *pyParser) value() (any, error) {
	p.skipSpace()
	if p.i >= len(p.s) {
		return nil, errors.New("header ends early")
	}
	switch c := p.s[p.i]; {
	case c == '{':
		return p.dict()
	case c == '(':
		t, err := p.seq('(', ')')
		return pyTuple(t), err
	case c == '[':
		l, err := p.seq('[', ']')
		return pyList(l), err
	case c == '\'' || c == '"':
		return p.str()
	case c == '-' || c >= '0' && c <= '9':
		return p.int()
	default:
		j := p.i
		for j < len(p.s) && (p.s[j] >= 'A' && p.s[j] <= 'Z' || p.s[j] >= 'a' && p.s[j] <= 'z') {
			j++
		}
		word := p.s[p.i:j]
		p.i = j
		switch word {
		case "True":
			return true, nil
		case "False":
			return false, nil
		case "None":
			return nil, nil
		}
		p.i -= len(word)
		return nil, fmt.Errorf("unexpected %q", p.rest())
	}
}

func (p *pyParser) enter() error {
	p.depth++
	if p.depth > maxPyDepth {
		return errors.New("header nests too deeply")
	}
	return nil
}

func (p *pyParser) dict() (any, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	p.i++ // '{'
	var d pyDict
	for {
		p.skipSpace()
		if p.i < len(p.s) && p.s[p.i] == '}' {
			p.i++
			return d, nil
		}
		k, err := p.value()
		if err != nil {
			return nil, err
		}
		key, ok := k.(string)
		if !ok {
			return nil, errors.New("dict key is not a string")
		}
		p.skipSpace()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			return nil, fmt.Errorf("expected ':' after key %q", key)
		}
		p.i++
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		if hasKey(d, key) {
			return nil, fmt.Errorf("key %q appears twice", key)
		}
		d = append(d, pyKV{key, v})
		if err := p.comma('}'); err != nil {
			return nil, err
		}
	}
}

func (p *pyParser) seq(open, close byte) ([]any, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	p.i++ // open
	var items []any
	for {
		p.skipSpace()
		if p.i < len(p.s) && p.s[p.i] == close {
			p.i++
			return items, nil
		}
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		if len(items) >= 1<<16 {
			return nil, errors.New("header sequence too long")
		}
		items = append(items, v)
		if err := p.comma(close); err != nil {
			return nil, err
		}
	}
}

// comma consumes the separator after an item: a ',' or the closing byte
// (left for the caller).
func (p *pyParser) comma(close byte) error {
	p.skipSpace()
	switch {
	case p.i >= len(p.s):
		return errors.New("header ends early")
	case p.s[p.i] == ',':
		p.i++
		return nil
	case p.s[p.i] == close:
		return nil
	}
	return fmt.Errorf("expected ',' or %q, found %q", close, p.rest())
}

func (p *pyParser) str() (any, error) {
	q := p.s[p.i]
	var b strings.Builder
	for j := p.i + 1; j < len(p.s); j++ {
		switch c := p.s[j]; c {
		case q:
			p.i = j + 1
			return b.String(), nil
		case '\\':
			if j+1 < len(p.s) {
				j++
				b.WriteByte(p.s[j])
			}
		default:
			b.WriteByte(c)
		}
	}
	return nil, errors.New("unterminated string in header")
}

func (p *pyParser) int() (any, error) {
	j := p.i
	if p.s[j] == '-' {
		j++
	}
	for j < len(p.s) && (p.s[j] >= '0' && p.s[j] <= '9' || p.s[j] == '_') {
		j++
	}
	if j < len(p.s) && strings.IndexByte(".eEjL", p.s[j]) >= 0 {
		return nil, fmt.Errorf("number %q is not an integer", p.rest())
	}
	lit := strings.ReplaceAll(p.s[p.i:j], "_", "")
	p.i = j
	n, err := strconv.ParseInt(lit, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("integer %s out of range", lit)
	}
	return n, nil
}

// holder names what holds the data in a size message.
func holder(member string) string {
	if member != "" {
		return "the member holds"
	}
	return "the file holds"
}

// FormatShape formats a shape as numpy prints it: (64, 32), (5,), ().
func FormatShape(shape []int) string {
	parts := make([]string, len(shape))
	for i, d := range shape {
		parts[i] = strconv.Itoa(d)
	}
	if len(shape) == 1 {
		return "(" + parts[0] + ",)"
	}
	return "(" + strings.Join(parts, ", ") + ")"
}
