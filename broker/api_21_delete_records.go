package broker

// DeleteRecords (key 21), versions 0–2 (Kafka 2.8, KIP-107; v2 flexible): each
// partition's leader moves its log start offset up to the requested offset
// (-1: the high watermark) at once, and the answer waits, up to the
// request's timeout, until every follower on a live broker has followed it
// (the low watermark, which each follower reports in its fetches). Records
// below the log start offset can no longer be read; the retention pass
// deletes the segments wholly below it.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/acl"
	"github.com/zkafka/zkafka/kafka"
)

var deleteRecordsAPI = api{
	key: 21, min: 0, max: maxVersion(21),
	handle: func(ctx context.Context, s *Server, r *request) kmsg.Response {
		req := r.body.(*kmsg.DeleteRecordsRequest)
		return s.handleDeleteRecords(ctx, req, s.topicFilter(r, acl.OpDelete, topicsOf(req.Topics, func(t kmsg.DeleteRecordsRequestTopic) string { return t.Topic })))
	},
	errorResponse: func(req kmsg.Request, code int16) kmsg.Response {
		results := map[kafka.TopicPartition]deleteRecordsResult{}
		for tp := range deleteRecordsTargets(req.(*kmsg.DeleteRecordsRequest)) {
			results[tp] = deleteRecordsResult{lowWatermark: -1, code: code}
		}
		return deleteRecordsResponse(req.(*kmsg.DeleteRecordsRequest), results)
	},
}

type deleteRecordsResult struct {
	lowWatermark int64
	code         int16
}

// deleteRecordsTargets is each requested partition with its offset; for a
// partition named twice the last offset counts, as in Kafka.
func deleteRecordsTargets(req *kmsg.DeleteRecordsRequest) map[kafka.TopicPartition]int64 {
	targets := map[kafka.TopicPartition]int64{}
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			targets[kafka.TopicPartition{Topic: t.Topic, Partition: p.Partition}] = p.Offset
		}
	}
	return targets
}

// deleteRecordsResponse answers each requested partition once, in the
// request's order.
func deleteRecordsResponse(req *kmsg.DeleteRecordsRequest, results map[kafka.TopicPartition]deleteRecordsResult) *kmsg.DeleteRecordsResponse {
	resp := req.ResponseKind().(*kmsg.DeleteRecordsResponse)
	seen := map[kafka.TopicPartition]bool{}
	for _, t := range req.Topics {
		rt := kmsg.NewDeleteRecordsResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			tp := kafka.TopicPartition{Topic: t.Topic, Partition: p.Partition}
			if seen[tp] {
				continue
			}
			seen[tp] = true
			rp := kmsg.NewDeleteRecordsResponseTopicPartition()
			rp.Partition, rp.LowWatermark, rp.ErrorCode = p.Partition, results[tp].lowWatermark, results[tp].code
			rt.Partitions = append(rt.Partitions, rp)
		}
		if len(rt.Partitions) > 0 {
			resp.Topics = append(resp.Topics, rt)
		}
	}
	return resp
}

// handleDeleteRecords answers TOPIC_AUTHORIZATION_FAILED for a topic not in
// deletable (nil: every topic), before UNKNOWN_TOPIC_OR_PARTITION as 2.8.
func (s *Server) handleDeleteRecords(ctx context.Context, req *kmsg.DeleteRecordsRequest, deletable topicSet) *kmsg.DeleteRecordsResponse {
	results := map[kafka.TopicPartition]deleteRecordsResult{}
	type pending struct {
		p        *Partition
		required int64
	}
	var waits []pending
	var waitTPs []kafka.TopicPartition
	for tp, offset := range deleteRecordsTargets(req) {
		if !deletable.allows(tp.Topic) {
			results[tp] = deleteRecordsResult{lowWatermark: -1, code: kerr.TopicAuthorizationFailed.Code}
			continue
		}
		if !s.partitionExists(tp.Topic, tp.Partition) {
			results[tp] = deleteRecordsResult{lowWatermark: -1, code: kerr.UnknownTopicOrPartition.Code}
			continue
		}
		p, lw, required, err := s.replicas.deleteRecords(tp, offset)
		if err != nil {
			s.log.Info("DeleteRecords failed", zap.Stringer("partition", tp), zap.Int64("offset", offset), zap.Error(err))
			results[tp] = deleteRecordsResult{lowWatermark: -1, code: errorCode(err)}
			continue
		}
		results[tp] = deleteRecordsResult{lowWatermark: lw}
		if lw < required {
			waits = append(waits, pending{p, required})
			waitTPs = append(waitTPs, tp)
		}
	}
	if len(waits) > 0 {
		wctx, cancel := context.WithTimeout(ctx, time.Duration(max(req.TimeoutMillis, 0))*time.Millisecond)
		defer cancel()
		var mu sync.Mutex
		var wg sync.WaitGroup
		for i, w := range waits {
			wg.Go(func() {
				lw, err := w.p.awaitLowWatermark(wctx, w.required, s.metadata.HasAliveBroker)
				r := deleteRecordsResult{lowWatermark: lw}
				switch {
				case errors.Is(err, kerr.RequestTimedOut):
					// Kafka leaves the low watermark of the local delete.
					r = deleteRecordsResult{lowWatermark: results[waitTPs[i]].lowWatermark, code: kerr.RequestTimedOut.Code}
				case err != nil:
					r = deleteRecordsResult{lowWatermark: -1, code: errorCode(err)}
				}
				mu.Lock()
				results[waitTPs[i]] = r
				mu.Unlock()
			})
		}
		wg.Wait()
	}
	return deleteRecordsResponse(req, results)
}

// deleteRecords is DeleteRecords on this broker's replica of tp (Kafka's
// ReplicaManager.deleteRecordsOnLocalLog): internal topics are refused, a
// partition this broker does not host answers NOT_LEADER_OR_FOLLOWER.
func (rm *ReplicaManager) deleteRecords(tp kafka.TopicPartition, offset int64) (p *Partition, lowWatermark, required int64, err error) {
	if internalTopics[tp.Topic] {
		return nil, -1, -1, fmt.Errorf("cannot delete records of internal topic %s: %w", tp.Topic, kerr.InvalidTopicException)
	}
	p, ok := rm.Partition(tp.Topic, tp.Partition)
	if !ok {
		return nil, -1, -1, kerr.NotLeaderForPartition
	}
	lw, required, err := p.deleteRecordsOnLeader(offset, rm.metadata.HasAliveBroker)
	return p, lw, required, err
}
