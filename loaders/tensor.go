package loaders

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
)

// Tensor is one array found in a file: its description and where its bytes
// are. Opening a Tensor reads nothing; Open and OpenRange stream its data.
type Tensor struct {
	// Name is the array's name inside its file: the member name of an .npz
	// (without ".npy") or a .safetensors key; for an .npy file, the file's
	// name without extension.
	Name string
	// Path is the file that holds the array.
	Path string
	// Member is the .npz member or .safetensors key, "" for an .npy file.
	Member string
	// DType is how the stored bytes are decoded.
	DType DType
	// Original is the dtype the training program used when it differs from
	// DType (a bfloat16 tensor upcast to float32 before saving, as a manifest
	// says); Invalid when they are the same.
	Original DType
	// Shape is the array's shape; empty for a 0-d array.
	Shape []int
	// FortranOrder is true when the bytes are in column-major order. Element
	// indexes that graphdiff reports are always in C (row-major) order.
	FortranOrder bool
	// BigEndian is true when multi-byte elements are stored big-endian.
	BigEndian bool
	// Descr is the element type as the file spells it ("<f4", "<V2", "BF16").
	Descr string
	// Order is the tensor's place in the dict of tensors that saved it
	// (a state_dict's order, the model's modules in turn), 0 where none
	// did.
	Order int
	// Moment is how the tensor carries the gradient when it is an
	// optimizer's state (torch.save of an optimizer's state_dict, whose
	// param groups state the rule); the zero Moment otherwise.
	Moment Moment
	// Hyper is true for a tensor an optimizer's param group holds (torch.save
	// of an optimizer's state_dict: a capturable optimizer's lr, say): a
	// hyperparameter, which the other run may hold as a Python number that
	// no loader reads as a tensor.
	Hyper bool

	data dataRef
}

// dataRef locates a tensor's bytes: a byte range of a file that can be read
// at any offset, or, for compressed .npz members, a stream.
type dataRef struct {
	// open opens the data's file or container; nil where file says which
	// file (see opener)
	open   opener
	offset int64 // of the first data byte, when stream is nil
	size   int64 // bytes of data
	// stream opens a reader positioned at the first data byte; set for
	// members that can only be read from the start.
	stream func() (io.ReadCloser, error)
	// file is the path of the file holding the data when it can be
	// memory-mapped (a file on disk, the bytes in place).
	file string
	// held are the file's bytes (the whole file: offset applies), read
	// with the header and kept until released (see Resolve); nil when
	// they were not held.
	held *atomic.Pointer[[]byte]
	// kept is the descriptor the header was read through, kept open for
	// the first read of the data (Open, OpenRange or NewMapper take it);
	// nil when none was kept.
	kept *atomic.Pointer[dataFile]
	// whole is the data's map kept whole (Entry.KeepMaps); nil when
	// pieces are mapped one by one.
	whole *wholeMap
}

// opener returns how to open the data: open, or the file's own opener
// where only file is set (a resolved .npy file: 100,000 pairs would hold
// 200,000 closures, each one more object for the collector to mark).
func (d *dataRef) opener() opener {
	if d.open == nil && d.file != "" {
		return fileOpener(d.file)
	}
	return d.open
}

// takeKept returns the descriptor kept open for the first read of the
// data, nil when there is none (any more).
func (d *dataRef) takeKept() *dataFile {
	if d.kept == nil {
		return nil
	}
	return d.kept.Swap(nil)
}

// heldBytes returns the file's bytes when they are held, nil otherwise.
func (d *dataRef) heldBytes() []byte {
	if d.held == nil {
		return nil
	}
	if b := d.held.Load(); b != nil {
		return *b
	}
	return nil
}

// opener opens the container file for random access.
type opener func() (io.ReaderAt, io.Closer, error)

// Len returns the number of elements: the product of the shape, 1 for a 0-d
// array.
func (t *Tensor) Len() int64 {
	n := int64(1)
	for _, d := range t.Shape {
		n *= int64(d)
	}
	return n
}

