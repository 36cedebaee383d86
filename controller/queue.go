package controller

import (
	"context"
	"sync"
)

// fifo is an unbounded first-in first-out queue: the controller's event queue and each broker's
// request queue. Producers never block; one consumer waits in pop.
type fifo[T any] struct {
	mu    sync.Mutex
	items []T
	ready chan struct{} // capacity 1: a push happened since the consumer last looked
}

func newFIFO[T any]() *fifo[T] {
	return &fifo[T]{ready: make(chan struct{}, 1)}
}

func (q *fifo[T]) push(v T) {
	q.mu.Lock()
	q.items = append(q.items, v)
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// pop removes and returns the oldest item, waiting for one until ctx ends.
func (q *fifo[T]) pop(ctx context.Context) (T, bool) {
	for {
		q.mu.Lock()
		if len(q.items) > 0 {
			v := q.items[0]
			var zero T
			q.items[0] = zero
			q.items = q.items[1:]
			q.mu.Unlock()
			return v, true
		}
		q.mu.Unlock()
		select {
		case <-q.ready:
		case <-ctx.Done():
			var zero T
			return zero, false
		}
	}
}

// clear drops every queued item and returns them.
func (q *fifo[T]) clear() []T {
	q.mu.Lock()
	defer q.mu.Unlock()
	items := q.items
	q.items = nil
	return items
}

func (q *fifo[T]) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items)
}
