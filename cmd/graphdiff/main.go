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

// softMemoryLimit is the Go heap size past which the garbage collector
// works harder (see runtime/debug.SetMemoryLimit), unless GOMEMLIMIT says
// otherwise. graphdiff's live heap stays far below it (about 1.5 KiB per
// tensor pair plus fixed buffers); without a limit the heap may grow to
// twice the live size between collections, which for 50,000 pairs would
// pass the 256 MiB that graphdiff promises. It is a soft limit: a larger
// live heap is never refused, only collected more often.
const softMemoryLimit = 160 << 20

func main() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(softMemoryLimit)
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
