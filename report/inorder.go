package report

import "runtime"

// inOrder encodes pieces of a document concurrently and hands them to
// the writer in order, reusing their buffers: at most 2·GOMAXPROCS+2
// pieces exist at once (about two per processor ahead of the writer), so
// what it holds does not grow with the document. The zero value is ready;
// one inOrder may run several times in turn, keeping its pieces.
type inOrder[B any] struct {
	free chan *piece[B] // written pieces, to encode again
	made int            // pieces made: at most cap(free)
}

// piece is one piece of work: its buffers, its index, and done, closed
// once it is encoded.
type piece[B any] struct {
	buf  B
	k    int
	done chan struct{}
}

// init makes the free list on first use.
func (o *inOrder[B]) init() {
	if o.free == nil {
		o.free = make(chan *piece[B], 2*runtime.GOMAXPROCS(0)+2)
	}
}

// take returns a written piece to encode again, or a new one while fewer
// than cap(free) were made, else waits for the writer to free one.
func (o *inOrder[B]) take() *piece[B] {
	o.init()
	select {
	case p := <-o.free:
		return p
	default:
	}
	if o.made < cap(o.free) {
		o.made++
		return new(piece[B])
	}
	return <-o.free
}

// run calls encode(k, buf) for k = 0 … n−1, concurrently, and write(k,
// buf) with each in order of k on the calling goroutine; a buffer is
// encoded again only after it was written. One piece is encoded where it
// is written, with no goroutine.
func (o *inOrder[B]) run(n int, encode func(k int, b *B), write func(k int, b *B)) {
	if n == 1 {
		p := o.take()
		encode(0, &p.buf)
		write(0, &p.buf)
		o.free <- p
		return
	}
	o.init()
	queue := make(chan *piece[B], cap(o.free)-2)
	go func() {
		defer close(queue)
		for k := range n {
			p := o.take()
			p.k, p.done = k, make(chan struct{})
			queue <- p // waits while the writer is far behind
			go func() {
				defer close(p.done)
				encode(k, &p.buf)
			}()
		}
	}()
	for p := range queue {
		<-p.done
		write(p.k, &p.buf)
		o.free <- p
	}
}
