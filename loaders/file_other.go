//go:build !(linux || darwin || freebsd)

package loaders

import "os"

// openData opens a file for positioned reads of tensor data.
func openData(path string) (*dataFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	return &dataFile{f}, nil
}

type dataFile struct{ *os.File }

// stat returns the file's size and whether it is a directory.
func (f *dataFile) stat() (size int64, dir bool, err error) {
	st, err := f.Stat()
	if err != nil {
		return 0, false, err
	}
	return st.Size(), st.IsDir(), nil
}
