//go:build linux || darwin || freebsd

package loaders

import (
	"io"
	"os"
	"syscall"
)

// openData opens a file for positioned reads of tensor data. It is a bare
// descriptor rather than an *os.File: a compare of thousands of small
// files opens each one twice or more, and os.File's bookkeeping (the
// runtime poller, a finalizer) cost more than the read itself. It opens
// without blocking, so that a named pipe (which would wait for a writer)
// is opened at once and refused by stat. Errors are *os.PathError, as
// os.Open's.
func openData(path string) (*dataFile, error) {
	for {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "open", Path: path, Err: err}
		}
		return &dataFile{fd: fd, path: path}, nil
	}
}

type dataFile struct {
	fd   int
	path string
}

// stat returns the file's size and whether it is a directory; anything
// but a regular file or a directory (a named pipe, a socket, a device) is
// an error.
func (f *dataFile) stat() (size int64, dir bool, err error) {
	var st syscall.Stat_t
	if err := syscall.Fstat(f.fd, &st); err != nil {
		return 0, false, &os.PathError{Op: "stat", Path: f.path, Err: err}
	}
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFREG:
		return st.Size, false, nil
	case syscall.S_IFDIR:
		return st.Size, true, nil
	}
	return 0, false, &os.PathError{Op: "open", Path: f.path, Err: errNotRegular}
}

// openRegular opens a regular file for reading, without blocking on a
// named pipe, and refuses anything else.
func openRegular(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, &os.PathError{Op: "open", Path: path, Err: errNotRegular}
	}
	return f, nil
}

// ReadAt implements io.ReaderAt with pread.
func (f *dataFile) ReadAt(p []byte, off int64) (int, error) {
	n := 0
	for n < len(p) {
		m, err := syscall.Pread(f.fd, p[n:], off+int64(n))
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return n, &os.PathError{Op: "read", Path: f.path, Err: err}
		case m == 0:
			return n, io.EOF
		}
		n += m
	}
	return n, nil
}

// readOnce reads into p at off with one read (retried only when
// interrupted): for a regular file, fewer bytes than len(p) means its end.
func (f *dataFile) readOnce(p []byte, off int64) (int, error) {
	for {
		n, err := syscall.Pread(f.fd, p, off)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return 0, &os.PathError{Op: "read", Path: f.path, Err: err}
		}
		return n, nil
	}
}

// Close closes the descriptor; closing again is an error, never a close
// of a descriptor since reused.
func (f *dataFile) Close() error {
	if f.fd < 0 {
		return &os.PathError{Op: "close", Path: f.path, Err: os.ErrClosed}
	}
	fd := f.fd
	f.fd = -1
	return syscall.Close(fd)
}

// dirKey identifies a directory by device and inode, so that a walk
// visits each directory once however many paths lead to it.
func dirKey(st os.FileInfo) (any, bool) {
	s, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return nil, false
	}
	return [2]uint64{uint64(s.Dev), uint64(s.Ino)}, true
}
