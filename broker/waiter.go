package broker

import (
	"context"
	"time"

	"github.com/zkafka/zkafka/internal/reqclock"
)

// partitionWaiter wakes one waiting request — a Fetch's long poll, an acks=all Produce — when any
// partition it watches changes, as Kafka's purgatory keys a delayed operation by its partitions: every
// watched partition signals the one buffered channel, so a request over many partitions waits without a
// goroutine per partition. A signal that arrives while the request is reading stays in the channel, so
// none is missed between a read and the next wait. stop unregisters it from every partition.
type partitionWaiter struct {
	ch      chan struct{}
	watched []watchedPartition
}

type watchedPartition struct {
	p        *Partition
	follower bool
}

func newPartitionWaiter() *partitionWaiter {
	return &partitionWaiter{ch: make(chan struct{}, 1)}
}

// watch registers with p: a follower is woken by appends, anyone else by the
// high watermark; both by leadership changes.
func (w *partitionWaiter) watch(p *Partition, follower bool) {
	p.addWaiter(w.ch, follower)
	w.watched = append(w.watched, watchedPartition{p, follower})
}

// watching reports whether any partition is watched.
func (w *partitionWaiter) watching() bool { return len(w.watched) > 0 }

// stop unregisters from every watched partition.
func (w *partitionWaiter) stop() {
	for _, x := range w.watched {
		x.p.removeWaiter(w.ch, x.follower)
	}
	w.watched = nil
}

// wait waits for a signal (true) or until the timeout or ctx ends (false).
func (w *partitionWaiter) wait(ctx context.Context, timeout time.Duration) bool {
	defer reqclock.Waited(ctx, time.Now())
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-w.ch:
		return true
	case <-t.C:
		return false
	case <-ctx.Done():
		return false
	}
}

// signalWaiters wakes every waiter in m without blocking: a waiter already
// signalled keeps its one pending signal.
func signalWaiters(m map[chan struct{}]struct{}) {
	for ch := range m {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}
