package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/zkafka/zkafka/consumer"
)

// eventPrinter is console-consumer's --print-events: the consumer's event
// stream on stderr as it happens, and its counters on exit. Events arrive
// synchronously from the consumer's goroutines, hence the mutex.
type eventPrinter struct {
	mu     sync.Mutex
	w      io.Writer
	start  time.Time
	paused time.Time     // when fetching paused; zero while fetching
	total  time.Duration // time paused so far
}

func newEventPrinter(w io.Writer) *eventPrinter { return &eventPrinter{w: w, start: time.Now()} }

// onEvent prints one line per event but records delivered (the records
// themselves are on stdout).
func (p *eventPrinter) onEvent(ev consumer.Event) {
	if ev.Type == consumer.EventRecordsDelivered {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "[event +%.3fs] %s", ev.Time.Sub(p.start).Seconds(), ev.Type)
	switch ev.Type {
	case consumer.EventRegistered:
		fmt.Fprintf(&b, " consumer-id=%s", ev.Consumer)
	case consumer.EventJoined:
		fmt.Fprintf(&b, " generation=%d member-id=%s", ev.Generation, ev.Consumer)
	case consumer.EventFetchingPaused:
		p.paused = ev.Time
	case consumer.EventFetchingResumed:
		if !p.paused.IsZero() {
			d := ev.Time.Sub(p.paused)
			p.total += d
			p.paused = time.Time{}
			fmt.Fprintf(&b, " after %v paused", d.Round(time.Millisecond))
		}
	}
	if len(ev.Partitions) > 0 {
		for _, t := range slices.Sorted(maps.Keys(ev.Partitions)) {
			fmt.Fprintf(&b, " %s%v", t, ev.Partitions[t])
		}
	}
	if ev.Err != nil {
		fmt.Fprintf(&b, " error=%q", ev.Err)
	}
	fmt.Fprintln(p.w, b.String())
}

// printStats writes the stats line on exit.
func (p *eventPrinter) printStats(s consumer.Stats) {
	p.mu.Lock()
	defer p.mu.Unlock()
	paused := p.total
	if !p.paused.IsZero() {
		paused += time.Since(p.paused)
	}
	fmt.Fprintf(p.w, "[stats] rebalances=%d paused=%v zk-watch-notifications=%d zk-requests=%d (reads %d, writes %d) "+
		"kafka-requests=%d (JoinGroup %d, SyncGroup %d, Heartbeat %d) records=%d\n",
		s.Rebalances, paused.Round(time.Millisecond), s.ZKWatchNotifications, s.ZKRequests, s.ZKReads, s.ZKWrites,
		s.KafkaRequests, s.JoinGroupRequests, s.SyncGroupRequests, s.HeartbeatRequests, s.RecordsDelivered)
}
