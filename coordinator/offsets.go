package coordinator

// Offsets: OffsetCommit, OffsetFetch, OffsetDelete, and their expiry after
// offsets.retention.minutes.

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/kafka"
)

// OffsetCommit answers an OffsetCommit request once the records are
// replicated (acks=all) or offsets.commit.timeout.ms passes.
func (c *Coordinator) OffsetCommit(ctx context.Context, req *kmsg.OffsetCommitRequest) *kmsg.OffsetCommitResponse {
	resp := req.ResponseKind().(*kmsg.OffsetCommitResponse)
	codes := map[kafka.TopicPartition]int16{}
	set := func(err error) {
		for _, t := range req.Topics {
			for _, p := range t.Partitions {
				codes[kafka.TopicPartition{Topic: t.Topic, Partition: p.Partition}] = errCode(err)
			}
		}
	}
	g, err := c.lockGroup(req.Group, offsetAPI, req.Generation < 0)
	if err == nil {
		if g == nil && req.Version >= 9 {
			err = kerr.GroupIDNotFound // Kafka 4.0's answer from v9
		} else if g == nil {
			err = kerr.IllegalGeneration
		} else if err = c.commitTargetLocked(g, req); err != nil {
			g.mu.Unlock()
		}
	}
	if err != nil {
		set(err)
		return fillCommitResponse(resp, req, codes)
	}
	now := c.clock.Now().UnixMilli()
	var recs []Record
	var commits []kafka.TopicPartition
	var values []OffsetAndMetadata
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			tp := kafka.TopicPartition{Topic: t.Topic, Partition: p.Partition}
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
			recs = append(recs, Record{Key: offsetCommitKey(g.id, tp.Topic, tp.Partition), Value: offsetCommitValue(o)})
			commits, values = append(commits, tp), append(values, o)
		}
	}
	if len(recs) == 0 {
		g.mu.Unlock()
		return fillCommitResponse(resp, req, codes)
	}
	// Appended under the group's lock: the group's records reach the log
	// in the order the group decided them (a commit and an OffsetDelete's
	// tombstone of the same key, say).
	base, await, err := c.store.Append(g.partition, EncodeBatch(recs, now))
	appended := err == nil
	if appended {
		g.pendingCommits++
	}
	g.mu.Unlock()
	if appended {
		wctx, cancel := context.WithTimeout(ctx, c.cfg.OffsetCommitTimeout)
		err = await(wctx)
		cancel()
	}
	err = offsetStoreError(err)
	g.mu.Lock()
	if appended {
		g.pendingCommits--
	}
	if err == nil && !g.is(Dead) {
		for i, tp := range commits {
			putIfNewer(g.offsets, tp, committedOffset{values[i], base + int64(i)})
		}
	}
	g.mu.Unlock()
	for _, tp := range commits {
		codes[tp] = errCode(err)
	}
	return fillCommitResponse(resp, req, codes)
}

