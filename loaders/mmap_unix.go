//go:build linux || darwin || freebsd

package loaders

import (
	"fmt"
	"os"
	"syscall"
)

// mapRange maps n bytes of file f from offset off, read-only, and returns
// them with the function that unmaps them. Pages come from the page cache:
// nothing is copied and the mapping counts as file-backed memory, not as
// the process's own. Where the system can (mapPopulate), the whole range is
// entered into the page tables by the mmap call itself, which costs less
// than a fault every few pages (bench/README.md); pages it cannot enter
// fault in as usual. A
// file that shrinks while mapped makes reads past its new end fault;
// readers of the mapping run with debug.SetPanicOnFault and turn that into
// an error.
func mapRange(f *dataFile, off, n int64) ([]byte, func(), error) {
	return mapFile(f, off, n, mapPopulate)
}

// mapWhole is mapRange without entering any page into the page tables:
// the map of a whole tensor, whose pieces populate enters as they are
// asked for.
func mapWhole(f *dataFile, off, n int64) ([]byte, func(), error) {
	return mapFile(f, off, n, 0)
}

// mapFile maps n bytes of f from off with the extra mmap flags.
func mapFile(f *dataFile, off, n int64, flags int) ([]byte, func(), error) {
	if n == 0 {
		return nil, func() {}, nil
	}
	size, _, err := f.stat()
	if err != nil {
		return nil, nil, err
	}
	if size < off+n {
		return nil, nil, fmt.Errorf("file has %d bytes, data runs to byte %d (truncated or changed since it was listed)", size, off+n)
	}
	page := int64(os.Getpagesize())
	start := off &^ (page - 1)
	m, err := syscall.Mmap(f.fd, start, int(off-start+n), syscall.PROT_READ, syscall.MAP_SHARED|flags)
	if err != nil {
		return nil, nil, err
	}
	return m[off-start:], func() { _ = syscall.Munmap(m) }, nil
}
