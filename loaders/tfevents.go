package loaders

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"strings"
)

// TensorBoard event files are TFRecord files: a sequence of records
//
//	uint64 length | uint32 masked CRC32C of length | data | uint32 masked CRC32C of data
//
// (little-endian; masked crc = ((crc >> 15) | (crc << 17)) + 0xa282ead8),
// each holding a serialized tensorflow.Event protocol buffer. graphdiff
// reads the few fields a scalar needs with its own small protobuf decoder
// rather than a protobuf dependency:
//
//	Event:        2 step (int64), 5 summary (Summary)
//	Summary:      1 value (repeated Value)
//	Value:        1 tag (string), 2 simple_value (float), 8 tensor (TensorProto)
//	TensorProto:  1 dtype (DT_FLOAT 1, DT_DOUBLE 2), 4 tensor_content (bytes),
//	              5 float_val (packed float), 6 double_val (packed double)
//
// simple_value is what torch.utils.tensorboard.SummaryWriter writes;
// one-element float tensors are what TensorFlow 2 and tensorboardX write.
// Both CRCs of every record are checked. A record cut short at the end of
// a file (a run still writing) ends the read with a note, not an error.

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// maskedCRC returns TFRecord's masked CRC32C of data.
func maskedCRC(data []byte) uint32 {
	c := crc32.Checksum(data, castagnoli)
	return ((c >> 15) | (c << 17)) + 0xa282ead8
}

// maxRecord caps one record: scalar events are tiny; graph definitions can
// be large but graphdiff skips them.
const maxRecord = 256 << 20

// tfScalar is one scalar read from an event file.
type tfScalar struct {
	tag   string
	step  int64
	value float64
}

// readTFEventsCurve reads the scalar tag (or the first tag containing
// "loss") from event files, in file order.
func readTFEventsCurve(files []string, source, tag string) (*Curve, error) {
	var all []tfScalar
	var notes []string
	for _, file := range files {
		s, note, err := readTFEvents(file)
		if err != nil {
			return nil, err
		}
		if note != "" {
			notes = append(notes, note)
		}
		all = append(all, s...)
	}
	// why a tag may be missing: the notes say which records were cut
	because := ""
	if len(notes) > 0 {
		because = "; " + strings.Join(notes, "; ")
	}
	var tags []string
	seen := map[string]bool{}
	for _, s := range all {
		if !seen[s.tag] {
			seen[s.tag] = true
			tags = append(tags, s.tag)
		}
	}
	if tag == "" {
		for _, t := range tags {
			if strings.Contains(strings.ToLower(t), "loss") {
				tag = t
				break
			}
		}
		if tag == "" {
			return nil, &Error{Path: source, Err: fmt.Errorf("no scalar tag with \"loss\" in its name (tags: %s); choose one with --tag%s", listOrNone(tags), because)}
		}
	} else if !seen[tag] {
		return nil, &Error{Path: source, Err: fmt.Errorf("no scalar tag %q (tags: %s)%s", tag, listOrNone(tags), because)}
	}
	c := &Curve{Source: fmt.Sprintf("%s (tag %q)", source, tag), Notes: notes}
	for _, s := range all {
		if s.tag == tag {
			c.Steps = append(c.Steps, s.step)
			c.Values = append(c.Values, s.value)
		}
	}
	return c.normalize(), nil
}

func listOrNone(xs []string) string {
	if len(xs) == 0 {
		return "none"
	}
	return strings.Join(xs, ", ")
}

// readTFEvents reads every scalar of one event file.
func readTFEvents(path string) ([]tfScalar, string, error) {
	f, err := openRegular(path)
	if err != nil {
		return nil, "", &Error{Path: path, Err: unwrapPathError(err)}
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, "", &Error{Path: path, Err: err}
	}
	return parseTFEvents(f, st.Size(), path)
}

// parseTFEvents reads the records of an event file of the given size.
func parseTFEvents(r io.Reader, size int64, path string) ([]tfScalar, string, error) {
	fail := func(off int64, format string, args ...any) ([]tfScalar, string, error) {
		return nil, "", &Error{Path: path, Err: fmt.Errorf("record at byte %d: %s", off, fmt.Sprintf(format, args...))}
	}
	var out []tfScalar
	var head [12]byte
	var off int64
	buf := make([]byte, 0, 4096)
	for {
		n, err := io.ReadFull(r, head[:])
		if n == 0 && errors.Is(err, io.EOF) {
			return out, "", nil
		}
		if err != nil {
			return out, fmt.Sprintf("%s: last record cut short at byte %d (file still being written?): ignored", path, off), nil
		}
		length := binary.LittleEndian.Uint64(head[:8])
		if maskedCRC(head[:8]) != binary.LittleEndian.Uint32(head[8:]) {
			return fail(off, "length checksum mismatch: not a TensorBoard event file, or corrupt")
		}
		if length > maxRecord {
			return fail(off, "length %d exceeds the %d-byte limit", length, maxRecord)
		}
		if int64(length) > size-off-16 {
			return out, fmt.Sprintf("%s: last record cut short at byte %d (file still being written?): ignored", path, off), nil
		}
		if cap(buf) < int(length)+4 {
			buf = make([]byte, int(length)+4)
		}
		data := buf[:int(length)+4]
		if _, err := io.ReadFull(r, data); err != nil {
			return out, fmt.Sprintf("%s: last record cut short at byte %d (file still being written?): ignored", path, off), nil
		}
		if maskedCRC(data[:length]) != binary.LittleEndian.Uint32(data[length:]) {
			return fail(off, "data checksum mismatch: corrupt event file")
		}
		scalars, err := decodeEvent(data[:length])
		if err != nil {
			return fail(off, "bad event: %v", err)
		}
		out = append(out, scalars...)
		off += 16 + int64(length)
	}
}