func fillCommitResponse(resp *kmsg.OffsetCommitResponse, req *kmsg.OffsetCommitRequest, codes map[kafka.TopicPartition]int16) *kmsg.OffsetCommitResponse {
	for _, t := range req.Topics {
		rt := kmsg.NewOffsetCommitResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetCommitResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, codes[kafka.TopicPartition{Topic: t.Topic, Partition: p.Partition}]
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// commitTargetLocked checks a commit against the group (Kafka's
// handleCommitOffsets): a generation below 0 is a commit from outside group
// management, allowed into an Empty group (created if missing).
func (c *Coordinator) commitTargetLocked(g *group, req *kmsg.OffsetCommitRequest) error {
	if g.modern != nil {
		return g.modern.validateCommit(req)
	}
	instanceID := deref(req.InstanceID)
	switch {
	case g.isStaticMemberFenced(req.MemberID, instanceID):
		return kerr.FencedInstanceID
	case req.Generation < 0 && g.is(Empty):
		return nil
	case !g.has(req.MemberID):
		return kerr.UnknownMemberID
	case req.Generation != g.generation:
		return kerr.IllegalGeneration
	case g.is(CompletingRebalance):
		return kerr.RebalanceInProgress
	}
	m := g.members[req.MemberID]
	c.scheduleHeartbeatLocked(g, m, m.sessionTimeout)
	return nil
}

// OffsetFetch answers an OffsetFetch request (null topics, v2+: every
// partition the group committed).
func (c *Coordinator) OffsetFetch(req *kmsg.OffsetFetchRequest) *kmsg.OffsetFetchResponse {
	resp := req.ResponseKind().(*kmsg.OffsetFetchResponse)
	g, err := c.lockGroup(req.Group, offsetAPI, false)
	if err != nil {
		resp.ErrorCode = errCode(err)
		if req.Version < 2 {
			for _, t := range req.Topics {
				rt := kmsg.NewOffsetFetchResponseTopic()
				rt.Topic = t.Topic
				for _, p := range t.Partitions {
					rp := kmsg.NewOffsetFetchResponseTopicPartition()
					// Metadata "" as Kafka's NO_METADATA, never null.
					rp.Partition, rp.Offset, rp.Metadata, rp.ErrorCode = p, -1, kmsg.StringPtr(""), errCode(err)
					rt.Partitions = append(rt.Partitions, rp)
				}
				resp.Topics = append(resp.Topics, rt)
			}
		}
		return resp
	}
	if g != nil {
		defer g.mu.Unlock()
	}
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
		tp := kafka.TopicPartition{Topic: topic, Partition: partition}
		switch {
		case g == nil:
		case req.RequireStable && g.hasPendingTxnOffset(tp):
			// KIP-447: a transaction's commit of it awaits its marker.
			rp.ErrorCode = kerr.UnstableOffsetCommit.Code
		default:
			if o, ok := g.offsets[tp]; ok {
				rp.Offset, rp.LeaderEpoch, rp.Metadata = o.Offset, o.LeaderEpoch, kmsg.StringPtr(o.Metadata)
			}
		}
		rt.Partitions = append(rt.Partitions, rp)
		return &rt.Partitions[len(rt.Partitions)-1]
	}
	if req.Topics == nil && req.Version >= 2 {
		if g != nil {
			for tp := range g.offsets {
				add(tp.Topic, tp.Partition)
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
	g, err := c.lockGroup(req.Group, offsetAPI, false)
	switch {
	case err != nil:
		resp.ErrorCode = errCode(err)
		return resp
	case g == nil:
		resp.ErrorCode = kerr.GroupIDNotFound.Code
		return resp
	}
	defer g.mu.Unlock()
	switch {
	case g.protocolType != consumerProtocolType && !g.is(Empty):
		resp.ErrorCode = kerr.NonEmptyGroup.Code
		return resp
	}
	var removed []kafka.TopicPartition
	for _, t := range req.Topics {
		rt := kmsg.NewOffsetDeleteResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetDeleteResponseTopicPartition()
			rp.Partition = p.Partition
			if !g.empty() && g.isSubscribedTo(t.Topic) {
				rp.ErrorCode = kerr.GroupSubscribedToTopic.Code
			} else {
				tp := kafka.TopicPartition{Topic: t.Topic, Partition: p.Partition}
				for pid, pending := range g.pendingTxnOffsets {
					if delete(pending, tp); len(pending) == 0 {
						delete(g.pendingTxnOffsets, pid)
					}
				}
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
func (c *Coordinator) writeTombstonesLocked(g *group, removed []kafka.TopicPartition, groupGone bool) {
	var recs []Record
	for _, tp := range removed {
		recs = append(recs, Record{Key: offsetCommitKey(g.id, tp.Topic, tp.Partition)})
	}
	if groupGone && g.modern != nil {
		recs = append(recs, consumerGroupTombstones(g.id)...)
	} else if groupGone && g.generation > 0 {
		recs = append(recs, Record{Key: groupMetadataKey(g.id)})
	}
	if len(recs) == 0 {
		return
	}
	if _, _, err := c.store.Append(g.partition, EncodeBatch(recs, c.clock.Now().UnixMilli())); err != nil {
		c.log.Warn("Failed to write tombstones", zap.String("group", g.id), zap.Int32("partition", g.partition), zap.Error(err))
	}
}

func (c *Coordinator) scheduleExpiryLocked() {
	if c.cfg.OffsetsRetentionCheckInterval <= 0 {
		return
	}
	c.expiry = c.clock.AfterFunc(c.cfg.OffsetsRetentionCheckInterval, func() {
		c.mu.Lock()
		active := c.active
		c.mu.Unlock()
		if !active {
			return
		}
		c.ExpireOffsets()
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.active {
			c.scheduleExpiryLocked()
		}
	})
}

// loadedGroups returns the groups of every loaded partition, taken under
// c.mu; the caller locks each one in turn.
func (c *Coordinator) loadedGroups() []*group {
	c.mu.Lock()
	defer c.mu.Unlock()
	var groups []*group
	for _, p := range c.partitions {
		for _, g := range p.groups {
			groups = append(groups, g)
		}
	}
	return groups
}

// ExpireOffsets runs the offsets.retention.minutes check now, over the
// groups of every loaded partition one group lock at a time, and returns
// how many offsets it removed.
func (c *Coordinator) ExpireOffsets() int {
	groups := c.loadedGroups()
	now := c.clock.Now()
	total := 0
	for _, g := range groups {
		g.mu.Lock()
		if !g.is(Dead) {
			total += c.expireOffsetsLocked(g, now)
		}
		g.mu.Unlock()
	}
	return total
}

// expireOffsetsLocked is Kafka 2.8's cleanupGroupMetadata for one group: an
// offset expires at its explicit expire timestamp; otherwise, in an Empty
// group, retention counts from when the group became Empty (or from the
// commit for a group that only stores offsets); in a live consumer group,
// offsets of topics nobody subscribes to expire from their commit. An Empty
// group with no offsets left is removed.
func (c *Coordinator) expireOffsetsLocked(g *group, now time.Time) int {
	retention := c.cfg.OffsetsRetention.Milliseconds()
	nowMs := now.UnixMilli()
	var removed []kafka.TopicPartition
	for tp, o := range g.offsets {
		var expired bool
		switch {
		case o.ExpireTimestamp >= 0:
			expired = nowMs >= o.ExpireTimestamp
		case g.modern != nil:
			// Kafka 4.0: from the commit, once no member subscribes.
			expired = !g.isSubscribedTo(tp.Topic) && nowMs-o.CommitTimestamp >= retention
		case g.is(Empty) && g.protocolType == "":
			expired = nowMs-o.CommitTimestamp >= retention
		case g.is(Empty):
			expired = nowMs-g.stateTime.UnixMilli() >= retention
		case g.protocolType == consumerProtocolType && g.subscribedKnown && !g.subscribed[tp.Topic]:
			expired = nowMs-o.CommitTimestamp >= retention
		}
		if expired {
			removed = append(removed, tp)
			delete(g.offsets, tp)
		}
	}
	gone := g.empty() && !g.hasOffsets()
	if gone {
		c.transitionLocked(g, Dead)
		c.removeGroupLocked(g)
	}
	if len(removed) > 0 || gone {
		c.log.Info("Removed expired offsets", zap.String("group", g.id), zap.Int("offsets", len(removed)), zap.Bool("group-removed", gone))
	}
	c.writeTombstonesLocked(g, removed, gone)
	return len(removed)
}
