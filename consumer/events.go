package consumer

import (
	"sync"
	"sync/atomic"
	"time"
)

// EventType names what happened to a consumer.
type EventType int

// The events of a consumer's life, in the order a rebalance produces them.
const (
	EventRegistered         EventType = iota // legacy: ids znode written
	EventJoined                              // coordinator: JoinGroup and SyncGroup done
	EventRebalanceStarted                    // a rebalance attempt began
	EventRebalanceFailed                     // an attempt failed (Err says why)
	EventRebalanceDone                       // the consumer owns its new share
	EventPartitionsRevoked                   // partitions given up voluntarily
	EventPartitionsAssigned                  // partitions newly owned
	EventPartitionsLost                      // partitions taken away (expiry, fencing)
	EventFetchingPaused                      // no partition is fetched until resumed
	EventFetchingResumed                     // fetching restarts
	EventOffsetsCommitted                    // offsets stored (Err set if the commit failed)
	EventRecordsDelivered                    // Poll returned Count records
)

var eventNames = [...]string{
	"registered", "joined", "rebalance-started", "rebalance-failed", "rebalance-done",
	"partitions-revoked", "partitions-assigned", "partitions-lost",
	"fetching-paused", "fetching-resumed", "offsets-committed", "records-delivered",
}

func (t EventType) String() string {
	if t < 0 || int(t) >= len(eventNames) {
		return "unknown"
	}
	return eventNames[t]
}

// Event is one entry of a consumer's event stream.
type Event struct {
	Time       time.Time
	Type       EventType
	Consumer   string             // legacy consumer id or group member id
	Generation int32              // coordinator mode: the generation joined
	Partitions map[string][]int32 // revoked, assigned, lost, committed or delivered partitions
	Count      int                // records delivered
	Err        error
}

// Stats are a consumer's counters.
type Stats struct {
	ZKWatchNotifications int64 // ZooKeeper watch events received
	ZKRequests           int64 // ZooKeeper requests sent: ZKReads + ZKWrites
	ZKReads              int64 // reads, watch-arming ones included
	ZKWrites             int64 // creates, deletes and sets
	KafkaRequests        int64 // Kafka requests sent
	JoinGroupRequests    int64
	SyncGroupRequests    int64
	HeartbeatRequests    int64
	Rebalances           int64 // rebalance attempts
	RecordsDelivered     int64
}

type counters struct {
	zkWatches, zkReads, zkWrites, kafkaRequests, rebalances, records atomic.Int64
	joinGroups, syncGroups, heartbeats                               atomic.Int64
}

func (c *counters) snapshot() Stats {
	return Stats{
		ZKWatchNotifications: c.zkWatches.Load(),
		ZKRequests:           c.zkReads.Load() + c.zkWrites.Load(),
		ZKReads:              c.zkReads.Load(),
		ZKWrites:             c.zkWrites.Load(),
		KafkaRequests:        c.kafkaRequests.Load(),
		JoinGroupRequests:    c.joinGroups.Load(),
		SyncGroupRequests:    c.syncGroups.Load(),
		HeartbeatRequests:    c.heartbeats.Load(),
		Rebalances:           c.rebalances.Load(),
		RecordsDelivered:     c.records.Load(),
	}
}

// eventStream fans events out to the OnEvent callback and subscribers. With
// neither, emit costs one atomic load: no Event is built.
type eventStream struct {
	onEvent   func(Event)
	listeners atomic.Int32
	mu        sync.Mutex
	subs      []chan Event
}

func (s *eventStream) active() bool { return s.onEvent != nil || s.listeners.Load() > 0 }

func (s *eventStream) emit(ev Event) {
	ev.Time = time.Now()
	if s.onEvent != nil {
		s.onEvent(ev)
	}
	if s.listeners.Load() == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ch := range s.subs {
		select {
		case ch <- ev:
		default: // a slow subscriber loses events rather than stalling the consumer
		}
	}
}

func (s *eventStream) subscribe(buffer int) (<-chan Event, func()) {
	ch := make(chan Event, buffer)
	s.mu.Lock()
	s.subs = append(s.subs, ch)
	s.mu.Unlock()
	s.listeners.Add(1)
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			for i, c := range s.subs {
				if c == ch {
					s.subs = append(s.subs[:i], s.subs[i+1:]...)
					break
				}
			}
			s.listeners.Add(-1)
		})
	}
}
