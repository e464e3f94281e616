package loaders

import (
	"archive/zip"
	"bufio"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
)

// An .npz or torch.save file is a zip archive. graphdiff lists it with
// archive/zip; the program that wrote it reads it with another reader:
// np.load with Python's zipfile, torch.load with PyTorch's own (miniz).
// Where zip readers disagree, an archive can show graphdiff one set of
// tensors and numpy another. checkZip refuses such an archive, naming the
// disagreement, before anything in it is read:
//
//   - End records. archive/zip reads the central directory that the
//     classic end record (EOCD) names and consults the zip64 end record
//     only when the EOCD's fields are saturated (0xFFFF, 0xFFFFFFFF);
//     zipfile and PyTorch use the zip64 end record whenever its locator
//     precedes the EOCD. So the zip64 end record must give the EOCD's
//     directory offset, size and entry count wherever the EOCD's field is
//     not saturated, and where archive/zip follows the locator, the locator
//     must point at the record zipfile reads (the one just before it).
//   - The directory. zipfile reads exactly the directory's declared size
//     and checks every extra field; archive/zip reads entries until one is
//     malformed and skips a broken extra field. Both must find the
//     directory at the same place and list the same members, in the same
//     order, with the same names, flags, methods, CRCs and sizes.
//   - Local headers. zipfile checks, as it opens a member, that the local
//     header at the offset its central entry gives (zip64 extra included)
//     has the local header signature and the same file name, and that the
//     member's data ends before the next member's header (overlapping
//     members are how zip bombs are made); archive/zip checks none of it.
//     All members are checked here, since graphdiff lists them all.
//
// archive/zip exposes neither a member's header offset nor the zip64 end
// record, which is why this is a small reader of its own; it reads the way
// zipfile (Python 3.11) does, and its listing is compared with
// archive/zip's. It reads the end records (at most 64 KiB + 22 bytes, when
// the archive has a comment), the central directory once, through a buffer
// of at most 64 KiB, and one small piece of each member's local header; it
// keeps no more entries than archive/zip listed, so a declared size or
// count never sizes an allocation.

const (
	zipLocalSig     = "PK\x03\x04"
	zipCentralSig   = "PK\x01\x02"
	zipEndSig       = "PK\x05\x06"
	zip64EndSig     = "PK\x06\x06"
	zip64LocatorSig = "PK\x06\x07"

	zipLocalLen     = 30
	zipCentralLen   = 46
	zipEndLen       = 22
	zip64EndLen     = 56
	zip64LocatorLen = 20

	// zipMaxComment is the longest archive comment: zipfile looks for the
	// EOCD no further than this before the last 22 bytes.
	zipMaxComment = 1<<16 - 1
	// zipUTF8 is the general purpose flag saying a name is UTF-8 (zipfile
	// decodes other names as cp437).
	zipUTF8 = 0x800
)

// zipDirectory is where an end record says the central directory is.
type zipDirectory struct {
	end    int64  // offset of the end record (EOCD, or zip64 end record)
	offset uint64 // the directory's offset, as recorded
	size   uint64 // its size in bytes
	count  uint64 // its number of entries
}

// zipEntry is a central directory entry as zipfile reads it.
type zipEntry struct {
	name         string
	flags        uint16
	method       uint16
	crc          uint32
	csize, usize uint64
	header       int64 // offset of the local header in the file
	data         int64 // offset of the data, from the local header's lengths
}

// checkZip returns an error when the archive of size bytes that ra reads,
// and of which archive/zip listed files, would be read otherwise by
// reader ("numpy", "PyTorch"), the program that reads such files.
func checkZip(ra io.ReaderAt, size int64, files []*zip.File, reader string) error {
	start, concat, dirSize, err := zipStart(ra, size, reader)
	if err == nil {
		var entries []zipEntry
		if entries, err = zipEntries(ra, size, start, dirSize, concat, files, reader); err == nil {
			err = checkLocalHeaders(ra, size, entries, start)
		}
	}
	if err != nil {
		return fmt.Errorf("ambiguous zip archive: %w", err)
	}
	return nil
}

