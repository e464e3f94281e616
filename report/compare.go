package report

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/graphdiff/graphdiff/outcome"
)

// errNotRegular is the error for a report path that names something other
// than a regular file.
var errNotRegular = errors.New("not a regular file (a symbolic link, device, named pipe or directory): left as it is, nothing written")

// reportMode returns the permissions a report written at path takes: an
// existing report's own, else 0666 less the process's umask, as a file
// the shell created would have. A path that names anything but a regular
// file (a symbolic link, a device, a named pipe, a directory) is refused:
// replacing it would destroy what it is.
func reportMode(path string) (os.FileMode, error) {
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return 0o666 &^ umask(), nil
	case err != nil:
		return 0, err
	case !fi.Mode().IsRegular():
		return 0, errNotRegular
	}
	return fi.Mode().Perm(), nil
}

// umask returns the process's file mode creation mask, read from
// /proc/self/status (Linux); 022, the usual one, where it cannot be read.
// Reading it leaves it as it is (unlike umask(2), which sets it, for every
// thread at once).
func umask() os.FileMode {
	status, err := os.ReadFile("/proc/self/status")
	if err == nil {
		for line := range strings.Lines(string(status)) {
			if v, ok := strings.CutPrefix(line, "Umask:"); ok {
				if m, err := strconv.ParseUint(strings.TrimSpace(v), 8, 32); err == nil {
					return os.FileMode(m) & 0o777
				}
			}
		}
	}
	return 0o022
}

// More output formats, for comparisons.
const (
	JUnit    Format = "junit"
	Markdown Format = "markdown"
)

// compareRenderers are the output formats of a comparison.
var compareRenderers = renderers[*outcome.Comparison]{
	{Text, compareText},
	{JSON, plain(compareJSON)},
	{JUnit, plain(compareJUnit)},
	{Markdown, plain(compareMarkdown)},
	{HTML, plain(compareHTML)},
}

// CompareFormats are the formats a comparison can be written in.
var CompareFormats = compareRenderers.formats()

// Compare writes a comparison in format f; o applies to text only.
func Compare(w io.Writer, f Format, r *outcome.Comparison, o TextOptions) error {
	return compareRenderers.write(w, f, r, o, "compare")
}

// partial holds the temporary files of reports being written, for
// RemovePartial.
var partial struct {
	sync.Mutex
	files   map[string]bool
	stopped bool
}

// RemovePartial removes the temporary files of reports still being
// written and makes later WriteFile calls fail, so that a program stopped
// by a signal leaves only whole reports behind. Reports already renamed
// into place are kept.
func RemovePartial() {
	partial.Lock()
	defer partial.Unlock()
	partial.stopped = true
	for name := range partial.files {
		os.Remove(name)
	}
	partial.files = nil
}

// ErrStopped is returned by WriteFile after RemovePartial.
var ErrStopped = errors.New("stopped before the report was written")

// track records a temporary file (or forgets it, with done); it fails
// once RemovePartial has run.
func track(name string, done bool) error {
	partial.Lock()
	defer partial.Unlock()
	if partial.stopped {
		return ErrStopped
	}
	if partial.files == nil {
		partial.files = map[string]bool{}
	}
	if done {
		delete(partial.files, name)
	} else {
		partial.files[name] = true
	}
	return nil
}

// WriteFile writes a report file whole or not at all: into a temporary file
// beside path, synced to disk, then renamed over path. On any error the
// temporary file is removed and path is left as it was; RemovePartial
// removes it too, from another goroutine (a signal handler's). Where the
// file system allows, the temporary file has no name while it is written
// (createUnnamed) and is named only for the rename, so that a process
// killed by SIGKILL (which no handler sees) leaves no temporary file
// behind, but in the moment between naming and renaming.
func WriteFile(path string, write func(io.Writer) error) (err error) {
	mode, err := reportMode(path)
	if err != nil {
		return fmt.Errorf("report %s: %w", path, err)
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	defer func() {
		if err != nil {
			err = fmt.Errorf("report %s: %w", path, err)
		}
	}()
	if f, ok := createUnnamed(dir); ok {
		return writeUnnamed(f, dir, base, path, mode, write)
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return err
	}
	if err := track(f.Name(), false); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	defer track(f.Name(), true)
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err = finishFile(f, mode, write); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return renameTracked(f.Name(), path)
}

// writeUnnamed is WriteFile for an unnamed temporary file f in dir: it
// is given a temporary name (tracked, like a named one) only once it is
// whole, and renamed over path at once.
func writeUnnamed(f *os.File, dir, base, path string, mode os.FileMode, write func(io.Writer) error) error {
	if err := finishFile(f, mode, write); err != nil {
		f.Close()
		return err
	}
	tmp := filepath.Join(dir, fmt.Sprintf(".%s.tmp-%d-%d", base, os.Getpid(), time.Now().UnixNano()))
	if err := track(tmp, false); err != nil {
		f.Close()
		return err
	}
	defer track(tmp, true)
	err := linkUnnamed(f, tmp)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = renameTracked(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// finishFile writes f with write, syncs it and gives it mode; it leaves
// f open.
func finishFile(f *os.File, mode os.FileMode, write func(io.Writer) error) error {
	if err := write(f); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	return f.Chmod(mode)
}

// renameTracked renames the temporary file tmp (closed) over path, unless
// RemovePartial has run: no RemovePartial comes between the check and the
// rename.
func renameTracked(tmp, path string) error {
	partial.Lock()
	defer partial.Unlock()
	if partial.stopped {
		return ErrStopped
	}
	return os.Rename(tmp, path)
}
