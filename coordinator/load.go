package coordinator

// Coordinator failover: becoming leader of an __consumer_offsets partition
// loads its groups and offsets from the log (requests for them get
// COORDINATOR_LOAD_IN_PROGRESS meanwhile); losing it unloads them (parked
// requests and later ones get NOT_COORDINATOR).

import (
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
)

// loadBufferSize is offsets.load.buffer.size: the most read at once while
// loading.
const loadBufferSize = 5 << 20

// OnBecomeLeader starts loading a partition this broker now leads. A
// partition already owned or loading keeps its state.
func (c *Coordinator) OnBecomeLeader(partition, leaderEpoch int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.active {
		return
	}
	if p, ok := c.partitions[partition]; ok {
		p.leaderEpoch = max(p.leaderEpoch, leaderEpoch)
		return
	}
	op := &ownedPartition{leaderEpoch: leaderEpoch, loading: true}
	c.partitions[partition] = op
	c.log.Info("Scheduling loading of offsets and group metadata", zap.Int32("partition", partition), zap.Int32("leader-epoch", leaderEpoch))
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		c.load(partition, op)
	}()
}

// OnResign unloads a partition this broker no longer leads.
func (c *Coordinator) OnResign(partition int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.partitions[partition]; ok {
		c.unloadLocked(partition)
	}
}

// Owns reports whether this coordinator serves a partition's groups.
func (c *Coordinator) Owns(partition int32) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.partitions[partition]
	return ok && !p.loading
}

func (c *Coordinator) unloadLocked(partition int32) {
	n := 0
	for id, g := range c.groups {
		if g.partition != partition {
			continue
		}
		c.transitionLocked(g, Dead)
		if g.join != nil {
			g.join.timer.Stop()
			g.join = nil
		}
		for _, t := range g.pending {
			t.Stop()
		}
		for _, m := range g.members {
			g.invokeJoin(m, joinResult{memberID: m.id, generation: -1, err: kerr.NotCoordinator})
			g.invokeSync(m, syncResult{err: kerr.NotCoordinator})
			c.removeHeartbeatLocked(m)
		}
		delete(c.groups, id)
		n++
	}
	delete(c.partitions, partition)
	c.log.Info("Unloaded groups of partition", zap.Int32("partition", partition), zap.Int("groups", n))
}

// loaded is a partition's content as read back: the last value of each key.
type loaded struct {
	offsets map[string]map[topicPartition]committedOffset
	groups  map[string]*kmsg.GroupMetadataValue // nil: deleted
}

func (c *Coordinator) load(partition int32, op *ownedPartition) {
	start := time.Now()
	l, err := c.readPartition(partition)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.partitions[partition] != op {
		return // unloaded meanwhile
	}
	if err != nil {
		c.log.Error("Loading offsets and group metadata failed", zap.Int32("partition", partition), zap.Error(err))
		delete(c.partitions, partition)
		return
	}
	now := c.clock.Now()
	groups := 0
	for id, v := range l.groups {
		if v == nil {
			continue
		}
		g := groupFromValue(id, partition, v, now)
		c.groups[id] = g
		for _, m := range g.members {
			c.scheduleHeartbeatLocked(g, m, m.sessionTimeout)
		}
		groups++
	}
	for id, offsets := range l.offsets {
		if len(offsets) == 0 {
			continue
		}
		g, ok := c.groups[id]
		if !ok {
			g = newGroup(id, partition, now)
			c.groups[id] = g
		}
		g.offsets = offsets
	}
	op.loading = false
	c.log.Info("Finished loading offsets and group metadata", zap.Int32("partition", partition),
		zap.Int("groups", groups), zap.Duration("took", time.Since(start)))
}

func (c *Coordinator) readPartition(partition int32) (loaded, error) {
	l := loaded{offsets: map[string]map[topicPartition]committedOffset{}, groups: map[string]*kmsg.GroupMetadataValue{}}
	offset, end, err := c.store.Bounds(partition)
	if err != nil {
		return l, err
	}
	for offset < end {
		if c.ctx.Err() != nil {
			return l, c.ctx.Err()
		}
		data, err := c.store.Read(partition, offset, loadBufferSize)
		if err != nil {
			return l, fmt.Errorf("read __consumer_offsets-%d at %d: %w", partition, offset, err)
		}
		next, err := decodeBatches(data, l.apply)
		if err != nil {
			return l, fmt.Errorf("read __consumer_offsets-%d at %d: %w", partition, offset, err)
		}
		if next <= offset {
			break
		}
		offset = next
	}
	return l, nil
}

// apply takes one record: a newer value of its key, or a tombstone.
func (l *loaded) apply(r storedRecord) {
	if len(r.key) < 2 {
		return
	}
	switch version := int16(r.key[0])<<8 | int16(r.key[1]); version {
	case 0, 1:
		var k kmsg.OffsetCommitKey
		if k.ReadFrom(r.key) != nil {
			return
		}
		tp := topicPartition{k.Topic, k.Partition}
		if r.value == nil {
			delete(l.offsets[k.Group], tp)
			return
		}
		var v kmsg.OffsetCommitValue
		if v.ReadFrom(r.value) != nil {
			return
		}
		o := OffsetAndMetadata{Offset: v.Offset, LeaderEpoch: -1, Metadata: v.Metadata, CommitTimestamp: v.CommitTimestamp, ExpireTimestamp: -1}
		if v.Version >= 3 {
			o.LeaderEpoch = v.LeaderEpoch
		}
		if v.Version == 1 {
			o.ExpireTimestamp = v.ExpireTimestamp
		}
		if l.offsets[k.Group] == nil {
			l.offsets[k.Group] = map[topicPartition]committedOffset{}
		}
		l.offsets[k.Group][tp] = committedOffset{o, r.offset}
	case 2:
		var k kmsg.GroupMetadataKey
		if k.ReadFrom(r.key) != nil {
			return
		}
		if r.value == nil {
			l.groups[k.Group] = nil
			return
		}
		v := new(kmsg.GroupMetadataValue)
		if v.ReadFrom(r.value) != nil {
			return
		}
		l.groups[k.Group] = v
	}
}

// groupFromValue rebuilds a group from its stored metadata: Empty without
// members, else Stable with the stored assignment.
func groupFromValue(id string, partition int32, v *kmsg.GroupMetadataValue, now time.Time) *group {
	g := newGroup(id, partition, now)
	g.protocolType, g.generation = v.ProtocolType, v.Generation
	g.protocolName, g.leaderID = deref(v.Protocol), deref(v.Leader)
	if v.CurrentStateTimestamp > 0 {
		g.stateTime = time.UnixMilli(v.CurrentStateTimestamp)
	}
	for _, vm := range v.Members {
		m := &member{
			id: vm.MemberID, instanceID: deref(vm.InstanceID), clientID: vm.ClientID, clientHost: vm.ClientHost,
			rebalanceTimeout: time.Duration(vm.RebalanceTimeoutMillis) * time.Millisecond,
			sessionTimeout:   time.Duration(vm.SessionTimeoutMillis) * time.Millisecond,
			protocolType:     v.ProtocolType,
			protocols:        []protocol{{name: g.protocolName, metadata: vm.Subscription}},
			assignment:       vm.Assignment,
		}
		g.add(m, nil)
		if m.instanceID != "" {
			g.static[m.instanceID] = m.id
		}
	}
	g.leaderID = deref(v.Leader)
	if len(g.members) > 0 {
		g.state = Stable
	}
	g.computeSubscribedTopics()
	return g
}
