package coordinator

// Coordinator failover: becoming leader of an __consumer_offsets partition
// loads its groups and offsets from the log (requests for them get
// COORDINATOR_LOAD_IN_PROGRESS meanwhile); losing it unloads them (parked
// requests and later ones get NOT_COORDINATOR).

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/kafka"
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

// OnResign unloads a partition this broker no longer leads. Once it
// returns, no request is deciding on one of the partition's groups: each
// group is unloaded under its own lock.
func (c *Coordinator) OnResign(partition int32) {
	c.mu.Lock()
	_, ok := c.partitions[partition]
	groups := c.detachLocked(partition)
	c.mu.Unlock()
	if ok {
		c.unload(partition, groups)
	}
}

// Owns reports whether this coordinator serves a partition's groups.
func (c *Coordinator) Owns(partition int32) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.partitions[partition]
	return ok && !p.loading
}

// detachLocked takes a partition and its groups out of the table, so no
// request finds them any more; the caller unloads the groups once mu is
// released (a group's lock is never taken under mu).
func (c *Coordinator) detachLocked(partition int32) []*group {
	p, ok := c.partitions[partition]
	if !ok {
		return nil
	}
	delete(c.partitions, partition)
	groups := make([]*group, 0, len(p.groups))
	for _, g := range p.groups {
		groups = append(groups, g)
	}
	return groups
}

// unload finishes detaching a partition's groups.
func (c *Coordinator) unload(partition int32, groups []*group) {
	for _, g := range groups {
		g.mu.Lock()
		c.unloadGroupLocked(g)
		g.mu.Unlock()
	}
	c.log.Info("Unloaded groups of partition", zap.Int32("partition", partition), zap.Int("groups", len(groups)))
}

// unloadGroupLocked is Kafka's onGroupUnloaded: the group is Dead, its
// timers stop and its parked requests get NOT_COORDINATOR.
func (c *Coordinator) unloadGroupLocked(g *group) {
	c.transitionLocked(g, Dead)
	if g.modern != nil {
		for _, m := range g.modern.members {
			m.stopTimers()
		}
	}
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
}

// loaded is a partition's content as read back: the last value of each key,
// with transactional commits held by producer until their marker (Kafka's
// pendingOffsets of loadGroupsAndOffsets).
type loaded struct {
	offsets map[string]map[kafka.TopicPartition]committedOffset
	groups  map[string]*kmsg.GroupMetadataValue // nil: deleted
	// groupOffsets is where each group's latest classic record is, against
	// a consumer-protocol group of the same id (the later one stands).
	groupOffsets map[string]int64
	consumer     map[string]*loadedConsumerGroup
	pending      map[int64]map[string]map[kafka.TopicPartition]committedOffset
}

// load reads a partition back and publishes its groups, unless the
// partition was unloaded meanwhile. The groups are built, and their
// members' sessions started, before anyone else can see them.
func (c *Coordinator) load(partition int32, op *ownedPartition) {
	start := time.Now()
	l, err := c.readPartition(partition)
	if err != nil {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.partitions[partition] == op {
			c.log.Error("Loading offsets and group metadata failed", zap.Int32("partition", partition), zap.Error(err))
			delete(c.partitions, partition)
		}
		return
	}
	now := c.clock.Now()
	groups := map[string]*group{}
	withMetadata := 0
	// Of a classic and a consumer-protocol group with one id, the later
	// record stands (a group changes protocol with tombstones Kafka may
	// not have compacted away yet).
	consumerWins := func(id string) bool {
		lc := l.consumer[id]
		return lc != nil && lc.hasEpoch && (l.groups[id] == nil || l.groupOffsets[id] < lc.offset)
	}
	for id, v := range l.groups {
		if v == nil || consumerWins(id) {
			continue
		}
		g := groupFromValue(id, partition, v, now)
		g.mu.Lock()
		for _, m := range g.members {
			c.scheduleHeartbeatLocked(g, m, m.sessionTimeout)
		}
		g.mu.Unlock()
		groups[id] = g
		withMetadata++
	}
	for id, lc := range l.consumer {
		if !consumerWins(id) {
			continue
		}
		g := newGroup(id, partition, now)
		g.modern = lc.group()
		g.mu.Lock()
		for _, m := range g.modern.members {
			c.scheduleConsumerSessionLocked(g, m)
			if m.state == memberUnrevokedPartitions {
				c.scheduleRebalanceTimeoutLocked(g, m)
			}
		}
		g.mu.Unlock()
		groups[id] = g
		withMetadata++
	}
	groupOf := func(id string) *group {
		g, ok := groups[id]
		if !ok {
			g = newGroup(id, partition, now)
			groups[id] = g
		}
		return g
	}
	for id, offsets := range l.offsets {
		if len(offsets) == 0 {
			continue
		}
		g := groupOf(id)
		g.mu.Lock()
		g.offsets = offsets
		g.mu.Unlock()
	}
	// Transactions still undecided: their markers complete them later.
	for pid, byGroup := range l.pending {
		for id, offsets := range byGroup {
			if len(offsets) == 0 {
				continue
			}
			g := groupOf(id)
			g.mu.Lock()
			g.pendingTxnOffsets[pid] = offsets
			g.mu.Unlock()
		}
	}
	c.mu.Lock()
	published := c.partitions[partition] == op
	if published {
		op.groups, op.loading = groups, false
	}
	c.mu.Unlock()
	if !published {
		// Unloaded meanwhile: stop the sessions just started.
		for _, g := range groups {
			g.mu.Lock()
			c.unloadGroupLocked(g)
			g.mu.Unlock()
		}
		return
	}
	c.log.Info("Finished loading offsets and group metadata", zap.Int32("partition", partition),
		zap.Int("groups", withMetadata), zap.Duration("took", time.Since(start)))
}

