package loaders

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"unicode/utf8"
)

// A .safetensors file is
//
//	N (little-endian uint64) | N bytes of JSON header | data
//
// The header maps each tensor name to {"dtype", "shape", "data_offsets":
// [begin, end]} with offsets relative to the start of the data, plus an
// optional "__metadata__" map of strings. graphdiff checks, before trusting
// any of it: N fits in the file and under maxSafetensorsHeader (16 MiB;
// the safetensors library's own limit is 100 MB), every shape is a list of non-negative
// integers, end−begin equals the element count times the dtype size,
// offsets lie inside the data, no two tensors overlap, and no key is given
// twice (see safetensorsEntries).

// maxSafetensorsHeader is the header size limit: 16 MiB, where the
// safetensors library allows 100 MB. A header describes each tensor in
// about 80 bytes, so 16 MiB is some 200,000 tensors, far more than any
// checkpoint holds; decoding it takes a few times its size in memory.
const maxSafetensorsHeader = 16 << 20

var safetensorsDTypes = map[string]DType{
	"BOOL": Bool, "U8": Uint8, "I8": Int8, "I16": Int16, "U16": Uint16,
	"I32": Int32, "U32": Uint32, "I64": Int64, "U64": Uint64,
	"F8_E4M3": Float8E4M3FN, "F8_E5M2": Float8E5M2,
	"F16": Float16, "BF16": BFloat16, "F32": Float32, "F64": Float64,
	"C64": Complex64,
}

type safetensorsEntry struct {
	DType       string        `json:"dtype"`
	Shape       []json.Number `json:"shape"`
	DataOffsets []json.Number `json:"data_offsets"`
}

// safetensorsEntries decodes the header's object into each key's value,
// undecoded. A key given twice is an error: a JSON decoder into a map
// keeps one of the two (encoding/json the last; the safetensors library's
// serde map one or the other, as its implementation happens to do), and
// which tensor the file means cannot be told. Reading the object a key at
// a time (Decoder.Token) is what lets the repetition be seen.
func safetensorsEntries(header []byte) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(header))
	dec.UseNumber()
	notObject := func(err error) error {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF // the object is not closed
		}
		return fmt.Errorf("header is not a JSON object: %v", err)
	}
	switch tok, err := dec.Token(); {
	case err != nil:
		return nil, notObject(err)
	case tok != json.Delim('{'):
		return nil, notObject(fmt.Errorf("it starts with %v", tok))
	}
	raw := map[string]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, notObject(err)
		}
		key, _ := tok.(string) // inside an object, Token gives keys as strings
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil, notObject(err)
		}
		if _, twice := raw[key]; twice {
			return nil, fmt.Errorf("header gives the key %q twice: a JSON reader keeps only one of the two, and which one is up to the reader", key)
		}
		raw[key] = value
	}
	if _, err := dec.Token(); err != nil {
		return nil, notObject(err)
	}
	return raw, nil
}

// readSafetensors lists the tensors of the .safetensors file that open
// opens; size is the file's size.
func readSafetensors(open opener, size int64, path string) ([]*Tensor, error) {
	fail := func(format string, args ...any) ([]*Tensor, error) {
		return nil, &Error{Path: path, Err: fmt.Errorf(format, args...)}
	}
	ra, closer, err := open()
	if err != nil {
		return nil, &Error{Path: path, Err: err}
	}
	defer closer.Close()
	if size < 8 {
		return fail("file of %d bytes is too short for a .safetensors header", size)
	}
	var lenBuf [8]byte
	if _, err := ra.ReadAt(lenBuf[:], 0); err != nil {
		return fail("reading header length: %w", err)
	}
	n := binary.LittleEndian.Uint64(lenBuf[:])
	if n > uint64(size-8) {
		return fail("header length %d runs past the end of the file (%d bytes)", n, size)
	}
	if n > maxSafetensorsHeader {
		return fail("header length %d exceeds the %d-byte limit", n, maxSafetensorsHeader)
	}
	header := make([]byte, n)
	if _, err := ra.ReadAt(header, 8); err != nil && !errors.Is(err, io.EOF) {
		return fail("reading header: %w", err)
	}
	dataStart := 8 + int64(n)
	dataLen := size - dataStart

	if !utf8.Valid(header) {
		return fail("header is not valid UTF-8")
	}
	raw, err := safetensorsEntries(header)
	if err != nil {
		return fail("%v", err)
	}
	names := make([]string, 0, len(raw))
	for name := range raw {
		if name != "__metadata__" {
			names = append(names, name)
		}
	}
	sort.Strings(names)

	type span struct {
		name       string
		begin, end int64
	}
	spans := make([]span, 0, len(names))
	tensors := make([]*Tensor, 0, len(names))
	for _, name := range names {
		if err := checkName(name); err != nil {
			return fail("tensor %v", err)
		}
		var e safetensorsEntry
		d := json.NewDecoder(bytes.NewReader(raw[name]))
		d.UseNumber()
		d.DisallowUnknownFields()
		if err := d.Decode(&e); err != nil {
			return fail("tensor %q: bad entry: %v", name, err)
		}
		dt, ok := safetensorsDTypes[e.DType]
		if !ok {
			return fail("tensor %q: unsupported dtype %q", name, e.DType)
		}
		shape := make([]int, len(e.Shape))
		if len(shape) > MaxDims {
			return fail("tensor %q: shape has %d dimensions, more than %d", name, len(shape), MaxDims)
		}
		for i, s := range e.Shape {
			v, err := s.Int64()
			if err != nil || v < 0 || int64(int(v)) != v {
				return fail("tensor %q: shape entry %d (%s) is not a non-negative integer", name, i, s)
			}
			shape[i] = int(v)
		}
		_, nbytes, err := elementCount(shape, dt.Size())
		if err != nil {
			return fail("tensor %q: %v", name, err)
		}
		if len(e.DataOffsets) != 2 {
			return fail("tensor %q: data_offsets must be [begin, end]", name)
		}
		begin, err1 := e.DataOffsets[0].Int64()
		end, err2 := e.DataOffsets[1].Int64()
		if err1 != nil || err2 != nil || begin < 0 || end < begin {
			return fail("tensor %q: bad data_offsets %v", name, e.DataOffsets)
		}
		if end > dataLen {
			return fail("tensor %q: data_offsets [%d, %d] run past the end of the data (%d bytes)", name, begin, end, dataLen)
		}
		if end-begin != nbytes {
			return fail("tensor %q: shape %s of %s needs %d bytes but data_offsets span %d", name, FormatShape(shape), e.DType, nbytes, end-begin)
		}
		if end > begin { // empty tensors occupy no bytes and overlap nothing
			spans = append(spans, span{name, begin, end})
		}
		tensors = append(tensors, &Tensor{
			Name:   name,
			Path:   path,
			Member: name,
			DType:  dt,
			Shape:  shape,
			Descr:  e.DType,
			data:   dataRef{open: open, offset: dataStart + begin, size: nbytes},
		})
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].begin < spans[j].begin })
	for i := 1; i < len(spans); i++ {
		if a, b := spans[i-1], spans[i]; b.begin < a.end {
			return fail("tensors %q [%d, %d) and %q [%d, %d) overlap", a.name, a.begin, a.end, b.name, b.begin, b.end)
		}
	}
	return tensors, nil
}
