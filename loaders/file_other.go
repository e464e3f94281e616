//go:build !(linux || darwin || freebsd)

package loaders

import (
	"io"
	"os"
)

// openData opens a file for positioned reads of tensor data.
func openData(path string) (*dataFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	return &dataFile{f}, nil
}

type dataFile struct{ *os.File }

// readOnce reads into p at off; fewer bytes than len(p) means the file's
// end.
func (f *dataFile) readOnce(p []byte, off int64) (int, error) {
	n, err := f.ReadAt(p, off)
	if err == io.EOF {
		err = nil
	}
	return n, err
}

// stat returns the file's size and whether it is a directory; anything
// but a regular file or a directory is an error.
func (f *dataFile) stat() (size int64, dir bool, err error) {
	st, err := f.Stat()
	if err != nil {
		return 0, false, err
	}
	if !st.IsDir() && !st.Mode().IsRegular() {
		return 0, false, &os.PathError{Op: "open", Path: f.Name(), Err: errNotRegular}
	}
	return st.Size(), st.IsDir(), nil
}

// openRegular opens a regular file for reading and refuses anything else
// (checked before opening: a named pipe would block the open).
func openRegular(path string) (*os.File, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, &os.PathError{Op: "open", Path: path, Err: errNotRegular}
	}
	return os.Open(path)
}

// dirKey identifies a directory where the platform can (not here: such
// walks rely on the depth cap and the loop check).
func dirKey(os.FileInfo) (any, bool) { return nil, false }
