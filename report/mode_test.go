package report

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestNewReportHonoursTheUmask: a new report takes 0666 less the
// process's umask, read without changing it. Not parallel: it sets the
// umask, which is the process's.
func TestNewReportHonoursTheUmask(t *testing.T) {
	old := syscall.Umask(0o027)
	defer syscall.Umask(old)
	if got := umask(); got != 0o027 {
		t.Fatalf("umask() = %o, want 027", got)
	}
	path := filepath.Join(t.TempDir(), "r.json")
	if err := WriteFile(path, func(w io.Writer) error { _, err := io.WriteString(w, "{}"); return err }); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v (%v), want 0640", fi.Mode().Perm(), err)
	}
}
