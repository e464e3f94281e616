package loaders

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/graphdiff/graphdiff/internal/parallel"
)

// A run of thousands of small .npy files costs, above all, opening them.
// Load opens each file to read its header, and a comparison opens it again
// to read its data. LoadDeferred lists the .npy files of a directory by
// name only, and Resolve, called on the entries of one step just before
// they are compared, opens each file once: a small file (up to heldMax
// bytes) is read whole, header and data in one read, and its data is held
// in memory until Release; a larger one has its header read and the
// descriptor kept for the read (or mapping) of its data.
//
// The name, step and kind of an .npy file come from its path, so runs can
// be paired before any file is opened; containers (.npz, .safetensors,
// torch.save) name their tensors inside and are opened when listed, as
// are files a manifest says something about.

// heldMax is the largest .npy file Resolve reads whole and holds: 64 KiB,
// 16,384 float32 values, far below the size from which a comparison maps
// data instead of reading it (1 MiB).
const heldMax = 64 << 10

// heldBudget is the most bytes one Resolve call holds: a step (or a part
// of one) of more small files than that has the rest read when compared.
// A comparison holds a few such calls' worth at a time (the part being
// compared, the next one, read meanwhile, and the previous step's
// parameters, kept for the updates), well within its memory bound.
const heldBudget = 32 << 20

// keptMax is the most descriptors one Resolve call keeps open, from the
// read of a large file's header to the read of its data (so that it too is
// opened once). A process starts with room for 64 descriptors; each
// doubling of that table past it waits for an RCU grace period in Linux
// (fs/file.c, expand_fdtable), which costs more than opening a few
// hundred files again (bench/README.md).
const keptMax = 32

// deferral is what the deferred entries of one load need to be read
// besides their files (the tensors' Paths), shared by all of them: the
// options to read them with, and what reading them has shown of their
// sizes.
type deferral struct {
	opts Options
	// heldGuess is the capacity of a held buffer that the file of the run
	// last read whole (after fstat) did not fill: the next file is read
	// into one as large without asking its size (holdWithoutStat). A
	// run's small files are mostly of a few sizes, the same at every
	// step. 0 until one is held.
	heldGuess atomic.Int64
}

// LoadDeferred is Load, except that the .npy files of a directory that no
// manifest entry names are listed by their paths only: their entries are
// Deferred, with the entry's name, step, kind and file set and the
// tensor's description empty, until Resolve reads them (their errors come
// from Resolve, not in Run.Errors). A single .npy file given as the run is
// read as Resolve reads it, at once; containers as Load reads them.
func LoadDeferred(root string, opts Options) (*Run, error) {
	return load(root, opts, true)
}

// Deferred reports whether the entry's file has not been read yet (see
// LoadDeferred).
func (e *Entry) Deferred() bool { return e.deferred != nil }

// Resolve reads the files of the deferred entries among es, several at a
// time, each opened once: a small file's data is held in memory until
// Release, within heldBudget bytes; a larger file's descriptor is kept
// for the first read of its data, for up to keptMax files (Release closes
// it if no read took it). It returns one error per entry (nil
// where the entry was read, or was not deferred): the error, an *Error
// naming the file, is what Load would have reported for the file, and
// the entry stays Deferred.
func Resolve(es []*Entry) []error {
	errs := make([]error, len(es))
	var held, kept atomic.Int64
	parallel.For(len(es), runtime.GOMAXPROCS(0)*openersPerCPU, func(i int) {
		e := es[i]
		if e.deferred == nil {
			return
		}
		var t Tensor // the entry stays as it is if its file cannot be read
		if err := readNPYOnce(&t, e.Tensor.Path, e.deferred, &held, &kept); err != nil {
			errs[i] = err
			return
		}
		t.Name = e.Tensor.Name
		*e.Tensor, e.deferred = t, nil // in place: one Tensor per entry
	})
	return errs
}

// Held reports whether the entry's data is held in memory (see Resolve).
func (e *Entry) Held() bool { return e.Tensor != nil && e.data.heldBytes() != nil }

// Release drops the data a resolved entry holds in memory, and closes the
// descriptor kept for its first read if no read took it; later reads open
// its file.
func (e *Entry) Release() {
	if e.Tensor == nil {
		return
	}
	if e.data.held != nil {
		if b := e.data.held.Swap(nil); b != nil {
			recycleHeld(*b)
		}
	}
	if f := e.data.takeKept(); f != nil {
		f.Close()
	}
}

