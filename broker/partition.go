package broker

import (
	"slices"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/zkafka/zkafka/storage"
)

// Partition is one replica of a topic-partition on this broker: its log, and
// the leadership state the controller last sent. Its mutex guards leader,
// ISR and high-watermark changes (the log stores the high watermark, which
// also bounds retention); appends to the log are serialized by the log
// itself.
type Partition struct {
	Topic string
	Index int32
	log   *storage.Log

	mu              sync.RWMutex
	brokerID        int32
	leader          int32
	leaderEpoch     int32
	controllerEpoch int32
	isr             []int32
	replicas        []int32
	zkVersion       int32
	// followerLEO is each follower's log end offset as learnt from its
	// fetches; unknown followers are absent.
	followerLEO map[int32]int64
	// changed is closed and replaced whenever new data becomes readable, to
	// wake fetches waiting for min.bytes.
	changed chan struct{}
}

func newPartition(topic string, index, brokerID int32, log *storage.Log) *Partition {
	return &Partition{
		Topic: topic, Index: index, brokerID: brokerID, log: log,
		leader: -1, leaderEpoch: -1, followerLEO: map[int32]int64{}, changed: make(chan struct{}),
	}
}

// partitionState is the leadership a LeaderAndIsr request assigns.
type partitionState struct {
	leader, leaderEpoch, controllerEpoch, zkVersion int32
	isr, replicas                                   []int32
}

// applyState takes a new leadership state; the caller has checked the leader
// epoch. It reports whether this broker is now the leader.
func (p *Partition) applyState(s partitionState) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.leader, p.leaderEpoch, p.controllerEpoch, p.zkVersion = s.leader, s.leaderEpoch, s.controllerEpoch, s.zkVersion
	p.isr, p.replicas = slices.Clone(s.isr), slices.Clone(s.replicas)
	p.followerLEO = map[int32]int64{}
	// The log keeps the high watermark (restored from
	// replication-offset-checkpoint at start); a new leader advances it as
	// its ISR allows.
	p.maybeIncrementHighWatermarkLocked()
	p.notifyLocked()
	return p.leader == p.brokerID
}

// LeaderEpoch returns the current leader epoch (-1 before the first state).
func (p *Partition) LeaderEpoch() int32 {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.leaderEpoch
}

// checkLeader returns NOT_LEADER_OR_FOLLOWER unless this broker leads, and the
// Kafka epoch errors when the client states a current leader epoch (-1 means
// it does not).
func (p *Partition) checkLeader(currentLeaderEpoch int32) (leaderEpoch int32, err error) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	switch {
	case currentLeaderEpoch >= 0 && currentLeaderEpoch < p.leaderEpoch:
		return p.leaderEpoch, kerr.FencedLeaderEpoch
	case currentLeaderEpoch > p.leaderEpoch:
		return p.leaderEpoch, kerr.UnknownLeaderEpoch
	case p.leader != p.brokerID:
		return p.leaderEpoch, kerr.NotLeaderForPartition
	}
	return p.leaderEpoch, nil
}

// appendAsLeader appends a produce request's records and advances the high
// watermark when the ISR allows.
func (p *Partition) appendAsLeader(records []byte) (storage.AppendInfo, error) {
	p.mu.RLock()
	leader, epoch := p.leader, p.leaderEpoch
	p.mu.RUnlock()
	if leader != p.brokerID {
		return storage.AppendInfo{}, kerr.NotLeaderForPartition
	}
	info, err := p.log.AppendAsLeader(records, epoch)
	if err != nil {
		return info, err
	}
	p.mu.Lock()
	p.maybeIncrementHighWatermarkLocked()
	p.mu.Unlock()
	return info, nil
}

// maybeIncrementHighWatermarkLocked sets the high watermark to the smallest
// log end offset in the ISR, never moving it back. Followers whose position is
// not known yet hold it where it is.
func (p *Partition) maybeIncrementHighWatermarkLocked() {
	if p.leader != p.brokerID {
		return
	}
	hw := p.log.LogEndOffset()
	for _, r := range p.isr {
		if r == p.brokerID {
			continue
		}
		leo, ok := p.followerLEO[r]
		if !ok {
			return
		}
		hw = min(hw, leo)
	}
	if hw > p.log.HighWatermark() {
		p.log.SetHighWatermark(hw)
		p.notifyLocked()
	}
}

func (p *Partition) notifyLocked() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// HighWatermark returns the offset below which records are committed and
// visible to consumers.
func (p *Partition) HighWatermark() int64 { return p.log.HighWatermark() }

// waitChan returns a channel closed at the next change of readable data.
func (p *Partition) waitChan() <-chan struct{} {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.changed
}

// Log returns the partition's log.
func (p *Partition) Log() *storage.Log { return p.log }
