//go:build unix

// Command floor measures what reading the inputs alone costs on this
// machine, the floor under any comparison of them:
//
//	floor map A B        map two files and read every 8-byte word of both
//	                     once, on all cores (the bytes of a large pair)
//	floor files DIR...   open, read (up to 64 KiB) and close every file
//	                     under the directories once, on all cores (the
//	                     per-file cost of many small tensors)
//
// It prints the elapsed time inside the process, the median of 3 rounds.
package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

func main() {
	if len(os.Args) < 3 || (os.Args[1] == "map" && len(os.Args) != 4) || (os.Args[1] != "map" && os.Args[1] != "files") {
		fmt.Fprintln(os.Stderr, "usage: floor map A B | floor files DIR...")
		os.Exit(2)
	}
	var rounds []time.Duration
	for range 3 {
		start := time.Now()
		var what string
		if os.Args[1] == "map" {
			what = mapped(os.Args[2], os.Args[3])
		} else {
			what = files(os.Args[2:])
		}
		rounds = append(rounds, time.Since(start))
		if len(rounds) == 3 {
			sort.Slice(rounds, func(i, j int) bool { return rounds[i] < rounds[j] })
			fmt.Printf("%s: %.3f s (median of 3)\n", what, rounds[1].Seconds())
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

func mapped(pathA, pathB string) string {
	a, b := mapWords(pathA), mapWords(pathB)
	n := min(len(a), len(b))
	sums := make([]uint64, runtime.NumCPU())
	parallel(func(w, workers int) {
		lo, hi := n*w/workers, n*(w+1)/workers
		var x, y, z, q uint64 // four chains, so that loads, not xors, bound the loop
		i := lo
		for ; i+4 <= hi; i += 4 {
			x ^= a[i] ^ b[i]
			y ^= a[i+1] ^ b[i+1]
			z ^= a[i+2] ^ b[i+2]
			q ^= a[i+3] ^ b[i+3]
		}
		for ; i < hi; i++ {
			x ^= a[i] ^ b[i]
		}
		sums[w] = x ^ y ^ z ^ q
	})
	var s uint64
	for _, v := range sums {
		s ^= v
	}
	return fmt.Sprintf("read 2 x %d bytes mapped (xor %x)", 8*n, s)
}

func mapWords(path string) []uint64 {
	f, err := os.Open(path)
	check(err)
	defer f.Close()
	st, err := f.Stat()
	check(err)
	m, err := syscall.Mmap(int(f.Fd()), 0, int(st.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	check(err)
	return unsafe.Slice((*uint64)(unsafe.Pointer(&m[0])), len(m)/8)
}

func files(dirs []string) string {
	var paths []string
	for _, d := range dirs {
		check(filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
			if err == nil && e.Type().IsRegular() {
				paths = append(paths, p)
			}
			return err
		}))
	}
	parallel(func(w, workers int) {
		buf := make([]byte, 64<<10)
		for i := w; i < len(paths); i += workers {
			fd, err := syscall.Open(paths[i], syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
			check(err)
			_, err = syscall.Pread(fd, buf, 0)
			check(err)
			check(syscall.Close(fd))
		}
	})
	return fmt.Sprintf("opened and read %d files", len(paths))
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		os.Exit(1)
	}
}