func (c *Coordinator) readPartition(partition int32) (loaded, error) {
	l := loaded{
		offsets: map[string]map[kafka.TopicPartition]committedOffset{}, groups: map[string]*kmsg.GroupMetadataValue{},
		groupOffsets: map[string]int64{}, consumer: map[string]*loadedConsumerGroup{},
		pending: map[int64]map[string]map[kafka.TopicPartition]committedOffset{},
	}
	err := ReadLog(c.ctx, c.store, partition, loadBufferSize, func(data []byte) (int64, error) {
		return decodeBatches(data, l.apply)
	})
	if err != nil {
		return l, fmt.Errorf("__consumer_offsets-%d: %w", partition, err)
	}
	return l, nil
}

// ReadLog reads a partition of a coordinator's topic back from its log
// start offset to its log end offset, at most maxBytes at a time, as the
// group and transaction coordinators load it: decode takes each piece and
// returns the offset after its last whole batch; a piece that frames none
// ends the read. It stops when ctx ends.
func ReadLog(ctx context.Context, store Log, partition, maxBytes int32, decode func(data []byte) (next int64, err error)) error {
	offset, end, err := store.Bounds(partition)
	if err != nil {
		return err
	}
	for offset < end {
		if err := ctx.Err(); err != nil {
			return err
		}
		data, err := store.Read(partition, offset, maxBytes)
		if err != nil {
			return fmt.Errorf("read at offset %d: %w", offset, err)
		}
		next, err := decode(data)
		switch {
		case err != nil:
			return fmt.Errorf("read at offset %d: %w", offset, err)
		case next <= offset:
			return nil
		}
		offset = next
	}
	return nil
}

// apply takes one record: a newer value of its key, or a tombstone; a
// transactional commit waits for its producer's marker, which commits it
// (unless a newer record of the key is loaded already) or drops it.
func (l *loaded) apply(r storedRecord) {
	if r.marker != nil {
		if r.marker.Commit {
			for g, offsets := range l.pending[r.producerID] {
				for tp, o := range offsets {
					if l.offsets[g] == nil {
						l.offsets[g] = map[kafka.TopicPartition]committedOffset{}
					}
					putIfNewer(l.offsets[g], tp, o)
				}
			}
		}
		delete(l.pending, r.producerID)
		return
	}
	if len(r.key) < 2 {
		return
	}
	switch version := int16(r.key[0])<<8 | int16(r.key[1]); version {
	case 0, 1:
		var k kmsg.OffsetCommitKey
		if k.ReadFrom(r.key) != nil {
			return
		}
		tp := kafka.TopicPartition{Topic: k.Topic, Partition: k.Partition}
		target := l.offsets
		if r.transactional {
			if l.pending[r.producerID] == nil {
				l.pending[r.producerID] = map[string]map[kafka.TopicPartition]committedOffset{}
			}
			target = l.pending[r.producerID]
		}
		if r.value == nil {
			delete(target[k.Group], tp)
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
		if target[k.Group] == nil {
			target[k.Group] = map[kafka.TopicPartition]committedOffset{}
		}
		target[k.Group][tp] = committedOffset{o, r.offset}
	case 2:
		var k kmsg.GroupMetadataKey
		if k.ReadFrom(r.key) != nil {
			return
		}
		l.groupOffsets[k.Group] = r.offset
		if r.value == nil {
			l.groups[k.Group] = nil
			return
		}
		v := new(kmsg.GroupMetadataValue)
		if v.ReadFrom(r.value) != nil {
			return
		}
		l.groups[k.Group] = v
	case consumerGroupMetadataType, consumerGroupPartitionMetadataType, consumerGroupMemberMetadataType,
		consumerGroupTargetMetadataType, consumerGroupTargetMemberType, consumerGroupCurrentAssignmentType,
		consumerGroupRegularExpressionType:
		applyConsumerRecord(l.consumer, version, r.key, r.value, r.offset)
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
