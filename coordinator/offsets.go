package coordinator

// Offsets: OffsetCommit, OffsetFetch, OffsetDelete, and their expiry after
// offsets.retention.minutes.

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
)

// OffsetCommit answers an OffsetCommit request once the records are
// replicated (acks=all) or offsets.commit.timeout.ms passes.
func (c *Coordinator) OffsetCommit(ctx context.Context, req *kmsg.OffsetCommitRequest) *kmsg.OffsetCommitResponse {
	resp := req.ResponseKind().(*kmsg.OffsetCommitResponse)
	codes := map[topicPartition]int16{}
	set := func(err error) {
		for _, t := range req.Topics {
			for _, p := range t.Partitions {
				codes[topicPartition{t.Topic, p.Partition}] = errCode(err)
			}
		}
	}
	c.mu.Lock()
	g, err := c.commitTargetLocked(req)
	if err != nil {
		c.mu.Unlock()
		set(err)
		return fillCommitResponse(resp, req, codes)
	}
	now := c.clock.Now().UnixMilli()
	var recs []record
	var commits []topicPartition
	var values []OffsetAndMetadata
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			tp := topicPartition{t.Topic, p.Partition}
			meta := deref(p.Metadata)
			if len(meta) > c.cfg.OffsetMetadataMaxBytes {
				codes[tp] = kerr.OffsetMetadataTooLarge.Code
				continue
			}
			o := OffsetAndMetadata{Offset: p.Offset, LeaderEpoch: p.LeaderEpoch, Metadata: meta, CommitTimestamp: now, ExpireTimestamp: -1}
			if req.Version == 1 && p.Timestamp != -1 {
				o.CommitTimestamp = p.Timestamp
			}
			if req.Version >= 2 && req.Version <= 4 && req.RetentionTimeMillis != -1 {
				o.ExpireTimestamp = o.CommitTimestamp + req.RetentionTimeMillis
			}
			if req.Version < 6 {
				o.LeaderEpoch = -1
			}
			recs = append(recs, record{key: offsetCommitKey(g.id, tp.topic, tp.partition), value: offsetCommitValue(o)})
			commits, values = append(commits, tp), append(values, o)
		}
	}
	if len(recs) == 0 {
		c.mu.Unlock()
		return fillCommitResponse(resp, req, codes)
	}
	base, await, err := c.store.Append(g.partition, encodeBatch(recs, now))
	c.mu.Unlock()
	if err == nil {
		wctx, cancel := context.WithTimeout(ctx, c.cfg.OffsetCommitTimeout)
		err = await(wctx)
		cancel()
	}
	err = offsetStoreError(err)
	c.mu.Lock()
	if err == nil && c.groups[g.id] == g {
		for i, tp := range commits {
			if cur, ok := g.offsets[tp]; !ok || cur.recordOffset < base+int64(i) {
				g.offsets[tp] = committedOffset{values[i], base + int64(i)}
			}
		}
	}
	c.mu.Unlock()
	for _, tp := range commits {
		codes[tp] = errCode(err)
	}
	return fillCommitResponse(resp, req, codes)
}