// Size returns the size of the data in bytes.
func (t *Tensor) Size() int64 { return t.data.size }

// RandomAccess reports whether OpenRange can read any part of the data
// without reading what comes before it (false for compressed .npz members).
func (t *Tensor) RandomAccess() bool { return t.data.stream == nil }

// Open returns a Reader over all elements, in storage order.
func (t *Tensor) Open() (*Reader, error) {
	if t.data.stream != nil {
		rc, err := t.data.stream()
		if err != nil {
			return nil, t.errorf("%w", err)
		}
		r := t.newReader(rc, rc, t.data.size)
		r.checkEnd = true
		return r, nil
	}
	return t.OpenRange(0, t.Len())
}

// OpenRange returns a Reader over count elements starting at element first,
// in storage order. It needs RandomAccess.
func (t *Tensor) OpenRange(first, count int64) (*Reader, error) {
	if !t.RandomAccess() {
		return nil, t.errorf("compressed member can only be read from the start")
	}
	if !t.inRange(first, count) {
		return nil, t.errorf("element range [%d, %d) outside %d elements", first, first+count, t.Len())
	}
	var ra io.ReaderAt
	var closer io.Closer
	if b := t.data.heldBytes(); b != nil {
		ra, closer = bytes.NewReader(b), io.NopCloser(nil)
	} else if f := t.data.takeKept(); f != nil {
		ra, closer = f, f
	} else {
		var err error
		if ra, closer, err = t.data.opener()(); err != nil {
			return nil, t.errorf("%w", err)
		}
	}
	es := int64(t.DType.Size())
	sr := io.NewSectionReader(ra, t.data.offset+first*es, count*es)
	return t.newReader(sr, closer, count*es), nil
}

func (t *Tensor) newReader(r io.Reader, c io.Closer, size int64) *Reader {
	return &Reader{t: t, r: r, c: c, left: size}
}

// errorf returns an *Error naming the tensor's file and member.
func (t *Tensor) errorf(format string, args ...any) error {
	return &Error{Path: t.Path, Member: t.Member, Err: fmt.Errorf(format, args...)}
}

// readerChunk is how many bytes a Reader asks its source for at a time.
const readerChunk = 1 << 20

// Reader decodes a tensor's elements into float64 values, a buffer at a
// time. It is not safe for concurrent use; open one Reader per goroutine.
type Reader struct {
	t      *Tensor
	r      io.Reader
	c      io.Closer
	left   int64 // bytes not yet read
	raw    []byte
	pooled *[]byte // raw's pool entry, if it came from smallRawPool
	done   int64   // bytes read so far
	// checkEnd asks for one more byte after the last element, so that a
	// compressed member that holds more than its header says, or fails its
	// checksum (verified at end of stream), is an error rather than ignored.
	checkEnd bool
}

// Read decodes the next elements into dst and returns how many float64
// values it wrote: one per element, or two (real, imaginary) for complex
// types. It returns io.EOF once all elements have been read. A source that
// ends early gives an error naming the file and how many bytes were missing.
func (r *Reader) Read(dst []float64) (int, error) {
	comps := r.t.DType.Components()
	raw, n, err := r.next(len(dst) / comps)
	if n == 0 {
		return 0, err
	}
	out := dst[:n*comps]
	decode(out, raw, r.t.DType, r.t.BigEndian)
	return len(out), err
}

// ReadBits64 reads the next elements of an 8-byte integer tensor (Int64,
// Uint64) into dst as their 64 bits, in native order, and returns how many
// it wrote: unlike Read, whose float64 values round integers beyond 2^53,
// it keeps every integer exact. It returns io.EOF once all elements have
// been read, and an error for other dtypes.
func (r *Reader) ReadBits64(dst []uint64) (int, error) {
	if r.t.DType != Int64 && r.t.DType != Uint64 {
		return 0, r.t.errorf("%s is not a 64-bit integer dtype", r.t.DType)
	}
	raw, n, err := r.next(len(dst))
	if n == 0 {
		return 0, err
	}
	var bo binary.ByteOrder = binary.LittleEndian
	if r.t.BigEndian {
		bo = binary.BigEndian
	}
	for i := range n {
		dst[i] = bo.Uint64(raw[8*i:])
	}
	return n, err
}

