//go:build unix

// Command floor measures what reading the inputs alone costs on this
// machine, the floor under any comparison of them:
//
//	floor map A B        map two files and read every cache line of both
//	                     once, on all cores, 16 MiB at a time (the bytes of
//	                     a large pair; a tail under 16 MiB is left out)
//	floor files DIR...   open, read (up to 64 KiB) and close every file
//	                     under the directories once, on all cores (the
//	                     per-file cost of many small tensors)
//	floor fresh DIR...   as files, but each file read into a buffer of
//	                     its own size, newly allocated (what keeping each
//	                     file's bytes costs in the allocator and the page
//	                     faults of a growing heap)
//	floor opens DIR...   only open and close every file, on all cores,
//	                     the directories listed beforehand (what no reader
//	                     of the files can avoid)
//	floor tree DIR...    list every file under the directories, map each
//	                     (window bytes at a time) and read one word of
//	                     every 64-byte line, whole files spread over all
//	                     cores: the floor under comparing whole run trees
//	                     (a training dump), no arithmetic
//
// It prints the elapsed time inside the process, the median of 3 rounds
// (FLOOR_ROUNDS=1: one round, for a caller that times the process from
// outside, as it times what it compares the floor with);
// for files, fresh and opens the listing of the directories is timed in
// files, fresh and tree only.
package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

func main() {
	mode := ""
	if len(os.Args) > 1 {
		mode = os.Args[1]
	}
	if len(os.Args) < 3 || (mode == "map" && len(os.Args) != 4) || (mode != "map" && mode != "files" && mode != "fresh" && mode != "opens" && mode != "tree") {
		fmt.Fprintln(os.Stderr, "usage: floor map A B | floor files DIR... | floor fresh DIR... | floor opens DIR... | floor tree DIR...")
		os.Exit(2)
	}
	var listed []string
	if mode == "opens" {
		listed = list(os.Args[2:])
	}
	n := 3
	if os.Getenv("FLOOR_ROUNDS") == "1" {
		n = 1
	}
	var rounds []time.Duration
	for range n {
		start := time.Now()
		var what string
		switch mode {
		case "map":
			what = mapped(os.Args[2], os.Args[3])
		case "files":
			what = files(os.Args[2:], false)
		case "fresh":
			what = files(os.Args[2:], true)
		case "tree":
			what = tree(os.Args[2:])
		default:
			what = opens(listed)
		}
		rounds = append(rounds, time.Since(start))
		if len(rounds) == n {
			sort.Slice(rounds, func(i, j int) bool { return rounds[i] < rounds[j] })
			fmt.Printf("%s: %.3f s (median of %d)\n", what, rounds[n/2].Seconds(), n)
		}
	}
}

// parallel runs f(w, workers) on one goroutine per core.
func parallel(f func(w, workers int)) {
	workers := runtime.NumCPU()
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(w, workers)
		}()
	}
	wg.Wait()
}

// window is the bytes mapped at once per file and core: memory stays flat
// however large the files, as it must in a comparison.
const window = 16 << 20

// mapped reads both files through memory maps of window bytes, one word
// of every 64-byte cache line (the line brings all its bytes from memory,
// and the loop's cost stays below the memory's), each core its own range, populated up front where the
// system can (mapPopulate) and unmapped once read: the cheapest way to read
// them found on Linux.
func mapped(pathA, pathB string) string {
	fa, fb := openSize(pathA), openSize(pathB)
	defer fa.f.Close()
	defer fb.f.Close()
	n := min(fa.size, fb.size) / window * window // whole windows
	windows := int(n / window)
	sums := make([]uint64, runtime.NumCPU())
	parallel(func(w, workers int) {
		var x, y, z, q uint64
		for k := windows * w / workers; k < windows*(w+1)/workers; k++ {
			ma, a := mapWords(fa.f, int64(k)*window)
			mb, b := mapWords(fb.f, int64(k)*window)
			for i := 0; i+32 <= len(a); i += 32 { // one word per 64-byte line
				x ^= a[i] ^ b[i]
				y ^= a[i+8] ^ b[i+8]
				z ^= a[i+16] ^ b[i+16]
				q ^= a[i+24] ^ b[i+24]
			}
			check(syscall.Munmap(ma))
			check(syscall.Munmap(mb))
		}
		sums[w] = x ^ y ^ z ^ q
	})
	var s uint64
	for _, v := range sums {
		s ^= v
	}
	return fmt.Sprintf("read 2 x %d bytes mapped (xor %x)", n, s)
}

