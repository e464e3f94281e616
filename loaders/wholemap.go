package loaders

import (
	"os"
	"sync"
	"sync/atomic"
	"unsafe"
)

// wholeMap is a tensor's data mapped once, whole, and kept from the first
// map of any of it until ReleaseMaps (see Entry.KeepMaps): a parameter
// compared at one step and read again by the updates of that step and
// the next costs one mmap and one munmap, not one each per chunk and per
// reading. Each piece asked for is entered into the page tables as it is
// asked for (populate), on the goroutine that asked, so that chunks of one
// tensor still fill their pages in parallel.
type wholeMap struct {
	mu sync.Mutex
	// data are the tensor's bytes in the map, nil before the first map,
	// after the unmapping, or when declined; unmap unmaps them.
	data  []byte
	unmap func()
	// users counts the slices given out and not yet released; the map
	// goes once ReleaseMaps was called and users is 0.
	users    int
	released bool
	// entered marks, by granule of the map (granule bytes from the page
	// the data starts on), what populate has entered into the page
	// tables: a piece asked for again (the update that reads a parameter
	// the comparison read) enters only what is not.
	entered []uint64
	// declined: no whole map for this tensor (over the budget, or the
	// map failed); pieces are mapped one by one as without KeepMaps.
	declined bool
}

// wholeMapped is the bytes of all whole maps now held, at most
// wholeMapBudget.
var wholeMapped atomic.Int64

// wholeMapBudget is the most bytes whole maps may hold at once: a quarter
// of the machine's memory (wholeMapFraction), so that the pages they keep
// entered in the page tables (file pages of the page cache, not the
// process's own memory) never crowd out what the comparison needs; a
// tensor past it is mapped piece by piece as before. 0 where the system
// has no whole maps.
var wholeMapBudget = physicalMemory() / wholeMapFraction

const wholeMapFraction = 4

// wholeMapMin is the smallest tensor kept whole, in bytes: below it a
// tensor is read, not mapped (the comparison maps from 1 MiB).
const wholeMapMin = 1 << 20

// KeepMaps asks that the data of this resolved entry, when it is mapped,
// be mapped whole and kept so until ReleaseMaps, Release leaving it: the
// readings of one tensor by several comparisons (a pair, then the update
// of its step and of the next) share one map. Entries under 1 MiB, not
// mappable in place, or past the budget of whole maps (a quarter of
// physical memory in all) are mapped as before.
func (e *Entry) KeepMaps() {
	if e.Tensor == nil || !e.Mappable() || e.data.size < wholeMapMin || wholeMapBudget == 0 || e.data.whole != nil {
		return
	}
	e.data.whole = &wholeMap{}
}

// ReleaseMaps unmaps the whole map of KeepMaps once no slice of it is in
// use; later maps of the data are made piece by piece.
func (e *Entry) ReleaseMaps() {
	if e.Tensor == nil || e.data.whole == nil {
		return
	}
	w := e.data.whole
	w.mu.Lock()
	w.released = true
	w.unmapIfUnused()
	w.mu.Unlock()
}

// slice returns bytes [off, off+n) of file f (offsets in the file) from
// t's whole map, mapping it on first use, entered into the page tables,
// with the function that releases it; false when the map is not kept
// (declined, released, or it failed), and the caller maps the piece
// itself.
func (w *wholeMap) slice(t *Tensor, f *dataFile, off, n int64) ([]byte, func(), bool) {
	w.mu.Lock()
	if w.released || w.declined {
		w.mu.Unlock()
		return nil, nil, false
	}
	if w.data == nil {
		size := t.data.size
		if wholeMapped.Add(size) > wholeMapBudget {
			wholeMapped.Add(-size)
			w.declined = true
			w.mu.Unlock()
			return nil, nil, false
		}
		data, unmap, err := mapWhole(f, t.data.offset, size)
		if err != nil {
			wholeMapped.Add(-size)
			w.declined = true
			w.mu.Unlock()
			return nil, nil, false
		}
		w.data, w.unmap = data, unmap
		w.entered = make([]uint64, (w.granules()+63)/64)
	}
	w.users++
	from, to := off-t.data.offset, off-t.data.offset+n
	b := w.data[from:to:to]
	w.enter(from, to)
	w.mu.Unlock()
	var once sync.Once
	return b, func() {
		once.Do(func() {
			w.mu.Lock()
			w.users--
			w.unmapIfUnused()
			w.mu.Unlock()
		})
	}, true
}

// enterPages is populate; tests count its calls.
var enterPages = populate

// granule is the unit in which a whole map's pages are entered into the
// page tables: 16 pages of 4 KiB.
const granule = 64 << 10

// lead returns how far the data starts past the page it starts on: the
// first granule starts there.
func (w *wholeMap) lead() int64 {
	return int64(uintptr(unsafe.Pointer(unsafe.SliceData(w.data))) & uintptr(os.Getpagesize()-1))
}

// granules returns how many granules the map spans.
func (w *wholeMap) granules() int64 { return (w.lead() + int64(len(w.data)) + granule - 1) / granule }

// enter enters the granules that hold data bytes [from, to) into the page
// tables, those not entered before, runs of them at a time, and marks
// them. Called with w.mu held, which it lets go of while it enters.
func (w *wholeMap) enter(from, to int64) {
	if from >= to {
		return
	}
	lead := w.lead()
	g0, g1 := (lead+from)/granule, (lead+to+granule-1)/granule
	isSet := func(g int64) bool { return w.entered[g/64]&(1<<(g%64)) != 0 }
	for g := g0; g < g1; {
		if isSet(g) {
			g++
			continue
		}
		end := g + 1
		for end < g1 && !isSet(end) {
			end++
		}
		lo, hi := max(g*granule-lead, 0), min(end*granule-lead, int64(len(w.data)))
		w.mu.Unlock()
		enterPages(w.data[lo:hi])
		w.mu.Lock()
		for k := g; k < end; k++ {
			w.entered[k/64] |= 1 << (k % 64)
		}
		g = end
	}
}

// unmapIfUnused unmaps the map once it is released and no slice of it is
// in use. Called with w.mu held.
func (w *wholeMap) unmapIfUnused() {
	if !w.released || w.users > 0 || w.data == nil {
		return
	}
	w.unmap()
	wholeMapped.Add(-int64(len(w.data))) // what slice charged: the tensor's bytes
	w.data, w.unmap = nil, nil
}

// WholeMapped returns the bytes the whole maps of KeepMaps hold now.
func WholeMapped() int64 { return wholeMapped.Load() }