// next reads the raw bytes of up to max elements (fewer at the end, and no
// more than readerChunk bytes) and returns them with the element count;
// io.EOF when none are left.
func (r *Reader) next(max int) ([]byte, int, error) {
	if r.left == 0 {
		return nil, 0, io.EOF
	}
	es := int64(r.t.DType.Size())
	elems := min(int64(max), int64(readerChunk)/es, r.left/es)
	if elems <= 0 {
		return nil, 0, r.t.errorf("read buffer smaller than one element")
	}
	n := int(elems * es)
	if cap(r.raw) < n {
		// no bigger than what is left: small tensors get small buffers,
		// from a pool (a run may read thousands of them)
		r.release()
		if r.left <= smallRaw {
			r.pooled = smallRawPool.Get().(*[]byte)
			r.raw = *r.pooled
		} else {
			r.raw = make([]byte, min(int64(readerChunk), r.left))
		}
	}
	raw := r.raw[:n]
	if got, err := io.ReadFull(r.r, raw); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, 0, r.t.errorf("data ends after %d of %d bytes (file truncated or changed while reading)",
				r.done+int64(got), r.done+r.left)
		}
		return nil, 0, r.t.errorf("reading data: %w", err)
	}
	r.done += int64(n)
	r.left -= int64(n)
	if r.left == 0 && r.checkEnd {
		var one [1]byte
		switch m, err := io.ReadFull(r.r, one[:]); {
		case m > 0:
			return nil, 0, r.t.errorf("member holds more than the %d data bytes its header describes", r.done)
		case !errors.Is(err, io.EOF):
			return nil, 0, r.t.errorf("reading data: %w", err)
		}
	}
	return raw, int(elems), nil
}

// Close releases the file behind the Reader.
func (r *Reader) Close() error {
	r.release()
	if r.c == nil {
		return nil
	}
	return r.c.Close()
}

// smallRaw is the size of the pooled buffers of Readers with little to
// read.
const smallRaw = 64 << 10

var smallRawPool = sync.Pool{New: func() any { b := make([]byte, smallRaw); return &b }}

// release gives a pooled buffer back.
func (r *Reader) release() {
	if r.pooled != nil {
		smallRawPool.Put(r.pooled)
		r.pooled, r.raw = nil, nil
	}
}

// Error is a problem with one input: it names the file (and the member
// inside a container) and says what is wrong.
type Error struct {
	Path   string
	Member string
	Err    error
}

