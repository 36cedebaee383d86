package coordinator

// Transactional offset commits (KIP-98, KIP-447): TxnOffsetCommit writes a
// transactional producer's offsets to __consumer_offsets as part of its
// transaction, and the group keeps them pending until the transaction's
// marker reaches the partition (CompleteTxn, from WriteTxnMarkers): a
// COMMIT makes them the group's offsets, an ABORT drops them. Until then
// OffsetFetch with require_stable answers UNSTABLE_OFFSET_COMMIT for them.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/kafka"
)

// TxnOffsetCommit answers a TxnOffsetCommit request once the records are
// replicated (acks=all) or offsets.commit.timeout.ms passes. The group is
// created if missing (a producer may commit for a group that never
// joined); a v3 request naming a member and generation is checked against
// them (KIP-447: a zombie of an older generation cannot commit).
func (c *Coordinator) TxnOffsetCommit(ctx context.Context, req *kmsg.TxnOffsetCommitRequest) *kmsg.TxnOffsetCommitResponse {
	codes := map[kafka.TopicPartition]int16{}
	setAll := func(err error) {
		for _, t := range req.Topics {
			for _, p := range t.Partitions {
				codes[kafka.TopicPartition{Topic: t.Topic, Partition: p.Partition}] = errCode(err)
			}
		}
	}
	g, err := c.lockGroup(req.Group, offsetAPI, true)
	if err == nil {
		switch instanceID := deref(req.InstanceID); {
		case g.isStaticMemberFenced(req.MemberID, instanceID):
			err = kerr.FencedInstanceID
		case req.MemberID != "" && !g.has(req.MemberID):
			err = kerr.UnknownMemberID
		case req.Generation >= 0 && req.Generation != g.generation:
			err = kerr.IllegalGeneration
		}
		if err != nil {
			g.mu.Unlock()
		}
	}
	if err != nil {
		setAll(err)
		return fillTxnCommitResponse(req, codes)
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
			if req.Version < 2 {
				o.LeaderEpoch = -1
			}
			recs = append(recs, Record{Key: offsetCommitKey(g.id, tp.Topic, tp.Partition), Value: offsetCommitValue(o)})
			commits, values = append(commits, tp), append(values, o)
		}
	}
	if len(recs) == 0 {
		g.mu.Unlock()
		return fillTxnCommitResponse(req, codes)
	}
	pending := g.pendingTxnOffsets[req.ProducerID]
	if pending == nil {
		pending = map[kafka.TopicPartition]committedOffset{}
		g.pendingTxnOffsets[req.ProducerID] = pending
	}
	for i, tp := range commits {
		pending[tp] = committedOffset{values[i], -1}
	}
	base, await, err := c.store.Append(g.partition, encodeProducerBatch(recs, now, req.ProducerID, req.ProducerEpoch))
	g.mu.Unlock()
	if err == nil {
		wctx, cancel := context.WithTimeout(ctx, c.cfg.OffsetCommitTimeout)
		err = await(wctx)
		cancel()
	}
	err = offsetStoreError(err)
	g.mu.Lock()
	if !g.is(Dead) {
		if pending := g.pendingTxnOffsets[req.ProducerID]; pending != nil {
			for i, tp := range commits {
				cur, ok := pending[tp]
				switch {
				case !ok || cur.OffsetAndMetadata != values[i]:
					// A later commit of the same producer replaced it.
				case err == nil:
					pending[tp] = committedOffset{values[i], base + int64(i)}
				default:
					delete(pending, tp)
				}
			}
			if len(pending) == 0 {
				delete(g.pendingTxnOffsets, req.ProducerID)
			}
		}
	}
	g.mu.Unlock()
	if err != nil {
		c.log.Info("Transactional offset commit failed", zap.String("group", req.Group), zap.Int64("producer-id", req.ProducerID), zap.Error(err))
	}
	for _, tp := range commits {
		codes[tp] = errCode(err)
	}
	return fillTxnCommitResponse(req, codes)
}

func fillTxnCommitResponse(req *kmsg.TxnOffsetCommitRequest, codes map[kafka.TopicPartition]int16) *kmsg.TxnOffsetCommitResponse {
	resp := req.ResponseKind().(*kmsg.TxnOffsetCommitResponse)
	for _, t := range req.Topics {
		rt := kmsg.NewTxnOffsetCommitResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewTxnOffsetCommitResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, codes[kafka.TopicPartition{Topic: t.Topic, Partition: p.Partition}]
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// CompleteTxn settles a producer's pending transactional commits in the
// groups of the given __consumer_offsets partitions, once its transaction's
// marker is replicated there (Kafka's handleTxnCompletion). Groups that
// moved away meanwhile are settled by their new coordinator's load.
func (c *Coordinator) CompleteTxn(producerID int64, partitions []int32, commit bool) {
	for _, g := range c.groupsOf(partitions) {
		g.mu.Lock()
		if !g.is(Dead) {
			if _, ok := g.pendingTxnOffsets[producerID]; ok {
				g.completePendingTxnOffsets(producerID, commit)
				c.log.Debug("Completed transactional offset commits", zap.String("group", g.id),
					zap.Int64("producer-id", producerID), zap.Bool("commit", commit))
			}
		}
		g.mu.Unlock()
	}
}

// groupsOf returns the loaded groups of some partitions, taken under c.mu;
// the caller locks each one in turn.
func (c *Coordinator) groupsOf(partitions []int32) []*group {
	c.mu.Lock()
	defer c.mu.Unlock()
	var groups []*group
	for _, partition := range partitions {
		if p, ok := c.partitions[partition]; ok && !p.loading {
			for _, g := range p.groups {
				groups = append(groups, g)
			}
		}
	}
	return groups
}
