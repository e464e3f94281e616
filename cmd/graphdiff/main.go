// Command graphdiff compares tensor dumps of an eager PyTorch run and a
// CUDA-graphed run and says whether they agree, where they first diverged,
// and the most likely cause.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/graphdiff/graphdiff/report"
)

// exitInterrupted is the exit status after SIGINT or SIGTERM: 128 + 2, as
// shells report a process killed by SIGINT.
const exitInterrupted = 130

// gcPercent is the garbage collector's target (see runtime/debug.SetGCPercent),
// unless GOGC or GOMEMLIMIT say otherwise: a collection starts once the
// heap has grown by 25% over what the last one left live, so the heap
// stays within 1.25× the live size (Go's default, 100, lets it reach 2×).
// graphdiff's live heap grows with the number of tensor pairs (about
// 3 KiB each, for their results and the values kept for diagnosis). Each
// collection costs in proportion to the live heap and comes after a
// quarter of it has been allocated, so collecting costs a fixed share of
// the work however many pairs there are: time stays linear in the pairs.
// A fixed memory limit instead, once the live heap nears it, collects
// ever more often: with a soft limit of 160 MiB, 100,000 pairs took 2.7×
// the time of 50,000.
const gcPercent = 25

func main() {
	if os.Getenv("GOGC") == "" && os.Getenv("GOMEMLIMIT") == "" {
		debug.SetGCPercent(gcPercent)
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