func fillCommitResponse(resp *kmsg.OffsetCommitResponse, req *kmsg.OffsetCommitRequest, codes map[topicPartition]int16) *kmsg.OffsetCommitResponse {
	for _, t := range req.Topics {
		rt := kmsg.NewOffsetCommitResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetCommitResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, codes[topicPartition{t.Topic, p.Partition}]
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// commitTargetLocked checks a commit against the group (Kafka's
// handleCommitOffsets): a generation below 0 is a commit from outside group
// management, allowed into an Empty group (created if missing).
func (c *Coordinator) commitTargetLocked(req *kmsg.OffsetCommitRequest) (*group, error) {
	if err := c.validateLocked(req.Group, offsetAPI); err != nil {
		return nil, err
	}
	g, ok := c.groups[req.Group]
	if !ok {
		if req.Generation >= 0 {
			return nil, kerr.IllegalGeneration
		}
		g = newGroup(req.Group, c.PartitionFor(req.Group), c.clock.Now())
		c.groups[req.Group] = g
	}
	instanceID := deref(req.InstanceID)
	switch {
	case g.is(Dead):
		return nil, kerr.CoordinatorNotAvailable
	case g.isStaticMemberFenced(req.MemberID, instanceID):
		return nil, kerr.FencedInstanceID
	case req.Generation < 0 && g.is(Empty):
		return g, nil
	case !g.has(req.MemberID):
		return nil, kerr.UnknownMemberID
	case req.Generation != g.generation:
		return nil, kerr.IllegalGeneration
	case g.is(CompletingRebalance):
		return nil, kerr.RebalanceInProgress
	}
	m := g.members[req.MemberID]
	c.scheduleHeartbeatLocked(g, m, m.sessionTimeout)
	return g, nil
}

// OffsetFetch answers an OffsetFetch request (null topics, v2+: every
// partition the group committed).
func (c *Coordinator) OffsetFetch(req *kmsg.OffsetFetchRequest) *kmsg.OffsetFetchResponse {
	resp := req.ResponseKind().(*kmsg.OffsetFetchResponse)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.validateLocked(req.Group, offsetAPI); err != nil {
		resp.ErrorCode = errCode(err)
		if req.Version < 2 {
			for _, t := range req.Topics {
				rt := kmsg.NewOffsetFetchResponseTopic()
				rt.Topic = t.Topic
				for _, p := range t.Partitions {
					rp := kmsg.NewOffsetFetchResponseTopicPartition()
					rp.Partition, rp.Offset, rp.ErrorCode = p, -1, errCode(err)
					rt.Partitions = append(rt.Partitions, rp)
				}
				resp.Topics = append(resp.Topics, rt)
			}
		}
		return resp
	}
	g := c.groups[req.Group]
	add := func(topic string, partition int32) *kmsg.OffsetFetchResponseTopicPartition {
		var rt *kmsg.OffsetFetchResponseTopic
		for i := range resp.Topics {
			if resp.Topics[i].Topic == topic {
				rt = &resp.Topics[i]
			}
		}
		if rt == nil {
			t := kmsg.NewOffsetFetchResponseTopic()
			t.Topic = topic
			resp.Topics = append(resp.Topics, t)
			rt = &resp.Topics[len(resp.Topics)-1]
		}
		rp := kmsg.NewOffsetFetchResponseTopicPartition()
		rp.Partition, rp.Offset, rp.LeaderEpoch, rp.Metadata = partition, -1, -1, kmsg.StringPtr("")
		if g != nil {
			if o, ok := g.offsets[topicPartition{topic, partition}]; ok {
				rp.Offset, rp.LeaderEpoch, rp.Metadata = o.Offset, o.LeaderEpoch, kmsg.StringPtr(o.Metadata)
			}
		}
		rt.Partitions = append(rt.Partitions, rp)
		return &rt.Partitions[len(rt.Partitions)-1]
	}
	if req.Topics == nil && req.Version >= 2 {
		if g != nil {
			for tp := range g.offsets {
				add(tp.topic, tp.partition)
			}
		}
		return resp
	}
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			add(t.Topic, p)
		}
	}
	return resp
}