// readNPYOnce reads the .npy file at path into t through one descriptor,
// as d says: whole when it is small and held has room; its header only
// otherwise, keeping the descriptor open for the read of the data while
// kept is under keptMax (a later read opens the file again, as OpenFile's
// tensors do).
func readNPYOnce(t *Tensor, path string, d *deferral, held, kept *atomic.Int64) error {
	opts := d.opts
	f, err := openData(path)
	if err != nil {
		return &Error{Path: path, Err: unwrapPathError(err)}
	}
	if holdWithoutStat(t, f, path, d, held) {
		return nil
	}
	size, dir, err := f.stat()
	switch {
	case err != nil:
		f.Close()
		return &Error{Path: path, Err: unwrapPathError(err)}
	case dir:
		f.Close()
		return &Error{Path: path, Err: errors.New("is a directory")}
	}
	var whole []byte // the file, when it is held
	if size <= heldMax && held.Add(size) <= heldBudget {
		buf := heldBuffer(int(size))
		n, err := f.ReadAt(buf, 0)
		f.Close()
		if err != nil && err != io.EOF {
			recycleHeld(buf)
			return &Error{Path: path, Err: unwrapPathError(err)}
		}
		// n < size: the file shrank since its size was read; the header
		// check says what is missing
		whole, size = buf[:n], int64(n)
		if c := heldCap(n + 1); c <= heldMax {
			d.heldGuess.Store(int64(c))
		}
	}
	if whole != nil {
		err = describeHeldNPY(t, whole, path, opts)
	} else {
		err = describeNPY(t, f, 0, size, path, "", opts)
	}
	if err != nil {
		if whole == nil {
			f.Close()
		}
		return err
	}
	switch {
	case whole != nil:
		hold(t, path, whole)
		return nil
	case kept.Add(1) <= keptMax:
		t.data.kept = new(atomic.Pointer[dataFile])
		t.data.kept.Store(f)
	default:
		f.Close()
	}
	t.data.file = path // in place in the file: opened through it when read again (dataRef.opener)
	return nil
}

// hold makes whole, the .npy file at path read into a held buffer, the
// data of t, described from it: read in place until Release, then from
// the file again (dataRef.opener).
func hold(t *Tensor, path string, whole []byte) {
	t.data.file = path
	t.data.held = new(atomic.Pointer[[]byte])
	t.data.held.Store(&whole)
}

// heldCap is the capacity of the held buffer for n bytes: n rounded up to
// heldClass.
func heldCap(n int) int { return (n + heldClass - 1) / heldClass * heldClass }

// holdWithoutStat reads the .npy file f whole into a held buffer of
// d.heldGuess bytes with one read, and describes t from it with d.opts: a read of a
// regular file returns less than asked only at the file's end, so a
// buffer not filled holds the whole file, and the fstat that would ask
// its size is spared (one system call of four per small file). It holds
// nothing and reports false, to go the way of fstat, where it cannot
// tell: no guess yet, held over heldBudget, a failed read (a directory,
// or a named pipe) or a full buffer (a larger file), or a header that
// does not describe the bytes read (the fstat way then says why, as for
// any file). A file smaller than the guess is copied into a buffer of its
// own class, which is all that stays held.
func holdWithoutStat(t *Tensor, f *dataFile, path string, d *deferral, held *atomic.Int64) bool {
	c := int(d.heldGuess.Load())
	if c == 0 {
		return false
	}
	buf := heldBuffer(c)
	n, err := f.readOnce(buf, 0)
	if err != nil || n >= c {
		recycleHeld(buf)
		return false
	}
	whole := buf[:n]
	if heldCap(n) < c {
		whole = heldBuffer(n)
		copy(whole, buf)
		recycleHeld(buf)
	}
	if held.Add(int64(n)) > heldBudget || describeHeldNPY(t, whole, path, d.opts) != nil {
		held.Add(-int64(n))
		recycleHeld(whole)
		return false
	}
	f.Close()
	hold(t, path, whole)
	return true
}

// Held buffers are recycled: Release hands a held file's buffer to the
// next Resolve, which reads a file of about its size into it, sparing the
// zeroing of a new buffer and the faults of its pages (heldClass,
// bench/README.md). A buffer is reused only once its entry is released, and
// nothing may keep the slice HeldBytes or HeldFloat32 gave past Release.
// In a test binary (testing.Testing) a recycled buffer is overwritten with
// 0xFF bytes, so that a read after Release sees NaNs and the comparison
// that made it differs: every test of a package that compares deferred
// runs checks that nothing reads released data, with nothing to set.

// heldClass is the step of held buffers' capacities: a buffer serves a
// file up to heldClass - 1 bytes smaller than the file it was made for.
const heldClass = 512

// heldPools keep released buffers by capacity / heldClass (sync.Pool: the
// collector frees what stays unused).
var heldPools [heldMax/heldClass + 1]sync.Pool

// heldBuffer returns a buffer of size bytes to hold a file in, recycled
// where one of its class was released.
func heldBuffer(size int) []byte {
	capacity := heldCap(size)
	if p, _ := heldPools[capacity/heldClass].Get().(*[]byte); p != nil {
		return (*p)[:size]
	}
	return make([]byte, size, capacity)
}

// recycleHeld takes back a buffer heldBuffer gave.
func recycleHeld(b []byte) {
	c := cap(b) / heldClass
	if cap(b)%heldClass != 0 || c >= len(heldPools) {
		return
	}
	b = b[:cap(b)]
	if testing.Testing() {
		copy(b, poison())
	}
	heldPools[c].Put(&b)
}

// poison is what a recycled buffer is overwritten with in a test binary.
var poison = sync.OnceValue(func() []byte { return bytes.Repeat([]byte{0xFF}, heldMax) })