func (e *Error) Error() string {
	if e.Member != "" {
		member := e.Member
		if !isText(member) {
			member = strconv.Quote(member) // never raw bytes on a terminal
		}
		return fmt.Sprintf("%s: %s: %v", e.Path, member, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.Path, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Message returns the error without the path, for reports that show the
// path in a column of its own.
func (e *Error) Message() string {
	if e.Member != "" {
		return fmt.Sprintf("%s: %v", e.Member, e.Err)
	}
	return e.Err.Error()
}

// Index returns the multi-dimensional index of the element at storage
// position pos (the pos-th element read). For C order the last dimension
// varies fastest, for Fortran order the first; the index itself is the same
// logical position either way, as numpy's a[i, j, ...] names it.
func (t *Tensor) Index(pos int64) []int {
	idx := make([]int, len(t.Shape))
	for k := range t.Shape {
		d := len(t.Shape) - 1 - k // C order: peel the last dimension first
		if t.FortranOrder {
			d = k
		}
		n := int64(t.Shape[d])
		if n == 0 {
			return idx
		}
		idx[d] = int(pos % n)
		pos /= n
	}
	return idx
}

// CPosition returns the C-order (row-major) flat position of a
// multi-dimensional index, the position numpy's a.flatten() gives it.
func (t *Tensor) CPosition(idx []int) int64 {
	var pos int64
	for d, i := range idx {
		pos = pos*int64(t.Shape[d]) + int64(i)
	}
	return pos
}

// Float32Native reports whether the tensor's bytes are float32 values as
// this machine stores them (little-endian), in place in a file, so that
// Mapper.Float32 can hand them out without copying.
func (t *Tensor) Float32Native() bool {
	return t.DType == Float32 && !t.BigEndian && t.data.file != "" && t.data.stream == nil &&
		t.data.offset%4 == 0 && nativeLittleEndian
}

// Mappable reports whether the tensor's bytes lie in place in a file, so
// that a Mapper can hand them out without copying.
func (t *Tensor) Mappable() bool { return t.data.file != "" && t.data.stream == nil }

// DecodeFloat32 decodes len(dst) elements from raw bytes of this tensor
// (from Mapper.Bytes) into float32 values; the dtype must be Float32Exact.
func (t *Tensor) DecodeFloat32(dst []float32, raw []byte) {
	decode32(dst, raw, t.DType, t.BigEndian)
}

// Float32Exact reports whether every value of the dtype is a float32
// (float types up to 32 bits, and integers up to 16 bits), so that
// ReadFloat32 loses nothing.
func (d DType) Float32Exact() bool {
	switch d {
	case Bool, Int8, Uint8, Int16, Uint16, Float8E4M3FN, Float8E5M2, Float16, BFloat16, Float32:
		return true
	}
	return false
}

// ReadFloat32 is Read for dtypes whose values are all float32
// (Float32Exact): it decodes the next elements into dst, one value per
// element, and returns how many; io.EOF at the end.
func (r *Reader) ReadFloat32(dst []float32) (int, error) {
	if !r.t.DType.Float32Exact() {
		return 0, r.t.errorf("%s values are not all float32", r.t.DType)
	}
	raw, n, err := r.next(len(dst))
	if n == 0 {
		return 0, err
	}
	decode32(dst[:n], raw, r.t.DType, r.t.BigEndian)
	return n, err
}

// HeldBytes returns the raw bytes of count elements from element first
// when the tensor's file is held in memory (see Resolve), without copying
// them; ok is false when it is not held or the range lies outside the
// tensor. The bytes are shared: they must not be modified.
func (t *Tensor) HeldBytes(first, count int64) (b []byte, ok bool) {
	whole := t.data.heldBytes()
	if whole == nil || !t.inRange(first, count) {
		return nil, false
	}
	es := int64(t.DType.Size())
	off := t.data.offset + first*es
	if off+count*es > int64(len(whole)) {
		return nil, false
	}
	return whole[off : off+count*es : off+count*es], true
}

// HeldFloat32 is HeldBytes as float32 values, for float32 data stored as
// this machine stores it (little-endian) at an address aligned for it;
// ok is false otherwise.
func (t *Tensor) HeldFloat32(first, count int64) ([]float32, bool) {
	if t.DType != Float32 {
		return nil, false
	}
	if b, ok := t.HeldBytes(first, count); ok {
		return native32(b, t.BigEndian)
	}
	return nil, false
}

// inRange reports whether [first, first+count) is a range of the tensor's
// elements.
func (t *Tensor) inRange(first, count int64) bool {
	return first >= 0 && count >= 0 && first+count <= t.Len()
}

// Values decodes every element of t into float64 values (two per complex
// element: real, imaginary), through one Reader.
func (t *Tensor) Values() ([]float64, error) {
	r, err := t.Open()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	out := make([]float64, 0, t.Len())
	buf := make([]float64, 1<<16)
	for {
		n, err := r.Read(buf)
		out = append(out, buf[:n]...)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
	}
}
