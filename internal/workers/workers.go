package workers

import (
	"sync"
	"sync/atomic"
)

// ForEach calls fn(i) for every i in [0, n) from at most workers goroutines and waits for all of
// them. With one worker (or one iteration) it calls fn in order on the caller's goroutine.
func ForEach(workers, n int, fn func(i int)) {
	workers = min(workers, n)
	if workers <= 1 {
		for i := range n {
			fn(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				fn(i)
			}
		})
	}
	wg.Wait()
}
