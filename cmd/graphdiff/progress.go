package main

import (
	"io"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
)

// progressMinBytes is how much data a comparison must read before a
// progress bar is worth showing: below it, a comparison takes well under a
// second.
var progressMinBytes int64 = 256 << 20 // a variable so tests can lower it

// progress is a byte-count progress bar on stderr, or nothing.
type progress struct {
	p   *mpb.Progress
	bar *mpb.Bar
}

// startProgress shows a bar when stderr is a terminal and the comparison
// reads total bytes, enough to take a while; otherwise it returns a
// progress that does nothing.
func startProgress(stderr io.Writer, terminal bool, total int64) *progress {
	if !terminal || total < progressMinBytes {
		return &progress{}
	}
	// The caller has decided that stderr is a terminal, so refresh whatever
	// mpb makes of the writer.
	p := mpb.New(mpb.WithOutput(stderr), mpb.WithWidth(40), mpb.WithAutoRefresh())
	bar := p.AddBar(total,
		mpb.PrependDecorators(decor.Name("comparing "), decor.CountersKibiByte("% .1f / % .1f")),
		mpb.AppendDecorators(decor.Percentage(), decor.Name(" "), decor.AverageSpeed(decor.SizeB1024(0), "% .0f")),
	)
	return &progress{p: p, bar: bar}
}

func (pr *progress) add(n int64) {
	if pr.bar != nil {
		pr.bar.IncrInt64(n)
	}
}

func (pr *progress) finish() {
	if pr.p == nil {
		return
	}
	pr.bar.SetTotal(-1, true) // complete, whatever was counted
	pr.p.Wait()
}
