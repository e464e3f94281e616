package loaders

import (
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// mapPopulate asks mmap to enter the whole range into the page tables.
const mapPopulate = syscall.MAP_POPULATE

// cached reports whether all of bytes [off, off+n) of f are in the page
// cache, as cachestat(2) (Linux 6.5) tells; true where it cannot tell.
func cached(f *dataFile, off, n int64) bool {
	var st unix.Cachestat_t
	r := unix.CachestatRange{Off: uint64(off), Len: uint64(n)}
	if err := unix.Cachestat(uint(f.fd), &r, &st, 0); err != nil {
		return true
	}
	page := int64(os.Getpagesize())
	return int64(st.Cache) >= (off+n+page-1)/page-off/page
}

// readThrough reads bytes [off, off+n) of f through the page cache, as
// read(2) does, in order, without copying them out (sendfile to
// /dev/null), piece bytes at a time, calling progress with the end of what
// it has read after each piece, until stop says so. A piece already all in
// the cache (cached) is passed over unread: a file mostly cached, with
// some pages evicted, costs a cachestat per piece and a read of the
// pieces that lost pages, not a pass over all of it. It returns the bytes
// it read, and at the first error: what is left then comes in as the
// mapping faults.
func readThrough(f *dataFile, off, n, piece int64, stop func() bool, progress func(end int64)) (read int64) {
	null, err := unix.Open(os.DevNull, unix.O_WRONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0
	}
	defer unix.Close(null)
	for o := off; o < off+n && !stop(); {
		size := min(off+n-o, piece)
		if cached(f, o, size) {
			o += size
			progress(o)
			continue
		}
		m, err := unix.Sendfile(null, f.fd, &o, int(size))
		if err == unix.EINTR || err == unix.EAGAIN {
			continue
		}
		if err != nil || m == 0 {
			return read
		}
		read += int64(m)
		progress(o)
	}
	return read
}

// populate enters the pages of b, a slice of a map, into the page tables
// at once (madvise MADV_POPULATE_READ, Linux 5.14), as a populating mmap
// does: cheaper than a fault every few pages. Where the call fails (an
// older kernel, pages past a file's new end) the pages fault in as they
// are read, and a read past the end faults as without it.
func populate(b []byte) {
	if len(b) == 0 {
		return
	}
	page := os.Getpagesize()
	lead := int(uintptr(unsafe.Pointer(&b[0])) & uintptr(page-1)) // the map starts on a page: so does b − lead
	n := (lead + len(b) + page - 1) &^ (page - 1)                 // and it ends on one: so does the map
	_ = unix.Madvise(unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(&b[0]), -lead)), n), unix.MADV_POPULATE_READ)
}

// physicalMemory returns the machine's memory in bytes (sysinfo(2)), 0
// when it cannot tell.
func physicalMemory() int64 {
	var si unix.Sysinfo_t
	if err := unix.Sysinfo(&si); err != nil {
		return 0
	}
	return int64(si.Totalram) * int64(si.Unit)
}
