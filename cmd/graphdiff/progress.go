package main

import (
	"io"
	"os"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/cwriter"
	"github.com/vbauerster/mpb/v8/decor"
)

// progressLimits say when a comparison shows a progress bar.
type progressLimits struct {
	// minBytes is how much data a comparison must read before a bar is
	// considered (progressMinBytes).
	minBytes int64
	// delay is how long a comparison runs before its bar is drawn
	// (progressDelay); 0 draws it at once.
	delay time.Duration
}

const (
	// progressMinBytes is graphdiff compare's progressLimits.minBytes:
	// below it, a comparison takes well under a second.
	progressMinBytes = 32 << 20
	// progressDelay is graphdiff compare's progressLimits.delay: work that
	// ends sooner shows no bar.
	progressDelay = 500 * time.Millisecond
)

// progressWidth is the width of the bar's line where the terminal does not
// say its own (a pty that reports 0 columns, as `script` makes).
const progressWidth = 80

// progress is a byte-count progress bar on stderr, or nothing.
type progress struct {
	p   *mpb.Progress
	bar *mpb.Bar
}

// startProgress shows a bar when stderr is a terminal (show: the caller
// also knows stdout is no machine format) and the comparison reads total
// bytes, at least limits.minBytes, drawn once the work has taken
// limits.delay; otherwise it returns a progress that does nothing.
func startProgress(stderr io.Writer, show bool, total int64, limits progressLimits) *progress {
	if !show || total < limits.minBytes {
		return &progress{}
	}
	out := stderr
	if f, ok := stderr.(*os.File); ok {
		if w, _, err := cwriter.GetSize(int(f.Fd())); err != nil || w <= 0 {
			// a terminal of unknown width: mpb would draw nothing on it;
			// hidden behind a plain writer, it draws progressWidth columns
			out = struct{ io.Writer }{stderr}
		}
	}
	opts := []mpb.ContainerOption{mpb.WithOutput(out), mpb.WithWidth(progressWidth), mpb.WithAutoRefresh()}
	if limits.delay > 0 {
		start := make(chan struct{})
		time.AfterFunc(limits.delay, func() { close(start) })
		opts = append(opts, mpb.WithRenderDelay(start))
	}
	p := mpb.New(opts...)
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
