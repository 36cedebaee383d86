package broker

// AddPartitionsToTxn (key 24), versions 0–3 (Kafka 2.8): partitions join
// the producer's transaction at its coordinator, which writes them to
// __transaction_state before answering; only then may the producer write
// transactional batches to them.
//
//	v1: same as v0
//	v2: PRODUCER_FENCED (v0–v1 get INVALID_PRODUCER_EPOCH instead)
//	v3: flexible
//
// Every partition must exist: otherwise the unknown ones get
// UNKNOWN_TOPIC_OR_PARTITION, the internal topics' TOPIC_AUTHORIZATION_FAILED
// (Kafka never authorizes a producer to write to them), and the rest
// OPERATION_NOT_ATTEMPTED, and nothing is added. Otherwise every partition
// gets the coordinator's answer: none, INVALID_REQUEST,
// INVALID_PRODUCER_ID_MAPPING, PRODUCER_FENCED, CONCURRENT_TRANSACTIONS,
// NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/acl"
	"github.com/zkafka/zkafka/kafka"
)

var addPartitionsToTxnAPI = api{
	key: 24, min: 0, max: maxVersion(24),
	handle: func(ctx context.Context, s *Server, r *request) kmsg.Response {
		if resp := s.deniedOn(r, acl.OpWrite, acl.ResourceTransactionalID, r.body.(*kmsg.AddPartitionsToTxnRequest).TransactionalID, kerr.TransactionalIDAuthorizationFailed.Code); resp != nil {
			return resp
		}
		req := r.body.(*kmsg.AddPartitionsToTxnRequest)
		return s.handleAddPartitionsToTxn(ctx, req, s.topicFilter(r, acl.OpWrite, topicsOf(req.Topics, func(t kmsg.AddPartitionsToTxnRequestTopic) string { return t.Topic })))
	},
	errorResponse: func(req kmsg.Request, code int16) kmsg.Response {
		return addPartitionsResponse(req.(*kmsg.AddPartitionsToTxnRequest), func(kafka.TopicPartition) int16 { return code })
	},
}

func addPartitionsResponse(req *kmsg.AddPartitionsToTxnRequest, code func(kafka.TopicPartition) int16) *kmsg.AddPartitionsToTxnResponse {
	resp := req.ResponseKind().(*kmsg.AddPartitionsToTxnResponse)
	for _, t := range req.Topics {
		rt := kmsg.NewAddPartitionsToTxnResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewAddPartitionsToTxnResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p, code(kafka.TopicPartition{Topic: t.Topic, Partition: p})
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// handleAddPartitionsToTxn refuses internal topics and those not in
// writable (nil: every topic) with TOPIC_AUTHORIZATION_FAILED.
func (s *Server) handleAddPartitionsToTxn(ctx context.Context, req *kmsg.AddPartitionsToTxnRequest, writable topicSet) *kmsg.AddPartitionsToTxnResponse {
	var tps []kafka.TopicPartition
	refused := map[kafka.TopicPartition]int16{}
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			tp := kafka.TopicPartition{Topic: t.Topic, Partition: p}
			switch {
			case internalTopics[t.Topic] || !writable.allows(t.Topic):
				refused[tp] = kerr.TopicAuthorizationFailed.Code
			case !s.partitionExists(tp.Topic, tp.Partition):
				refused[tp] = kerr.UnknownTopicOrPartition.Code
			default:
				tps = append(tps, tp)
			}
		}
	}
	if len(refused) > 0 {
		return addPartitionsResponse(req, func(tp kafka.TopicPartition) int16 {
			if code, ok := refused[tp]; ok {
				return code
			}
			return kerr.OperationNotAttempted.Code
		})
	}
	err := s.txnCoordinator.AddPartitions(ctx, req.TransactionalID, req.ProducerID, req.ProducerEpoch, tps)
	code := fencedCode(err, req.Version, txnAPIFencedVersion)
	return addPartitionsResponse(req, func(kafka.TopicPartition) int16 { return code })
}
