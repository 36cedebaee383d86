package workers

import (
	"sync/atomic"
	"testing"
)

// TestForEachCallsEachIndexOnceWithinTheBound: every index is called exactly once, and no more
// than the given number of calls run at a time.
func TestForEachCallsEachIndexOnceWithinTheBound(t *testing.T) {
	for _, c := range []struct{ workers, n int }{{1, 10}, {4, 100}, {8, 3}, {0, 5}, {4, 0}} {
		calls := make([]atomic.Int32, c.n)
		var running, most atomic.Int32
		ForEach(c.workers, c.n, func(i int) {
			now := running.Add(1)
			for {
				m := most.Load()
				if now <= m || most.CompareAndSwap(m, now) {
					break
				}
			}
			calls[i].Add(1)
			running.Add(-1)
		})
		for i := range calls {
			if got := calls[i].Load(); got != 1 {
				t.Errorf("workers %d, n %d: index %d called %d times", c.workers, c.n, i, got)
			}
		}
		if bound := max(c.workers, 1); int(most.Load()) > bound {
			t.Errorf("workers %d, n %d: %d calls at once", c.workers, c.n, most.Load())
		}
	}
}

// TestForEachInOrderWithOneWorker: one worker calls fn in index order on the caller's goroutine.
func TestForEachInOrderWithOneWorker(t *testing.T) {
	var order []int
	ForEach(1, 5, func(i int) { order = append(order, i) })
	for i, got := range order {
		if got != i {
			t.Fatalf("order %v, want 0..4", order)
		}
	}
	if len(order) != 5 {
		t.Fatalf("order %v, want 0..4", order)
	}
}
