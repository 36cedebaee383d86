package broker

import (
	"context"
	"time"
)

// fetcherThread is the loop both kinds of fetcher run (Kafka's
// ShutdownableThread under AbstractFetcherThread): one goroutine calls
// doWork until stopped, and after a round that made no progress waits for
// the backoff, a wake-up or the stop.
type fetcherThread struct {
	ctx    context.Context // ended by stop; the parent of every request the fetcher makes
	cancel context.CancelFunc
	done   chan struct{}
	wake   chan struct{}
}

func newFetcherThread() fetcherThread {
	ctx, cancel := context.WithCancel(context.Background())
	return fetcherThread{ctx: ctx, cancel: cancel, done: make(chan struct{}), wake: make(chan struct{}, 1)}
}

// start runs doWork in a new goroutine until stop, backing off for backoff
// after each round that returns false; cleanup runs when the loop ends.
func (t *fetcherThread) start(doWork func() bool, backoff time.Duration, cleanup func()) {
	go func() {
		defer close(t.done)
		defer cleanup()
		for t.ctx.Err() == nil {
			if !doWork() {
				t.pause(backoff)
			}
		}
	}()
}

// pause waits for backoff, a wake-up (a new partition), or the stop.
func (t *fetcherThread) pause(backoff time.Duration) {
	timer := time.NewTimer(backoff)
	defer timer.Stop()
	select {
	case <-t.ctx.Done():
	case <-t.wake:
	case <-timer.C:
	}
}

// wakeUp ends a pause early.
func (t *fetcherThread) wakeUp() {
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

// stop ends the loop and waits for it.
func (t *fetcherThread) stop() {
	t.cancel()
	<-t.done
}

// takeIdle removes the fetchers left with no partition from fetchers and
// returns them; the caller holds the map's lock, and stops them after
// releasing it.
func takeIdle[K comparable, F interface{ empty() bool }](fetchers map[K]F) []F {
	var idle []F
	for k, f := range fetchers {
		if f.empty() {
			idle = append(idle, f)
			delete(fetchers, k)
		}
	}
	return idle
}