// OffsetDelete answers an OffsetDelete request: offsets of topics the group
// is not subscribed to are deleted (tombstones); a subscribed topic's get
// GROUP_SUBSCRIBED_TO_TOPIC.
func (c *Coordinator) OffsetDelete(req *kmsg.OffsetDeleteRequest) *kmsg.OffsetDeleteResponse {
	resp := req.ResponseKind().(*kmsg.OffsetDeleteResponse)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.validateLocked(req.Group, offsetAPI); err != nil {
		resp.ErrorCode = errCode(err)
		return resp
	}
	g, ok := c.groups[req.Group]
	switch {
	case !ok || g.is(Dead):
		resp.ErrorCode = kerr.GroupIDNotFound.Code
		return resp
	case g.protocolType != consumerProtocolType && !g.is(Empty):
		resp.ErrorCode = kerr.NonEmptyGroup.Code
		return resp
	}
	var removed []topicPartition
	for _, t := range req.Topics {
		rt := kmsg.NewOffsetDeleteResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetDeleteResponseTopicPartition()
			rp.Partition = p.Partition
			if !g.is(Empty) && g.isSubscribedTo(t.Topic) {
				rp.ErrorCode = kerr.GroupSubscribedToTopic.Code
			} else {
				tp := topicPartition{t.Topic, p.Partition}
				if _, ok := g.offsets[tp]; ok {
					delete(g.offsets, tp)
					removed = append(removed, tp)
				}
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	c.writeTombstonesLocked(g, removed, false)
	return resp
}

// writeTombstonesLocked appends tombstones for removed offsets, and for the
// group itself when it is gone and ever had a generation (a group used only
// to store offsets never wrote its metadata). As in Kafka, nobody waits for
// them to replicate.
func (c *Coordinator) writeTombstonesLocked(g *group, removed []topicPartition, groupGone bool) {
	var recs []record
	for _, tp := range removed {
		recs = append(recs, record{key: offsetCommitKey(g.id, tp.topic, tp.partition)})
	}
	if groupGone && g.generation > 0 {
		recs = append(recs, record{key: groupMetadataKey(g.id)})
	}
	if len(recs) == 0 {
		return
	}
	if _, _, err := c.store.Append(g.partition, encodeBatch(recs, c.clock.Now().UnixMilli())); err != nil {
		c.log.Warn("Failed to write tombstones", zap.String("group", g.id), zap.Int32("partition", g.partition), zap.Error(err))
	}
}

func (c *Coordinator) scheduleExpiryLocked() {
	if c.cfg.OffsetsRetentionCheckInterval <= 0 {
		return
	}
	c.expiry = c.clock.AfterFunc(c.cfg.OffsetsRetentionCheckInterval, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if !c.active {
			return
		}
		c.expireOffsetsLocked(c.clock.Now())
		c.scheduleExpiryLocked()
	})
}

// ExpireOffsets runs the offsets.retention.minutes check now and returns
// how many offsets it removed.
func (c *Coordinator) ExpireOffsets() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.expireOffsetsLocked(c.clock.Now())
}

// expireOffsetsLocked is Kafka 2.8's cleanupGroupMetadata: an offset
// expires at its explicit expire timestamp; otherwise, in an Empty group,
// retention counts from when the group became Empty (or from the commit
// for a group that only stores offsets); in a live consumer group, offsets
// of topics nobody subscribes to expire from their commit. An Empty group
// with no offsets left is removed.
func (c *Coordinator) expireOffsetsLocked(now time.Time) int {
	retention := c.cfg.OffsetsRetention.Milliseconds()
	nowMs := now.UnixMilli()
	total := 0
	for id, g := range c.groups {
		if p, ok := c.partitions[g.partition]; !ok || p.loading {
			continue
		}
		var removed []topicPartition
		for tp, o := range g.offsets {
			var expired bool
			switch {
			case o.ExpireTimestamp >= 0:
				expired = nowMs >= o.ExpireTimestamp
			case g.is(Empty) && g.protocolType == "":
				expired = nowMs-o.CommitTimestamp >= retention
			case g.is(Empty):
				expired = nowMs-g.stateTime.UnixMilli() >= retention
			case g.protocolType == consumerProtocolType && g.subscribedKnown && !g.subscribed[tp.topic]:
				expired = nowMs-o.CommitTimestamp >= retention
			}
			if expired {
				removed = append(removed, tp)
				delete(g.offsets, tp)
			}
		}
		gone := g.is(Empty) && len(g.offsets) == 0
		if gone {
			c.transitionLocked(g, Dead)
			delete(c.groups, id)
		}
		if len(removed) > 0 || gone {
			c.log.Info("Removed expired offsets", zap.String("group", id), zap.Int("offsets", len(removed)), zap.Bool("group-removed", gone))
		}
		c.writeTombstonesLocked(g, removed, gone)
		total += len(removed)
	}
	return total
}
