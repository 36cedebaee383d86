package broker

// TxnOffsetCommit (key 28), versions 0–3 (Kafka 2.8): a transactional
// producer commits a group's offsets inside its transaction (after
// AddOffsetsToTxn), at the group's coordinator. The offsets stay pending
// until the transaction's marker reaches __consumer_offsets: a COMMIT makes
// them the group's, an ABORT drops them.
//
//	v1: same as v0
//	v2: committed leader epoch
//	v3: flexible; member id, group instance id and generation (KIP-447),
//	    checked when set: UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID,
//	    ILLEGAL_GENERATION
//
// A partition of a topic the broker does not know gets
// UNKNOWN_TOPIC_OR_PARTITION. Other errors: NOT_COORDINATOR,
// COORDINATOR_LOAD_IN_PROGRESS (COORDINATOR_NOT_AVAILABLE before v2, which
// 0.11–2.0 clients did not expect), COORDINATOR_NOT_AVAILABLE,
// OFFSET_METADATA_TOO_LARGE, INVALID_PRODUCER_EPOCH (a fenced producer),
// REQUEST_TIMED_OUT.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/acl"
	"github.com/zkafka/zkafka/kafka"
)

var txnOffsetCommitAPI = api{
	key: 28, min: 0, max: maxVersion(28),
	handle: func(ctx context.Context, s *Server, r *request) kmsg.Response {
		if resp := s.deniedOn(r, acl.OpWrite, acl.ResourceTransactionalID, r.body.(*kmsg.TxnOffsetCommitRequest).TransactionalID, kerr.TransactionalIDAuthorizationFailed.Code); resp != nil {
			return resp
		}
		if resp := s.deniedOn(r, acl.OpRead, acl.ResourceGroup, r.body.(*kmsg.TxnOffsetCommitRequest).Group, kerr.GroupAuthorizationFailed.Code); resp != nil {
			return resp
		}
		req := r.body.(*kmsg.TxnOffsetCommitRequest)
		return s.handleTxnOffsetCommit(ctx, req, s.topicFilter(r, acl.OpRead, topicsOf(req.Topics, func(t kmsg.TxnOffsetCommitRequestTopic) string { return t.Topic })))
	},
	errorResponse: func(req kmsg.Request, code int16) kmsg.Response {
		return txnOffsetCommitResponse(req.(*kmsg.TxnOffsetCommitRequest), func(kafka.TopicPartition) int16 { return code })
	},
}

func txnOffsetCommitResponse(req *kmsg.TxnOffsetCommitRequest, code func(kafka.TopicPartition) int16) *kmsg.TxnOffsetCommitResponse {
	resp := req.ResponseKind().(*kmsg.TxnOffsetCommitResponse)
	for _, t := range req.Topics {
		rt := kmsg.NewTxnOffsetCommitResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewTxnOffsetCommitResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, code(kafka.TopicPartition{Topic: t.Topic, Partition: p.Partition})
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// handleTxnOffsetCommit answers TOPIC_AUTHORIZATION_FAILED for a topic not
// in readable (nil: every topic).
func (s *Server) handleTxnOffsetCommit(ctx context.Context, req *kmsg.TxnOffsetCommitRequest, readable topicSet) *kmsg.TxnOffsetCommitResponse {
	codes := map[kafka.TopicPartition]int16{}
	known := *req
	known.Topics = knownPartitions(s, req.Topics, readable, codes,
		func(t *kmsg.TxnOffsetCommitRequestTopic) (string, *[]kmsg.TxnOffsetCommitRequestTopicPartition) {
			return t.Topic, &t.Partitions
		},
		func(p kmsg.TxnOffsetCommitRequestTopicPartition) int32 { return p.Partition })
	if len(known.Topics) > 0 {
		for _, t := range s.groupCoordinator.TxnOffsetCommit(ctx, &known).Topics {
			for _, p := range t.Partitions {
				code := p.ErrorCode
				if code == kerr.CoordinatorLoadInProgress.Code && req.Version < 2 {
					code = kerr.CoordinatorNotAvailable.Code
				}
				codes[kafka.TopicPartition{Topic: t.Topic, Partition: p.Partition}] = code
			}
		}
	}
	return txnOffsetCommitResponse(req, func(tp kafka.TopicPartition) int16 { return codes[tp] })
}
