//go:build !linux

package report

import (
	"errors"
	"os"
)

// createUnnamed is never able to on this system: the caller names its
// file (see tmpfile_linux.go).
func createUnnamed(string) (*os.File, bool) { return nil, false }

// linkUnnamed is never called on this system.
func linkUnnamed(*os.File, string) error { return errors.ErrUnsupported }
