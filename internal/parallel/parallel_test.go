package parallel

import (
	"sync/atomic"
	"testing"
)

// TestForCallsEachIndexOnce checks every index is visited exactly once,
// whatever the number of workers, including none to do and more workers
// than work.
func TestForCallsEachIndexOnce(t *testing.T) {
	for _, c := range []struct{ n, workers int }{{0, 4}, {1, 0}, {5, 16}, {1000, 3}} {
		seen := make([]atomic.Int32, c.n)
		For(c.n, c.workers, func(i int) { seen[i].Add(1) })
		for i := range seen {
			if got := seen[i].Load(); got != 1 {
				t.Errorf("n %d, workers %d: index %d called %d times", c.n, c.workers, i, got)
			}
		}
	}
}