// zipStart finds the central directory as zipfile does and checks that
// archive/zip finds the same: it returns the directory's start and size in
// the file and concat, what is added to each recorded header offset (the
// length of data before the archive, 0 for an archive on its own).
func zipStart(ra io.ReaderAt, size int64, reader string) (start, concat int64, dirSize uint64, err error) {
	end, rec, err := zipfileEnd(ra, size)
	if err != nil {
		return 0, 0, 0, err
	}
	le := binary.LittleEndian
	classic := zipDirectory{end: end, count: uint64(le.Uint16(rec[10:])),
		size: uint64(le.Uint32(rec[12:])), offset: uint64(le.Uint32(rec[16:]))}
	py, gozip := classic, classic
	// archive/zip's test for a zip64 archive (its size test is 16 bits wide)
	saturated := classic.count == 0xFFFF || classic.size == 0xFFFF || classic.offset == 0xFFFFFFFF
	var loc [zip64LocatorLen]byte
	if end >= zip64LocatorLen && readFullAt(ra, loc[:], end-zip64LocatorLen) == nil && string(loc[:4]) == zip64LocatorSig {
		disk, at, disks := le.Uint32(loc[4:]), le.Uint64(loc[8:]), le.Uint32(loc[16:])
		if disk != 0 || disks > 1 {
			return 0, 0, 0, errors.New("its zip64 locator says the archive spans several disks (Python's zipfile refuses it)")
		}
		// zipfile reads the zip64 end record just before the locator;
		// archive/zip, only when the EOCD is saturated, where the locator
		// points
		var rec64 [zip64EndLen]byte
		recAt := end - zip64LocatorLen - zip64EndLen
		has64 := recAt >= 0 && readFullAt(ra, rec64[:], recAt) == nil && string(rec64[:4]) == zip64EndSig
		follows := saturated && disks == 1
		if follows && (!has64 || at != uint64(recAt)) {
			return 0, 0, 0, fmt.Errorf("its zip64 locator points at offset %d, not at the zip64 end record %s reads", at, reader)
		}
		if has64 {
			z := zipDirectory{end: recAt, count: le.Uint64(rec64[32:]), size: le.Uint64(rec64[40:]), offset: le.Uint64(rec64[48:])}
			if classic.count != 0xFFFF && classic.count != z.count ||
				classic.size != 0xFFFFFFFF && classic.size != z.size ||
				classic.offset != 0xFFFFFFFF && classic.offset != z.offset {
				return 0, 0, 0, fmt.Errorf("its zip64 and classic end records name different central directories (%s would read other members)", reader)
			}
			py = z
			if follows {
				gozip = z
			}
		}
	}
	if py.size > uint64(py.end) || py.offset > uint64(size) || gozip.offset > uint64(size) {
		return 0, 0, 0, fmt.Errorf("its end record names a central directory that does not fit in the file (%d bytes at offset %d)", py.size, py.offset)
	}
	// zipfile: the directory ends where its end record begins
	start = py.end - int64(py.size)
	concat = start - int64(py.offset)
	// archive/zip: likewise, unless an entry lies at the recorded offset
	// itself (it then takes that: its remedy for archives that record a
	// wrong offset)
	base := gozip.end - int64(gozip.size) - int64(gozip.offset)
	if base > 0 {
		var sig [4]byte
		if readFullAt(ra, sig[:], int64(gozip.offset)) == nil && string(sig[:]) == zipCentralSig {
			base = 0
		}
	}
	if base != concat || base+int64(gozip.offset) != start {
		return 0, 0, 0, fmt.Errorf("graphdiff and %s would read different central directories (at offsets %d and %d)", reader, base+int64(gozip.offset), start)
	}
	return start, concat, py.size, nil
}

