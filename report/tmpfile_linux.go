package report

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// createUnnamed opens a new file in dir that has no name (O_TMPFILE): a
// process killed while writing it, even by SIGKILL, leaves nothing behind,
// as the kernel frees a file no name and no descriptor hold. ok is false
// where the file system cannot (O_TMPFILE is Linux 3.11 and later, on
// ext4, xfs, btrfs, tmpfs and others): then the caller names its file.
func createUnnamed(dir string) (f *os.File, ok bool) {
	fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, false
	}
	return os.NewFile(uintptr(fd), dir), true
}

// linkUnnamed gives the unnamed file f (createUnnamed) the name tmp, in
// its directory, through /proc/self/fd: linkat with AT_EMPTY_PATH would
// need CAP_DAC_READ_SEARCH.
func linkUnnamed(f *os.File, tmp string) error {
	err := unix.Linkat(unix.AT_FDCWD, fmt.Sprintf("/proc/self/fd/%d", f.Fd()), unix.AT_FDCWD, tmp, unix.AT_SYMLINK_FOLLOW)
	if err != nil {
		return &os.LinkError{Op: "link", Old: f.Name(), New: tmp, Err: err}
	}
	return nil
}