// pbField is one field of a protocol buffer message.
type pbField struct {
	num   int
	wire  int
	value uint64 // varint, fixed32, fixed64
	bytes []byte // length-delimited
}

// pbFields splits a protocol buffer message into its fields.
func pbFields(b []byte) ([]pbField, error) {
	var out []pbField
	for len(b) > 0 {
		key, n := binary.Uvarint(b)
		if n <= 0 {
			return nil, errors.New("bad field key")
		}
		b = b[n:]
		f := pbField{num: int(key >> 3), wire: int(key & 7)}
		switch f.wire {
		case 0:
			v, n := binary.Uvarint(b)
			if n <= 0 {
				return nil, errors.New("bad varint")
			}
			f.value, b = v, b[n:]
		case 1:
			if len(b) < 8 {
				return nil, errors.New("truncated fixed64")
			}
			f.value, b = binary.LittleEndian.Uint64(b), b[8:]
		case 5:
			if len(b) < 4 {
				return nil, errors.New("truncated fixed32")
			}
			f.value, b = uint64(binary.LittleEndian.Uint32(b)), b[4:]
		case 2:
			l, n := binary.Uvarint(b)
			if n <= 0 || l > uint64(len(b)-n) {
				return nil, errors.New("bad length")
			}
			f.bytes, b = b[n:n+int(l)], b[n+int(l):]
		default:
			return nil, fmt.Errorf("unsupported wire type %d", f.wire)
		}
		out = append(out, f)
	}
	return out, nil
}

// decodeEvent returns the scalars of one Event message.
func decodeEvent(b []byte) ([]tfScalar, error) {
	fields, err := pbFields(b)
	if err != nil {
		return nil, err
	}
	var step int64
	var summaries [][]byte
	for _, f := range fields {
		switch {
		case f.num == 2 && f.wire == 0:
			step = int64(f.value)
		case f.num == 5 && f.wire == 2:
			summaries = append(summaries, f.bytes)
		}
	}
	var out []tfScalar
	for _, s := range summaries {
		values, err := pbFields(s)
		if err != nil {
			return nil, fmt.Errorf("summary: %w", err)
		}
		for _, v := range values {
			if v.num != 1 || v.wire != 2 {
				continue
			}
			sc, ok, err := decodeValue(v.bytes)
			if err != nil {
				return nil, fmt.Errorf("summary value: %w", err)
			}
			if ok {
				sc.step = step
				out = append(out, sc)
			}
		}
	}
	return out, nil
}

// decodeValue reads a Summary.Value that holds a scalar.
func decodeValue(b []byte) (tfScalar, bool, error) {
	fields, err := pbFields(b)
	if err != nil {
		return tfScalar{}, false, err
	}
	var s tfScalar
	found := false
	for _, f := range fields {
		switch {
		case f.num == 1 && f.wire == 2:
			s.tag = string(f.bytes)
		case f.num == 2 && f.wire == 5:
			s.value, found = float64(math.Float32frombits(uint32(f.value))), true
		case f.num == 8 && f.wire == 2:
			if v, ok := scalarTensor(f.bytes); ok {
				s.value, found = v, true
			}
		}
	}
	return s, found && s.tag != "", nil
}

// scalarTensor reads a one-element float or double TensorProto.
func scalarTensor(b []byte) (float64, bool) {
	fields, err := pbFields(b)
	if err != nil {
		return 0, false
	}
	dtype := uint64(0)
	var vals []float64
	var content []byte
	for _, f := range fields {
		switch {
		case f.num == 1 && f.wire == 0:
			dtype = f.value
		case f.num == 4 && f.wire == 2:
			content = f.bytes
		case f.num == 5 && f.wire == 2: // packed float_val
			for p := f.bytes; len(p) >= 4; p = p[4:] {
				vals = append(vals, float64(math.Float32frombits(binary.LittleEndian.Uint32(p))))
			}
		case f.num == 5 && f.wire == 5:
			vals = append(vals, float64(math.Float32frombits(uint32(f.value))))
		case f.num == 6 && f.wire == 2: // packed double_val
			for p := f.bytes; len(p) >= 8; p = p[8:] {
				vals = append(vals, math.Float64frombits(binary.LittleEndian.Uint64(p)))
			}
		case f.num == 6 && f.wire == 1:
			vals = append(vals, math.Float64frombits(f.value))
		}
	}
	switch {
	case len(vals) == 1:
		return vals[0], true
	case dtype == 1 && len(content) == 4:
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(content))), true
	case dtype == 2 && len(content) == 8:
		return math.Float64frombits(binary.LittleEndian.Uint64(content)), true
	}
	return 0, false
}
