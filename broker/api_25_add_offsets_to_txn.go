package broker

// AddOffsetsToTxn (key 25), versions 0–3 (Kafka 2.8): the group's
// __consumer_offsets partition joins the producer's transaction, so the
// producer may then commit the group's offsets in it with TxnOffsetCommit
// (sent to the group coordinator) and the transaction's marker reaches
// them.
//
//	v1: same as v0
//	v2: PRODUCER_FENCED (v0–v1 get INVALID_PRODUCER_EPOCH instead)
//	v3: flexible
//
// Errors are AddPartitionsToTxn's.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/acl"
	"github.com/zkafka/zkafka/kafka"
)

var addOffsetsToTxnAPI = api{
	key: 25, min: 0, max: maxVersion(25),
	handle: func(ctx context.Context, s *Server, r *request) kmsg.Response {
		if resp := s.deniedOn(r, acl.OpWrite, acl.ResourceTransactionalID, r.body.(*kmsg.AddOffsetsToTxnRequest).TransactionalID, kerr.TransactionalIDAuthorizationFailed.Code); resp != nil {
			return resp
		}
		if resp := s.deniedOn(r, acl.OpRead, acl.ResourceGroup, r.body.(*kmsg.AddOffsetsToTxnRequest).Group, kerr.GroupAuthorizationFailed.Code); resp != nil {
			return resp
		}
		req := r.body.(*kmsg.AddOffsetsToTxnRequest)
		resp := req.ResponseKind().(*kmsg.AddOffsetsToTxnResponse)
		tp := kafka.TopicPartition{Topic: offsetsTopic, Partition: s.groupCoordinator.PartitionFor(req.Group)}
		err := s.txnCoordinator.AddPartitions(ctx, req.TransactionalID, req.ProducerID, req.ProducerEpoch, []kafka.TopicPartition{tp})
		resp.ErrorCode = fencedCode(err, req.Version, txnAPIFencedVersion)
		return resp
	},
	errorResponse: func(req kmsg.Request, code int16) kmsg.Response {
		resp := req.ResponseKind().(*kmsg.AddOffsetsToTxnResponse)
		resp.ErrorCode = code
		return resp
	},
}
