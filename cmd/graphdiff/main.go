// Command graphdiff compares tensor dumps of an eager PyTorch run and a
// CUDA-graphed run and says whether they agree, where they first diverged,
// and the most likely cause.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/graphdiff/graphdiff/report"
)

// exitInterrupted is the exit status after SIGINT, SIGTERM, SIGHUP or
// SIGQUIT: 128 + 2, as shells report a process killed by SIGINT.
const exitInterrupted = 130

func main() {
	if os.Getenv("GOGC") == "" && os.Getenv("GOMEMLIMIT") == "" {
		planHeap()
	}
	stopOnSignal()
	os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// stopOnSignal makes SIGINT, SIGTERM, SIGHUP (the terminal went away) and
// SIGQUIT stop graphdiff at once, leaving behind only whole reports: those
// already written are kept, those being written are removed (see
// report.RemovePartial). graphdiff writes nothing else, so there is nothing
// more to clean up. (SIGKILL cannot be caught: a report being written has
// no name until it is renamed into place, where the file system allows it,
// see report.WriteFile; elsewhere it stays as its temporary file,
// .NAME.tmp-*, beside it.)
func stopOnSignal() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	go func() {
		sig := <-ch
		report.RemovePartial()
		fmt.Fprintf(os.Stderr, "graphdiff: %v: stopped; reports already written are kept, none is left half-written\n", sig)
		os.Exit(exitInterrupted)
	}()
}
