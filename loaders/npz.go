package loaders

import (
	"archive/zip"
	"errors"
	"fmt"
	"io"
	"strings"
)

// An .npz file is a zip archive of .npy members, stored (np.savez) or
// deflated (np.savez_compressed). A stored member is read in place, at any
// offset; a deflated one is streamed from its start. A member's declared
// uncompressed size must equal what its .npy header implies, and reading
// one never yields more bytes than that, so a member that inflates beyond
// its declared size is an error, not an allocation. An archive that numpy
// would read otherwise than archive/zip does is refused whole (checkZip).

// readNPZ lists the tensors of the .npz archive that open opens. It returns
// the tensors it could read and one error per member it could not; a
// non-nil fatal error means the archive itself is unreadable.
func readNPZ(open opener, size int64, path string, opts Options) (tensors []*Tensor, errs []error, fatal error) {
	ra, closer, err := open()
	if err != nil {
		return nil, nil, &Error{Path: path, Err: err}
	}
	defer closer.Close()
	zr, err := zip.NewReader(ra, size)
	if err != nil {
		return nil, nil, &Error{Path: path, Err: fmt.Errorf("not a readable .npz (zip) archive: %w", err)}
	}
	if err := checkZip(ra, size, zr.File, "numpy"); err != nil {
		return nil, nil, &Error{Path: path, Err: err}
	}
	for i, f := range zr.File {
		if strings.HasSuffix(f.Name, "/") {
			continue // a directory entry holds no data
		}
		t, err := npzMember(open, size, f, i, path, opts)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		tensors = append(tensors, t)
	}
	return tensors, errs, nil
}

func npzMember(open opener, size int64, f *zip.File, index int, path string, opts Options) (*Tensor, error) {
	fail := func(format string, args ...any) error {
		return &Error{Path: path, Member: f.Name, Err: fmt.Errorf(format, args...)}
	}
	if err := checkName(f.Name); err != nil {
		return nil, fail("%v", err)
	}
	if !strings.HasSuffix(f.Name, ".npy") {
		return nil, fail("member is not an .npy array")
	}
	if f.Flags&0x1 != 0 {
		return nil, fail("member is encrypted")
	}
	usize := int64(f.UncompressedSize64)
	if usize < 0 {
		return nil, fail("member declares an impossible size")
	}
	var t *Tensor
	switch f.Method {
	case zip.Store:
		if f.CompressedSize64 != f.UncompressedSize64 {
			return nil, fail("stored member's compressed and uncompressed sizes differ")
		}
		off, err := f.DataOffset()
		if err != nil {
			return nil, fail("%w", err)
		}
		if off < 0 || usize > size-off {
			return nil, fail("member data runs past the end of the archive")
		}
		t, err = readNPY(open, off, usize, path, f.Name, opts)
		if err != nil {
			return nil, err
		}
	case zip.Deflate:
		rc, err := f.Open()
		if err != nil {
			return nil, fail("%w", err)
		}
		h, err := readNPYHeader(rc, usize)
		rc.Close()
		if err != nil {
			return nil, fail("%w", err)
		}
		t, err = npyTensor(h, usize, path, f.Name, opts)
		if err != nil {
			return nil, err
		}
		skip := h.DataOffset
		t.data = dataRef{size: usize - skip, stream: func() (io.ReadCloser, error) {
			return openNPZMember(open, size, index, f.Name, skip)
		}}
	default:
		return nil, fail("unsupported zip compression method %d", f.Method)
	}
	t.Name = strings.TrimSuffix(f.Name, ".npy")
	return t, nil
}

// openNPZMember reopens the archive and returns member index (checked by
// name) positioned skip bytes into its uncompressed data.
func openNPZMember(open opener, size int64, index int, name string, skip int64) (io.ReadCloser, error) {
	ra, closer, err := open()
	if err != nil {
		return nil, err
	}
	zr, err := zip.NewReader(ra, size)
	if err != nil {
		closer.Close()
		return nil, fmt.Errorf("archive changed since it was listed: %w", err)
	}
	if index >= len(zr.File) || zr.File[index].Name != name {
		closer.Close()
		return nil, errors.New("archive changed since it was listed")
	}
	rc, err := zr.File[index].Open()
	if err != nil {
		closer.Close()
		return nil, err
	}
	if _, err := io.CopyN(io.Discard, rc, skip); err != nil {
		rc.Close()
		closer.Close()
		return nil, fmt.Errorf("reading member header again: %w", err)
	}
	return struct {
		io.Reader
		io.Closer
	}{rc, closers{rc, closer}}, nil
}

// closers closes each of its members in order and returns the first error.
type closers []io.Closer

func (cs closers) Close() error {
	var first error
	for _, c := range cs {
		if err := c.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}
