package report

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// CheckWritable reports whether WriteFile could write a report at path,
// without writing it: the directory it goes in exists and takes a new file,
// and path names no symbolic link, device, named pipe or directory
// (which WriteFile leaves as it is). It is for checking the reports a
// command was asked for before the work that fills them: a mistyped
// directory found after a long comparison costs the comparison.
func CheckWritable(path string) error {
	if _, err := reportMode(path); err != nil {
		return err
	}
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("the directory %s does not exist", dir)
	case err != nil:
		return err
	case !st.IsDir():
		return fmt.Errorf("%s is not a directory", dir)
	}
	// a file made there and removed is the test WriteFile would pass:
	// permissions, read-only mounts and ACLs alike
	if f, ok := createUnnamed(dir); ok {
		return f.Close()
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("cannot write in the directory %s: %w", dir, unwrapPath(err))
	}
	if err := track(f.Name(), false); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	defer track(f.Name(), true)
	f.Close()
	return os.Remove(f.Name())
}

// unwrapPath returns the error inside a *os.PathError, whose path would
// repeat the temporary file's name.
func unwrapPath(err error) error {
	if pe, ok := errors.AsType[*os.PathError](err); ok {
		return pe.Err
	}
	return err
}
