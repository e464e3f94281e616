package main

import (
	"math"
	"runtime/debug"
	"testing"
)

// limitNow reads the memory limit in force without changing it.
func limitNow() int64 { return debug.SetMemoryLimit(-1) }

// TestHeapPlanFollowsWhatIsListed checks the collector's plan (not
// started: no watch) as a comparison is listed and paired: the limit grows
// with the files found and the pairs planned and never shrinks, a switch
// to largeGCPercent is undone when the limit grows past the live heap,
// and a shard's budget stands whatever is expected. Not parallel: it sets
// the process's memory limit and GOGC.
func TestHeapPlanFollowsWhatIsListed(t *testing.T) {
	oldLimit, oldPercent := limitNow(), debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetMemoryLimit(oldLimit); debug.SetGCPercent(oldPercent) })

	h := &heapPlan{limit: softMemoryLimit} // as planHeap starts it
	debug.SetMemoryLimit(softMemoryLimit)
	debug.SetGCPercent(-1)
	h.files(1000) // 2 MiB: within the limit
	if got := limitNow(); got != softMemoryLimit {
		t.Errorf("after 1,000 files: limit %d, want %d", got, softMemoryLimit)
	}
	h.files(60_000)
	h.files(40_000) // 101,000 files in all, from two walks
	if want := int64(101_000) * bytesPerFile; limitNow() != want || h.limit != want {
		t.Errorf("after 101,000 files: limit %d (plan %d), want %d", limitNow(), h.limit, want)
	}
	h.expect(50_000 * bytesPerPair) // fewer bytes than the files said: kept
	if want := int64(101_000) * bytesPerFile; limitNow() != want {
		t.Errorf("after 50,000 pairs: limit %d, want %d kept", limitNow(), want)
	}

	h.observe(switchLive(h.limit)) // at the switch: not past it
	if h.switched || debug.SetGCPercent(-1) != -1 {
		t.Errorf("live heap at switchLive: switched %v", h.switched)
	}
	h.observe(switchLive(h.limit) + 1)
	if !h.switched || limitNow() != math.MaxInt64 || debug.SetGCPercent(largeGCPercent) != largeGCPercent {
		t.Errorf("live heap past switchLive: switched %v, limit %d; want GOGC %d without a limit", h.switched, limitNow(), largeGCPercent)
	}
	h.expect(1 << 40)
	if h.switched || limitNow() != 1<<40 || debug.SetGCPercent(-1) != -1 {
		t.Errorf("a limit far above the live heap: switched %v, limit %d; want the limit back, the collector off below it", h.switched, limitNow())
	}

	h.holdTo(shardHeapLimit)
	h.expect(1 << 40)
	h.files(1 << 20)
	if limitNow() != shardHeapLimit {
		t.Errorf("a shard's budget: limit %d after more was expected, want %d", limitNow(), shardHeapLimit)
	}
	h.observe(shardHeapLimit * 2) // live past the budget: the runtime bounds the collector's time
	if h.switched || limitNow() != shardHeapLimit {
		t.Errorf("a shard whose live heap passes its budget: switched %v, limit %d; want the budget kept", h.switched, limitNow())
	}

	var none *heapPlan // GOGC or GOMEMLIMIT set: nothing is steered
	debug.SetMemoryLimit(oldLimit)
	none.files(1 << 20)
	none.expect(1 << 40)
	none.holdTo(1 << 20)
	if limitNow() != oldLimit {
		t.Errorf("a nil plan changed the limit to %d", limitNow())
	}
}
