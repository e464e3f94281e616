package loaders

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"sync/atomic"

	"github.com/graphdiff/graphdiff/internal/parallel"
)

// A run of thousands of small .npy files costs, above all, opening them.
// Load opens each file to read its header, and a comparison opens it again
// to read its data. LoadDeferred lists the .npy files of a directory by
// name only, and Resolve, called on the entries of one step just before
// they are compared, opens each file once: a small file (up to heldMax
// bytes) is read whole, header and data in one read, and its data is held
// in memory until Release; a larger one has its header read and its data
// read (or mapped) when compared, as after Load.
//
// The name, step and kind of an .npy file come from its path, so runs can
// be paired before any file is opened; containers (.npz, .safetensors,
// torch.save) name their tensors inside and are opened when listed, as
// are files a manifest says something about.

// heldMax is the largest .npy file Resolve reads whole and holds: 64 KiB,
// 16,384 float32 values, far below the size from which a comparison maps
// data instead of reading it (1 MiB).
const heldMax = 64 << 10

// heldBudget is the most bytes one Resolve call holds: a step of more
// small files than that has the rest read when compared.
const heldBudget = 64 << 20

// deferral is what a deferred entry needs to be read: its file and the
// options to read it with.
type deferral struct {
	full string
	opts Options
}

// heldBytes are a small file's bytes, read with its header and kept until
// released.
type heldBytes struct{ b atomic.Pointer[[]byte] }

// LoadDeferred is Load, except that the .npy files found in a directory
// that no manifest entry names are listed by their paths only: their
// entries are Deferred, with the name, step, kind and file of the entry
// set and the tensor's description empty, until Resolve reads them. A
// single file, and containers, are read as Load reads them. Errors of
// deferred files come from Resolve, not in Run.Errors.
func LoadDeferred(root string, opts Options) (*Run, error) {
	return load(root, opts, true)
}

// Deferred reports whether the entry's file has not been read yet (see
// LoadDeferred).
func (e *Entry) Deferred() bool { return e.deferred != nil }

// Resolve reads the files of the deferred entries among es, several at a
// time, each opened once: a small file's data is held in memory until
// Release, within heldBudget bytes. It returns one error per entry (nil
// where the entry was read, or was not deferred): the error, an *Error
// naming the file, is what Load would have reported for the file, and
// the entry stays Deferred.
func Resolve(es []*Entry) []error {
	errs := make([]error, len(es))
	var held atomic.Int64
	parallel.For(len(es), runtime.GOMAXPROCS(0)*openersPerCPU, func(i int) {
		e := es[i]
		if e.deferred == nil {
			return
		}
		t, err := readNPYOnce(e.deferred.full, e.deferred.opts, &held)
		if err != nil {
			errs[i] = err
			return
		}
		t.Name = e.Tensor.Name
		e.Tensor, e.deferred = t, nil
	})
	return errs
}

// Release drops the data a resolved entry holds in memory; later reads
// open its file.
func (e *Entry) Release() {
	if e.Tensor != nil && e.data.held != nil {
		e.data.held.b.Store(nil)
	}
}

// readNPYOnce reads the .npy file at path through one descriptor: whole
// when it is small and held has room, its header only otherwise (the data
// is then read by a later open, as OpenFile's tensors are).
func readNPYOnce(path string, opts Options, held *atomic.Int64) (*Tensor, error) {
	f, err := openData(path)
	if err != nil {
		return nil, &Error{Path: path, Err: unwrapPathError(err)}
	}
	size, dir, err := f.stat()
	switch {
	case err != nil:
		f.Close()
		return nil, &Error{Path: path, Err: unwrapPathError(err)}
	case dir:
		f.Close()
		return nil, &Error{Path: path, Err: errors.New("is a directory")}
	case size > heldMax || held.Add(size) > heldBudget:
		ts, _, err := listOpen(f, size, path, FormatNPY, opts)
		if err != nil {
			return nil, err
		}
		return ts[0], nil
	}
	buf := make([]byte, size)
	n, err := f.ReadAt(buf, 0)
	f.Close()
	if err != nil && err != io.EOF {
		return nil, &Error{Path: path, Err: unwrapPathError(err)}
	}
	// n < size: the file shrank since its size was read; the header check
	// says what is missing
	hb := &heldBytes{}
	whole := buf[:n]
	hb.b.Store(&whole)
	open := func() (io.ReaderAt, io.Closer, error) {
		if b := hb.b.Load(); b != nil {
			return bytes.NewReader(*b), io.NopCloser(nil), nil
		}
		return fileOpener(path)()
	}
	t, err := readNPY(open, 0, int64(n), path, "", opts)
	if err != nil {
		return nil, err
	}
	t.data.file, t.data.held = path, hb // in place in the file: can be mapped
	return t, nil
}
