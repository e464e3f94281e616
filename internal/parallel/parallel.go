// Package parallel runs independent pieces of work on several goroutines.
package parallel

import (
	"sync"
	"sync/atomic"
)

// For calls f(i) for every i in [0, n), on up to workers goroutines that
// take the next i as they finish the last, and returns when all calls
// have returned. f must be safe to call concurrently for different i;
// results go to per-i places the caller reads afterwards.
func For(n, workers int, f func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(max(workers, 1), n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				f(i)
			}
		}()
	}
	wg.Wait()
}
