package loaders

import (
	"sync"
)

// Mapper hands out ranges of one tensor's data as read-only memory maps of
// its file, through one descriptor: the pieces of a large tensor that a
// comparison reads in parallel open the file once. Its methods may be
// called from several goroutines; Close once all the maps it gave are
// released.
//
// Data not yet in the page cache is read in first, in order, by a
// goroutine of the Mapper's own (readThrough, Linux only), and a range is
// mapped once that reading has passed its end: the pieces are compared as
// they arrive. On Linux, pages that a populating mmap reads from disk are
// cached in 4 KiB folios and stay so, and every later comparison of the
// file, warm, then maps 4 KiB pages, which is what costs
// (bench/README.md); pages read by readahead are cached in large folios,
// as a second read of any file finds them.
type Mapper struct {
	t *Tensor
	f *dataFile

	mu   sync.Mutex
	cond *sync.Cond
	// ready is the file offset up to which the data has been read in; the
	// data's end when nothing is left to read.
	ready int64
	// asked is the largest offset a map has started at: the reading stays
	// within ahead of it.
	asked int64
	// piece is how many bytes the reading reads at a time (readThroughPiece)
	// and ahead how far it may go past asked (readAhead); tests make them
	// small.
	piece, ahead int64
	stopped      bool          // Close was called
	done         chan struct{} // closed when the reading goroutine returns; nil without one
}

// NewMapper opens the tensor's file for mapping. It needs Mappable.
func (t *Tensor) NewMapper() (*Mapper, error) {
	return t.newMapper(readThroughPiece, readAhead)
}

// newMapper is NewMapper, reading piece bytes at a time at most ahead bytes
// past the last map asked for.
func (t *Tensor) newMapper(piece, ahead int64) (*Mapper, error) {
	if !t.Mappable() {
		return nil, t.errorf("data not in place in a file")
	}
	f := t.data.takeKept()
	if f == nil {
		var err error
		if f, err = openData(t.data.file); err != nil {
			return nil, t.errorf("mapping data: %w", unwrapPathError(err))
		}
	}
	m := &Mapper{t: t, f: f, piece: piece, ahead: ahead}
	m.cond = sync.NewCond(&m.mu)
	start, end := t.data.offset, t.data.offset+t.data.size
	m.ready, m.asked = end, start
	if !cached(f, start, t.data.size) {
		m.ready = start
		m.done = make(chan struct{})
		go func() {
			defer close(m.done)
			readThrough(f, start, t.data.size, m.piece, m.isStopped, m.setReady)
			m.setReady(end) // all read, or what is left faults in
		}()
	}
	return m, nil
}

// readThroughPiece is the most bytes one sendfile call of readThrough
// asks for, and the range whose caching it checks at once: the
// granularity at which mapped pieces wait for the reading.
const readThroughPiece = 8 << 20

func (m *Mapper) isStopped() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.stopped
}

// setReady records that the data before offset end has been read in, then
// waits while the reading is more than ahead past the last map asked for:
// pages read too far ahead could be evicted before they are compared.
func (m *Mapper) setReady(end int64) {
	m.mu.Lock()
	m.ready = max(m.ready, end)
	m.cond.Broadcast()
	for m.ready-m.asked > m.ahead && !m.stopped {
		m.cond.Wait()
	}
	m.mu.Unlock()
}

// readAhead is how far past the last map asked for the reading of data not
// in the page cache may go: several chunks of a comparison (at most
// 32 MiB each), few enough to stay cached until they are compared.
const readAhead = 256 << 20

// waitReady records a map asked for from file offset start and waits
// until the data before offset end has been read in. A map longer than
// ahead (a whole tensor of more than 256 MiB, as the update measurement
// maps) counts as asked from end − ahead: the reading must reach its end,
// and would otherwise stop ahead bytes past start and wait for a map that
// never comes.
func (m *Mapper) waitReady(start, end int64) {
	m.mu.Lock()
	if a := max(start, end-m.ahead); a > m.asked {
		m.asked = a
		m.cond.Broadcast()
	}
	for m.ready < end && !m.stopped {
		m.cond.Wait()
	}
	m.mu.Unlock()
}

// Close stops the reading and closes the file; maps already given stay
// valid until released.
func (m *Mapper) Close() error {
	m.mu.Lock()
	m.stopped = true
	m.mu.Unlock()
	m.cond.Broadcast()
	if m.done != nil {
		<-m.done
	}
	return m.f.Close()
}

// Float32 returns count float32 elements from element first as a slice
// over a read-only memory map, and the function that releases it. The
// tensor must be Float32Native; the slice must not be used after release.
func (m *Mapper) Float32(first, count int64) ([]float32, func(), error) {
	if !m.t.Float32Native() {
		return nil, nil, m.t.errorf("not float32 data that can be mapped in place")
	}
	b, release, err := m.Bytes(first, count)
	if err != nil || count == 0 {
		return nil, release, err
	}
	v, _ := native32(b, false) // Float32Native: little-endian, and aligned in a page-aligned map
	return v, release, nil
}

// Bytes returns the raw bytes of count elements from element first, as a
// read-only memory map, and the function that releases it.
func (m *Mapper) Bytes(first, count int64) ([]byte, func(), error) {
	t := m.t
	if !t.inRange(first, count) {
		return nil, nil, t.errorf("element range [%d, %d) outside %d elements", first, first+count, t.Len())
	}
	es := int64(t.DType.Size())
	off, n := t.data.offset+es*first, es*count
	m.waitReady(off, off+n)
	if w := t.data.whole; w != nil {
		if b, release, ok := w.slice(t, m.f, off, n); ok {
			return b, release, nil
		}
	}
	b, release, err := mapRange(m.f, off, n)
	if err != nil {
		return nil, nil, t.errorf("mapping data: %w", unwrapPathError(err))
	}
	return b, release, nil
}
