package loaders

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// coldCopy copies a fixture into a temporary file and drops its pages from
// the page cache, as a file not read since boot is.
func coldCopy(t *testing.T, fixture string) string {
	t.Helper()
	data, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), filepath.Base(fixture))
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil { // dirty pages cannot be dropped
		t.Fatal(err)
	}
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		t.Fatal(err)
	}
	return path
}

// coldTensor copies testdata/npy/f4_big.npy (300,000 float32) into a
// temporary file whose pages are dropped from the page cache (coldCopy),
// and returns its path, its tensor and its data file, open until the test
// ends.
func coldTensor(t *testing.T) (string, *Tensor, *dataFile) {
	t.Helper()
	path := coldCopy(t, filepath.Join("..", "testdata", "npy", "f4_big.npy"))
	ts, _, err := OpenFile(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	f, err := openData(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return path, ts[0], f
}

// TestMapperReadsColdDataThrough maps a tensor whose file is not in the page
// cache: the Mapper reads it in before any map (the data is then cached,
// as cachestat reports) and hands out the file's bytes, in pieces and
// whole.
func TestMapperReadsColdDataThrough(t *testing.T) {
	t.Parallel()
	path, tn, f := coldTensor(t)
	var st unix.Cachestat_t
	r := unix.CachestatRange{Off: uint64(tn.data.offset), Len: uint64(tn.data.size)}
	if err := unix.Cachestat(uint(f.fd), &r, &st, 0); err != nil {
		t.Skipf("cachestat: %v (Linux 6.5 or later): nothing is read ahead", err)
	}
	if cached(f, tn.data.offset, tn.data.size) {
		t.Skip("the file system kept the pages cached: the cold path cannot be reached here")
	}
	m, err := tn.NewMapper()
	if err != nil {
		t.Fatal(err)
	}
	if m.done == nil {
		t.Fatal("no reading of the cold data was started")
	}
	<-m.done // before any map: the pages come from the reading alone
	if !cached(f, tn.data.offset, tn.data.size) {
		t.Error("the reading finished but the data is not all in the page cache")
	}
	whole, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := whole[tn.data.offset:]
	n := tn.Len()
	for _, span := range [][2]int64{{n / 2, n - n/2}, {0, n / 2}, {0, n}} {
		b, release, err := m.Bytes(span[0], span[1])
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, want[4*span[0]:4*(span[0]+span[1])]) {
			t.Errorf("elements [%d, %d): mapped bytes differ from the file's", span[0], span[0]+span[1])
		}
		release()
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestMapperCloseStopsReading closes a Mapper while it is still reading a
// cold file in: Close returns, and a later map is refused, not stuck.
func TestMapperCloseStopsReading(t *testing.T) {
	t.Parallel()
	path := coldCopy(t, filepath.Join("..", "testdata", "npy", "f4_big.npy"))
	ts, _, err := OpenFile(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := ts[0].NewMapper()
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := m.Bytes(0, 1); err == nil {
		t.Error("a closed Mapper mapped data")
	}
}

// TestReadThroughReadsOnlyWhatIsEvicted reads a file whose pages are all
// cached but those of one piece: only that piece is read, the others are
// passed over (each piece reported done all the same), and the file ends
// all in the cache.
func TestReadThroughReadsOnlyWhatIsEvicted(t *testing.T) {
	t.Parallel()
	const piece, pieces = 64 << 10, 6
	path := filepath.Join(t.TempDir(), "data.bin")
	if err := os.WriteFile(path, bytes.Repeat([]byte{7}, piece*pieces), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := openData(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Fsync(f.fd); err != nil { // dirty pages cannot be dropped
		t.Fatal(err)
	}
	var st unix.Cachestat_t
	if err := unix.Cachestat(uint(f.fd), &unix.CachestatRange{Len: piece * pieces}, &st, 0); err != nil {
		t.Skipf("cachestat: %v (Linux 6.5 or later): nothing is read ahead", err)
	}
	// all evicted, then all read back but piece 2, without readahead
	if err := unix.Fadvise(f.fd, 0, 0, unix.FADV_DONTNEED); err != nil {
		t.Fatal(err)
	}
	if err := unix.Fadvise(f.fd, 0, 0, unix.FADV_RANDOM); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, piece)
	for k := range int64(pieces) {
		if k == 2 {
			continue
		}
		if _, err := f.ReadAt(buf, k*piece); err != nil {
			t.Fatal(err)
		}
	}
	if cached(f, 2*piece, piece) || !cached(f, 0, 2*piece) || !cached(f, 3*piece, 3*piece) {
		t.Skip("the file system did not evict or keep pages as asked: a file cached but for one piece cannot be made here")
	}
	if err := unix.Fadvise(f.fd, 0, 0, unix.FADV_NORMAL); err != nil {
		t.Fatal(err)
	}
	var ends []int64
	read := readThrough(f, 0, piece*pieces, piece, func() bool { return false }, func(end int64) { ends = append(ends, end) })
	if read != piece {
		t.Errorf("read %d bytes through, want %d (the evicted piece alone)", read, piece)
	}
	want := []int64{piece, 2 * piece, 3 * piece, 4 * piece, 5 * piece, 6 * piece}
	if !slices.Equal(ends, want) {
		t.Errorf("progress reported %v, want %v", ends, want)
	}
	if !cached(f, 0, piece*pieces) {
		t.Error("the reading finished but the file is not all in the page cache")
	}
}

// TestMapperMapsMoreThanItReadsAhead maps a whole cold tensor of more bytes
// than the reading may go ahead of the last map (a parameter of more than
// 256 MiB, whole, as the update measurement maps it; here 1.2 MB against
// 64 KiB read 16 KiB at a time): the map is handed out with the file's
// bytes, it does not wait for a reading that waits for it.
func TestMapperMapsMoreThanItReadsAhead(t *testing.T) {
	t.Parallel()
	path, tn, f := coldTensor(t)
	if cached(f, tn.data.offset, tn.data.size) {
		t.Skip("the file system kept the pages cached: the cold path cannot be reached here")
	}
	m, err := tn.newMapper(16<<10, 64<<10)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if m.done == nil {
		t.Fatal("no reading of the cold data was started")
	}
	got := make(chan []byte, 1)
	go func() {
		b, release, err := m.Bytes(0, tn.Len())
		if err != nil {
			t.Error(err)
			got <- nil
			return
		}
		got <- bytes.Clone(b)
		release()
	}()
	select {
	case b := <-got:
		whole, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if b != nil && !bytes.Equal(b, whole[tn.data.offset:]) {
			t.Error("the mapped bytes differ from the file's")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("mapping the whole tensor waited 30 s for a reading that waits for a map")
	}
}

// TestKeepMapsSharesOneMap: the tensor of an entry that keeps its maps is
// mapped once, whole: every piece any Mapper asks for, before
// ReleaseMaps, is a slice of that one map, with the file's values; the map
// outlives its slices until ReleaseMaps, and goes once the last slice in
// use is released; pieces asked for afterwards are mapped apart.
func TestKeepMapsSharesOneMap(t *testing.T) {
	path := filepath.Join("..", "testdata", "npy", "f4_big.npy")
	e := &Entry{Tensor: openOne(t, path, Options{})}
	want := readC(t, e.Tensor, 1000)
	n := e.Len()
	before := wholeMapped.Load()
	e.KeepMaps()
	w := e.data.whole
	if w == nil {
		t.Fatalf("%s (%d bytes) keeps no whole map", path, e.data.size)
	}
	values := func(b []byte) []float64 {
		v, ok := native32(b, false)
		if !ok {
			t.Fatal("map not aligned for float32")
		}
		out := make([]float64, len(v))
		for i, x := range v {
			out[i] = float64(x)
		}
		return out
	}
	var entered int64
	defer func(f func([]byte)) { enterPages = f }(enterPages)
	enterPages = func(b []byte) { entered += int64(len(b)); populate(b) }
	m1, err := e.NewMapper()
	if err != nil {
		t.Fatal(err)
	}
	defer m1.Close()
	head, relHead, err := m1.Bytes(0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	tail, relTail, err := m1.Bytes(1000, n-1000)
	if err != nil {
		t.Fatal(err)
	}
	m2, err := e.NewMapper() // a later comparison of the same tensor
	if err != nil {
		t.Fatal(err)
	}
	defer m2.Close()
	all, relAll, err := m2.Bytes(0, n)
	if err != nil {
		t.Fatal(err)
	}
	if entered != e.data.size {
		t.Errorf("%d bytes entered into the page tables for two pieces and the whole again, want the tensor's %d, once", entered, e.data.size)
	}
	if &head[0] != &all[0] || &tail[0] != &all[4000] {
		t.Fatal("pieces of one tensor asked for by two mappers are not slices of one map")
	}
	checkValues(t, values(slices.Concat(head, tail)), want)
	checkValues(t, values(all), want)
	if got := wholeMapped.Load() - before; got != e.data.size {
		t.Errorf("whole maps hold %d bytes more, want the tensor's %d", got, e.data.size)
	}
	relHead()
	relTail()
	relAll()
	if w.data == nil {
		t.Fatal("the map went with its slices, before ReleaseMaps")
	}
	again, relAgain, err := m2.Bytes(500, 10)
	if err != nil {
		t.Fatal(err)
	}
	e.ReleaseMaps()
	if w.data == nil {
		t.Fatal("the map went at ReleaseMaps while a slice of it was in use")
	}
	checkValues(t, values(again), want[500:510])
	relAgain()
	if w.data != nil || wholeMapped.Load() != before {
		t.Fatalf("the map stayed after its last slice was released (%d bytes held)", wholeMapped.Load()-before)
	}
	apart, relApart, err := m2.Bytes(0, n)
	if err != nil {
		t.Fatal(err)
	}
	defer relApart()
	checkValues(t, values(apart), want)
	if w.data != nil {
		t.Error("a piece asked for after ReleaseMaps made a whole map again")
	}
}

// TestKeepMapsWithinBudget: a tensor that would take the whole maps past
// their budget is mapped piece by piece, with the same values.
func TestKeepMapsWithinBudget(t *testing.T) {
	path := filepath.Join("..", "testdata", "npy", "f4_big.npy")
	e := &Entry{Tensor: openOne(t, path, Options{})}
	want := readC(t, e.Tensor, 1000)
	defer func(b int64) { wholeMapBudget = b }(wholeMapBudget)
	wholeMapBudget = wholeMapped.Load() + e.data.size - 1
	e.KeepMaps()
	defer e.ReleaseMaps()
	m, err := e.NewMapper()
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	b, release, err := m.Bytes(0, e.Len())
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if e.data.whole.data != nil || !e.data.whole.declined {
		t.Fatal("a whole map was made past the budget")
	}
	v, _ := native32(b, false)
	got := make([]float64, len(v))
	for i, x := range v {
		got[i] = float64(x)
	}
	checkValues(t, got, want)
}
