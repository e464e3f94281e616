package main

import (
	"math"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"
)

// softMemoryLimit is the Go heap size at which the garbage collector
// first runs (see runtime/debug.SetMemoryLimit): graphdiff starts with
// the collector otherwise off (GOGC=off), unless GOGC or GOMEMLIMIT say
// otherwise. While the live heap stays well below the limit, collections
// are rare and cheap: each costs in proportion to the live heap and comes
// after limit − live bytes of allocation, and a run that allocates less
// than the limit in all never collects. The price is a heap that may grow
// to the limit whatever the live size. A comparison of many small files
// runs faster so than with GOGC 25 or with GOGC 100 under the limit
// (bench/README.md).
const softMemoryLimit = 160 << 20

// bytesPerPair is the memory a comparison is planned to take per pair of
// tensors, all stages together: what each pair's entries, results, names
// and the values kept for diagnosis leave live at the end of the
// comparison, and the growth to 1.5× that between collections
// (bench/README.md). shardAdvice quotes it, and heapPlan lets the heap
// grow to it (bytesPerFile for each file listed, half of it, before the
// pairs are known).
const (
	bytesPerPair = 4 << 10
	bytesPerFile = bytesPerPair / 2
)

// largeGCPercent is the collector's target once the live heap nears the
// limit (heapPlan.watch): a collection starts once the heap has grown by
// 50% over what the last one left live, so the heap stays within 1.5×
// the live size, and since each collection costs in proportion to the
// live heap and comes after half of it has been allocated, collecting
// costs a fixed share of the work however large the live heap. Near a
// fixed limit, collections come ever more often, and a lower GOGC collects
// more per byte allocated (bench/README.md).
const largeGCPercent = 50

// heapPlan steers the collector of one graphdiff process. It starts
// under softMemoryLimit with the collector otherwise off, and the limit
// grows with what the comparison will hold as soon as that is known
// (expect): bytesPerFile for each tensor file the walk finds, then
// bytesPerPair for each pair. A run of n pairs so plans for a heap of
// about n × 4 KiB from the start and collects a few times near its end,
// not every time its heap grows by half while it is listed and compared:
// each collection scans all that is live, and so the time stays linear in
// the pairs, for the price of the heap the plan allows (bench/README.md).
//
// The live heap is read every 10 ms (watch): once it passes
// limit × 100/(100+largeGCPercent), collections under the limit would come
// after less than live × largeGCPercent/100 bytes of allocation, and the
// collector turns to GOGC largeGCPercent without a limit; when expect
// raises the limit past that point again, the limit returns. The heap is
// limit = live × (1+g/100) at the switch either way: it neither grows nor
// shrinks the heap, and the cost of collecting per byte allocated is the
// same on both sides of it.
type heapPlan struct {
	mu       sync.Mutex
	limit    int64
	switched bool  // to largeGCPercent, no limit
	listed   int64 // tensor files listed (files)
	budget   bool  // held to the limit (holdTo)
}

// heap is the process's plan; nil when GOGC or GOMEMLIMIT is set, whose
// settings stand.
var heap *heapPlan

// planHeap starts the plan: the collector off under softMemoryLimit.
func planHeap() {
	heap = &heapPlan{limit: softMemoryLimit}
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(softMemoryLimit)
	go heap.watch()
}

// switchLive is the live heap past which the plan turns to
// largeGCPercent: limit × 100/(100+largeGCPercent), where collecting
// under the limit starts to cost more per byte allocated than at
// largeGCPercent.
func switchLive(limit int64) uint64 {
	return uint64(limit) * 100 / (100 + largeGCPercent)
}

// liveHeap is the heap the last collection left live; 0 before any.
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// watch reads the live heap every 10 ms (observe).
func (h *heapPlan) watch() {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for range tick.C {
		h.observe(liveHeap())
	}
}

// observe switches to largeGCPercent without a limit once the live heap
// passes switchLive of the limit, unless the limit is a budget.
func (h *heapPlan) observe(live uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.switched && !h.budget && live > switchLive(h.limit) {
		debug.SetGCPercent(largeGCPercent)
		debug.SetMemoryLimit(math.MaxInt64)
		h.switched = true
	}
}

// expect raises the limit to bytes when that is more: what the comparison
// is now known to hold at its peak. A nil plan does nothing.
func (h *heapPlan) expect(bytes int64) {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.raise(bytes)
}

// files is expect for the tensor files listed so far, counted across
// calls (both runs' walks call it at once).
func (h *heapPlan) files(n int) {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.listed += int64(n)
	h.raise(h.listed * bytesPerFile)
}

// raise is expect with h.mu held; a budget (holdTo) is not raised.
func (h *heapPlan) raise(bytes int64) {
	if bytes > h.limit && !h.budget {
		h.setLimit(bytes)
	}
}

// setLimit makes bytes the limit, with h.mu held. Where the plan had
// switched to largeGCPercent, the limit returns if the live heap is below
// its switch point now, or for good for a budget.
func (h *heapPlan) setLimit(bytes int64) {
	h.limit = bytes
	if h.switched && (h.budget || liveHeap() < switchLive(h.limit)) {
		h.switched = false
		debug.SetGCPercent(-1)
	}
	if !h.switched {
		debug.SetMemoryLimit(h.limit)
	}
}

// shardHeapLimit is the memory a shard holds to (holdTo): shardAdvice
// promises shards under 256 MiB, and the Go runtime's own memory beside
// its heap (stacks, metadata) and what the collector cannot return at
// once take the rest.
const shardHeapLimit = 224 << 20

// holdTo holds the process to a limit of bytes for good: a shard, asked
// for to stay within a memory budget, collects more often rather than
// grow, and never switches to largeGCPercent. The Go runtime keeps the
// collector to about half of the processors' time however close the live
// heap comes to the limit (runtime/debug.SetMemoryLimit), and a live
// heap past the limit grows the heap no further than it; held so, the
// shards the advice gives stay within its 256 MiB, for a little more time
// (shardHeapLimit, bench/README.md). A nil plan does nothing.
func (h *heapPlan) holdTo(bytes int64) {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.budget = true
	h.setLimit(bytes)
}