// zipfileEnd finds the EOCD as zipfile does: the last 22 bytes when they
// are an EOCD without comment, else the last EOCD signature in the last
// 64 KiB + 22 bytes. It returns the record's offset and its 22 bytes.
func zipfileEnd(ra io.ReaderAt, size int64) (int64, []byte, error) {
	if size < zipEndLen {
		return 0, nil, errors.New("too short for an end of central directory record")
	}
	rec := make([]byte, zipEndLen)
	if err := readFullAt(ra, rec, size-zipEndLen); err != nil {
		return 0, nil, fmt.Errorf("reading the end record: %w", err)
	}
	if string(rec[:4]) == zipEndSig && rec[20] == 0 && rec[21] == 0 {
		return size - zipEndLen, rec, nil
	}
	from := max(size-zipMaxComment-1-zipEndLen, 0)
	tail := make([]byte, size-from)
	if err := readFullAt(ra, tail, from); err != nil {
		return 0, nil, fmt.Errorf("reading the end record: %w", err)
	}
	for i := len(tail) - 4; i >= 0; i-- {
		if string(tail[i:i+4]) == zipEndSig {
			if len(tail)-i < zipEndLen {
				break // zipfile takes the last signature, and fails on it
			}
			return from + int64(i), tail[i : i+zipEndLen], nil
		}
	}
	return 0, nil, errors.New("no end of central directory record where Python's zipfile looks for one")
}

// zipEntries reads the central directory of size bytes at start as zipfile
// does and checks that it lists what archive/zip listed (files).
func zipEntries(ra io.ReaderAt, size, start int64, dirSize uint64, concat int64, files []*zip.File, reader string) ([]zipEntry, error) {
	le := binary.LittleEndian
	r := bufio.NewReaderSize(io.NewSectionReader(ra, start, int64(dirSize)), int(min(dirSize, 64<<10)))
	entries := make([]zipEntry, 0, len(files))
	var fixed [zipCentralLen]byte
	var name, extra []byte
	for total := uint64(0); total < dirSize; {
		i := len(entries)
		if i == len(files) {
			return nil, fmt.Errorf("%s would list more members than graphdiff's %d", reader, len(files))
		}
		if _, err := io.ReadFull(r, fixed[:]); err != nil {
			return nil, fmt.Errorf("central directory entry %d is cut short", i)
		}
		if string(fixed[:4]) != zipCentralSig {
			return nil, fmt.Errorf("central directory entry %d has no entry signature", i)
		}
		n, m, k := int(le.Uint16(fixed[28:])), int(le.Uint16(fixed[30:])), int(le.Uint16(fixed[32:]))
		if total += uint64(zipCentralLen + n + m + k); total > dirSize {
			return nil, fmt.Errorf("central directory entry %d runs past the directory's size", i)
		}
		name, extra = grow(name, n), grow(extra, m)
		if _, err := io.ReadFull(r, name); err != nil {
			return nil, fmt.Errorf("central directory entry %d is cut short", i)
		}
		if _, err := io.ReadFull(r, extra); err != nil {
			return nil, fmt.Errorf("central directory entry %d is cut short", i)
		}
		if _, err := r.Discard(k); err != nil {
			return nil, fmt.Errorf("central directory entry %d is cut short", i)
		}
		f := files[i]
		if string(name) != f.Name {
			return nil, fmt.Errorf("member %d is %q to %s but %q to graphdiff", i, name, reader, f.Name)
		}
		e := zipEntry{name: f.Name, flags: le.Uint16(fixed[8:]), method: le.Uint16(fixed[10:]),
			crc: le.Uint32(fixed[16:]), csize: uint64(le.Uint32(fixed[20:])), usize: uint64(le.Uint32(fixed[24:]))}
		header, err := zip64Extra(&e, uint64(le.Uint32(fixed[42:])), extra)
		if err != nil {
			return nil, err
		}
		if header > uint64(size) {
			return nil, fmt.Errorf("member %q has its local header at offset %d, beyond the file", e.name, header)
		}
		e.header = int64(header) + concat
		if e.flags != f.Flags || e.method != f.Method || e.crc != f.CRC32 ||
			e.csize != f.CompressedSize64 || e.usize != f.UncompressedSize64 {
			return nil, fmt.Errorf("%s and graphdiff would read member %q with different sizes, method or flags", reader, e.name)
		}
		entries = append(entries, e)
	}
	if len(entries) != len(files) {
		return nil, fmt.Errorf("%s would list %d members, graphdiff %d", reader, len(entries), len(files))
	}
	return entries, nil
}

