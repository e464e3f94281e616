// Command graphdiff compares tensor dumps of an eager PyTorch run and a
// CUDA-graphed run and says whether they agree, where they first diverged,
// and the most likely cause.
package main

import (
	"fmt"
	"math"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/graphdiff/graphdiff/report"
)

// exitInterrupted is the exit status after SIGINT or SIGTERM: 128 + 2, as
// shells report a process killed by SIGINT.
const exitInterrupted = 130

// softMemoryLimit is the Go heap size past which the garbage collector
// works harder (see runtime/debug.SetMemoryLimit), the setting graphdiff
// starts with unless GOGC or GOMEMLIMIT say otherwise. While the live heap
// stays well below it, collections are rare and cheap: each costs in
// proportion to the live heap and comes after limit − live bytes of
// allocation. A comparison of many small files runs 25% faster so than
// with GOGC 25 (16,000 pairs: 0.37 s against 0.47 s).
const softMemoryLimit = 160 << 20

// largeGCPercent is the collector's target for comparisons whose live heap
// would approach softMemoryLimit (tuneGC): a collection starts once the
// heap has grown by 25% over what the last one left live, so the heap
// stays within 1.25× the live size, and since each collection comes after
// a quarter of the live heap has been allocated, collecting costs a fixed
// share of the work however many pairs there are: time stays linear in
// the pairs. Near a fixed limit, collections come ever more often: under
// the 160 MiB limit alone, 100,000 pairs took 2.8× the time of 50,000.
const largeGCPercent = 25

// largeRunPairs is the number of pairs past which tuneGC switches to
// largeGCPercent: the live heap grows by about 2.3 KiB a pair (results,
// names and the values kept for diagnosis), and under the limit
// collections cost less than at GOGC 25 only while the live heap is below
// 0.8 of it (limit − live > live/4), which 40,000 pairs stay under.
const largeRunPairs = 40_000

// gcTuned is set when graphdiff chose the collector's settings (neither
// GOGC nor GOMEMLIMIT was set).
var gcTuned bool

// tuneGC sets the collector for a comparison of n pairs (see
// largeGCPercent), unless the environment chose its settings.
func tuneGC(n int) {
	if gcTuned && n > largeRunPairs {
		debug.SetGCPercent(largeGCPercent)
		debug.SetMemoryLimit(math.MaxInt64)
	}
}

func main() {
	if os.Getenv("GOGC") == "" && os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(softMemoryLimit)
		gcTuned = true
	}
	stopOnSignal()
	os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// stopOnSignal makes SIGINT and SIGTERM stop graphdiff at once, leaving
// behind only whole reports: those already written are kept, those being
// written are removed (see report.RemovePartial). graphdiff writes nothing
// else, so there is nothing more to clean up.
func stopOnSignal() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		sig := <-ch
		report.RemovePartial()
		fmt.Fprintf(os.Stderr, "graphdiff: %v: stopped; reports already written are kept, none is left half-written\n", sig)
		os.Exit(exitInterrupted)
	}()
}