type sizedFile struct {
	f    *os.File
	size int64
}

func openSize(path string) sizedFile {
	f, err := os.Open(path)
	check(err)
	st, err := f.Stat()
	check(err)
	return sizedFile{f, st.Size()}
}

// mapWords maps window bytes of f from off.
func mapWords(f *os.File, off int64) ([]byte, []uint64) {
	m, err := syscall.Mmap(int(f.Fd()), off, window, syscall.PROT_READ, syscall.MAP_SHARED|mapPopulate)
	check(err)
	return m, unsafe.Slice((*uint64)(unsafe.Pointer(&m[0])), len(m)/8)
}

// list returns the regular files under the directories.
func list(dirs []string) []string {
	var paths []string
	for _, d := range dirs {
		check(filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
			if err == nil && e.Type().IsRegular() {
				paths = append(paths, p)
			}
			return err
		}))
	}
	return paths
}

// files opens, reads and closes every file under dirs; with fresh, each
// into a new buffer of the file's size (fstat), kept until all are read.
func files(dirs []string, fresh bool) string {
	paths := list(dirs)
	var kept [][]byte
	if fresh {
		kept = make([][]byte, len(paths))
	}
	parallel(func(w, workers int) {
		buf := make([]byte, 64<<10)
		for i := w; i < len(paths); i += workers {
			fd, err := syscall.Open(paths[i], syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
			check(err)
			b := buf
			if fresh {
				var st syscall.Stat_t
				check(syscall.Fstat(fd, &st))
				b = make([]byte, min(st.Size, 64<<10))
				kept[i] = b
			}
			_, err = syscall.Pread(fd, b, 0)
			check(err)
			check(syscall.Close(fd))
		}
	})
	if fresh {
		return fmt.Sprintf("opened and read %d files, each into a new buffer", len(paths))
	}
	return fmt.Sprintf("opened and read %d files", len(paths))
}

// tree reads every file under dirs as mapped does a pair: window bytes
// mapped at a time (the tail of a file too), one word of every 64-byte
// line; the next file goes to the next free core.
func tree(dirs []string) string {
	paths := list(dirs)
	var next atomic.Int64
	var total atomic.Int64
	sums := make([]uint64, runtime.NumCPU())
	parallel(func(w, workers int) {
		var x uint64
		for {
			i := int(next.Add(1) - 1)
			if i >= len(paths) {
				break
			}
			f := openSize(paths[i])
			for off := int64(0); off < f.size; off += window {
				n := min(window, f.size-off)
				if n < 8 {
					break
				}
				m, err := syscall.Mmap(int(f.f.Fd()), off, int(n), syscall.PROT_READ, syscall.MAP_SHARED|mapPopulate)
				check(err)
				words := unsafe.Slice((*uint64)(unsafe.Pointer(&m[0])), len(m)/8)
				for j := 0; j < len(words); j += 8 {
					x ^= words[j]
				}
				check(syscall.Munmap(m))
			}
			total.Add(f.size)
			check(f.f.Close())
		}
		sums[w] = x
	})
	var s uint64
	for _, v := range sums {
		s ^= v
	}
	return fmt.Sprintf("read %d files, %d bytes, mapped (xor %x)", len(paths), total.Load(), s&0xff)
}

func opens(paths []string) string {
	parallel(func(w, workers int) {
		for i := w; i < len(paths); i += workers {
			fd, err := syscall.Open(paths[i], syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
			check(err)
			check(syscall.Close(fd))
		}
	})
	return fmt.Sprintf("opened and closed %d files", len(paths))
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		os.Exit(1)
	}
}