// zip64Extra applies an entry's zip64 extra fields as zipfile does (every
// such field, each 64-bit value taken where the 32-bit one is saturated)
// and returns the header offset.
func zip64Extra(e *zipEntry, header uint64, extra []byte) (uint64, error) {
	le := binary.LittleEndian
	for len(extra) >= 4 {
		tag, n := le.Uint16(extra), int(le.Uint16(extra[2:]))
		if 4+n > len(extra) {
			return 0, fmt.Errorf("member %q has a corrupt extra field (Python's zipfile refuses it)", e.name)
		}
		if tag == 1 {
			data := extra[4 : 4+n]
			for _, f := range []struct {
				v         *uint64
				saturated bool
			}{
				{&e.usize, e.usize == 0xFFFFFFFF || e.usize == 1<<64-1},
				{&e.csize, e.csize == 0xFFFFFFFF},
				{&header, header == 0xFFFFFFFF},
			} {
				if !f.saturated {
					continue
				}
				if len(data) < 8 {
					return 0, fmt.Errorf("member %q has a corrupt zip64 extra field (Python's zipfile refuses it)", e.name)
				}
				*f.v, data = le.Uint64(data), data[8:]
			}
		}
		extra = extra[4+n:]
	}
	return header, nil
}

// checkLocalHeaders checks each member's local header as zipfile does when
// it opens the member: the signature, the same name (decoded alike), and
// data that ends before the next member's header or, for the last, before
// the central directory at dirStart.
func checkLocalHeaders(ra io.ReaderAt, size int64, entries []zipEntry, dirStart int64) error {
	le := binary.LittleEndian
	var buf []byte
	for i := range entries {
		e := &entries[i]
		if e.header < 0 || e.header > size-zipLocalLen {
			return fmt.Errorf("member %q has its local header at offset %d, outside the file", e.name, e.header)
		}
		// the fixed part and, in the same read, a name as long as the
		// central entry's
		want := min(int64(zipLocalLen+len(e.name)), size-e.header)
		buf = grow(buf, int(want))
		if err := readFullAt(ra, buf, e.header); err != nil {
			return fmt.Errorf("member %q: reading its local header: %w", e.name, err)
		}
		if string(buf[:4]) != zipLocalSig {
			return fmt.Errorf("member %q has no local header at offset %d (Python's zipfile refuses it)", e.name, e.header)
		}
		n, m := int64(le.Uint16(buf[26:])), int64(le.Uint16(buf[28:]))
		if n > size-e.header-zipLocalLen {
			return fmt.Errorf("member %q has a local header cut short by the end of the file", e.name)
		}
		local := buf[zipLocalLen:]
		if n != int64(len(e.name)) {
			local = make([]byte, n)
			if err := readFullAt(ra, local, e.header+zipLocalLen); err != nil {
				return fmt.Errorf("member %q: reading its local header: %w", e.name, err)
			}
		}
		if string(local) != e.name {
			return fmt.Errorf("member %q has a local header that names %q (Python's zipfile, which np.load uses, refuses such an archive)", e.name, local)
		}
		if (le.Uint16(buf[6:])^e.flags)&zipUTF8 != 0 && !isASCII(e.name) {
			return fmt.Errorf("member %q: its local header and its central entry decode its name differently (one marks it UTF-8)", e.name)
		}
		e.data = e.header + zipLocalLen + n + m
	}
	slices.SortStableFunc(entries, func(a, b zipEntry) int { return cmp.Compare(a.header, b.header) })
	for i, s := range entries {
		end := dirStart
		if i+1 < len(entries) {
			end = entries[i+1].header
		}
		if s.data > end || s.csize > uint64(end-s.data) {
			next := "the central directory"
			if i+1 < len(entries) {
				next = fmt.Sprintf("member %q", entries[i+1].name)
			}
			return fmt.Errorf("member %q's data runs into %s (overlapping members, as zip bombs are made; Python's zipfile refuses them)", s.name, next)
		}
	}
	return nil
}

// readFullAt fills b from offset off, or says why it could not.
func readFullAt(ra io.ReaderAt, b []byte, off int64) error {
	n, err := ra.ReadAt(b, off)
	if n == len(b) {
		return nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return err
}

// grow returns b resliced to n bytes, reallocated when it is too small.
func grow(b []byte, n int) []byte {
	if cap(b) < n {
		return make([]byte, n)
	}
	return b[:n]
}

// isASCII reports whether s is 7-bit ASCII, which every zip name encoding
// decodes alike.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
