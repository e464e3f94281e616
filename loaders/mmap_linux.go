package loaders

import (
	"os"
	"syscall"

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
