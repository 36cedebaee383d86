package broker

// Produce (key 0), versions 0–9.
//
//	v0–v2: message sets in the v0 or v1 format (magic 0 or 1), up-converted
//	       to one v2 batch before the append, as Kafka 2.8 stores them with its
//	       default log.message.format.version (a topic whose
//	       message.format.version is older has the log convert the batch to
//	       its format); v1 adds throttling, v2 the log append time in the
//	       response
//	v3: transactional id; record batches (magic 2) only, else INVALID_RECORD
//	v4: same as v3 (KAFKA_STORAGE_ERROR may be returned)
//	v5: log start offset in the response
//	v6, v7: same as v5 (throttling, ZStandard)
//	v8: per-record errors and an error message (KIP-467)
//	v9: flexible
//
// Transactional batches (a transactional id, v3+; without one the whole
// request gets TRANSACTIONAL_ID_AUTHORIZATION_FAILED) are appended like any
// other; the partition's producer state opens the producer's transaction at
// the first and refuses a zombie's (INVALID_PRODUCER_EPOCH) or a
// non-transactional batch in between (INVALID_TXN_STATE).
//
// acks 0 gets no response; acks 1 answers once the leader appended; acks -1
// (all) checks min.insync.replicas before appending (NOT_ENOUGH_REPLICAS) and
// answers once the high watermark passes the appended records
// (delayed_produce.go), or with REQUEST_TIMED_OUT at the request's timeout.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/quota"
	"github.com/zkafka/zkafka/wire"
	"github.com/zkafka/zkafka/zkpaths"
)

var produceAPI = api{
	key: 0, min: 0, max: maxVersion(0),
	handle: func(ctx context.Context, s *Server, r *request) kmsg.Response {
		resp := s.produceAuthorized(ctx, r, r.body.(*kmsg.ProduceRequest))
		// producer_byte_rate counts whole requests, once they are handled.
		if d := s.clientQuotas.Record(quota.Produce, r.principal().Name, r.clientID(), float64(r.size)); d > 0 {
			r.throttle(d)
			resp.ThrottleMillis = throttleMillis(d)
		}
		if r.body.(*kmsg.ProduceRequest).Acks != 0 {
			return resp
		}
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				r.closeConnection = r.closeConnection || p.ErrorCode != 0
			}
		}
		return nil
	},
	errorResponse: func(req kmsg.Request, code int16) kmsg.Response {
		pr := req.(*kmsg.ProduceRequest)
		return produceResponse(pr, func(string, int32, []byte) kmsg.ProduceResponseTopicPartition {
			p := kmsg.NewProduceResponseTopicPartition()
			p.ErrorCode = code
			return p
		})
	},
}

// produceResponse mirrors the request's topics and partitions, filling each
// partition's answer with fn.
func produceResponse(req *kmsg.ProduceRequest, fn func(topic string, partition int32, records []byte) kmsg.ProduceResponseTopicPartition) *kmsg.ProduceResponse {
	resp := req.ResponseKind().(*kmsg.ProduceResponse)
	for _, t := range req.Topics {
		rt := kmsg.ProduceResponseTopic{Topic: t.Topic}
		for _, p := range t.Partitions {
			rp := fn(t.Topic, p.Partition, p.Records)
			rp.Partition = p.Partition
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

func (s *Server) handleProduce(ctx context.Context, req *kmsg.ProduceRequest) *kmsg.ProduceResponse {
	var pending []*pendingProduce
	// Kafka authorizes transactional records by the request's transactional
	// id: without one, the whole request is refused.
	refuseAll := req.TransactionID == nil && hasTransactionalRecords(req)
	resp := produceResponse(req, func(topic string, partition int32, records []byte) kmsg.ProduceResponseTopicPartition {
		rp := kmsg.NewProduceResponseTopicPartition()
		rp.BaseOffset, rp.LogAppendTime, rp.LogStartOffset = -1, -1, -1
		if refuseAll {
			rp.ErrorCode = kerr.TransactionalIDAuthorizationFailed.Code
			return rp
		}
		if req.Acks != 0 && req.Acks != 1 && req.Acks != -1 {
			rp.ErrorCode = kerr.InvalidRequiredAcks.Code
			return rp
		}
		if err := zkpaths.ValidateTopicName(topic); err != nil {
			rp.ErrorCode = kerr.InvalidTopicException.Code
			rp.ErrorMessage = kmsg.StringPtr(err.Error())
			return rp
		}
		if internalTopics[topic] {
			// Only the coordinators write their topics (Kafka's
			// internalTopicsAllowed is false for clients).
			rp.ErrorCode = kerr.InvalidTopicException.Code
			rp.ErrorMessage = kmsg.StringPtr("Cannot append to internal topic " + topic)
			return rp
		}
		if req.Version >= 3 && wire.IsLegacyMessageSet(records) {
			// Kafka's ProduceRequest.validateRecords.
			rp.ErrorCode = kerr.InvalidRecord.Code
			rp.ErrorMessage = kmsg.StringPtr(fmt.Sprintf("Produce requests with version %d are only allowed to contain record batches with magic version 2", req.Version))
			return rp
		}
		p, _, err := s.replicas.leaderPartition(topic, partition, -1)
		if err != nil {
			rp.ErrorCode = errorCode(err)
			return rp
		}
		if req.Version < 3 && wire.IsLegacyMessageSet(records) {
			converted, err := wire.UpConvert(records)
			if err != nil {
				rp.ErrorCode = kerr.CorruptMessage.Code
				if errors.Is(err, wire.ErrUnknownCodec) {
					rp.ErrorCode = kerr.UnsupportedCompressionType.Code
				}
				rp.ErrorMessage = kmsg.StringPtr(err.Error())
				return rp
			}
			records = converted
		}
		info, epoch, err := p.appendAsLeader(records, req.Acks)
		if err != nil {
			rp.ErrorCode = errorCode(err)
			rp.ErrorMessage = kmsg.StringPtr(err.Error())
			if rp.ErrorCode == kerr.UnknownServerError.Code {
				s.log.Error("Append failed", zap.String("topic", topic), zap.Int32("partition", partition), zap.Error(err))
			}
			return rp
		}
		rp.BaseOffset = info.FirstOffset
		rp.LogAppendTime = info.LogAppendTime
		rp.LogStartOffset = info.LogStartOffset
		if req.Acks == -1 && info.LastOffset >= 0 {
			pending = append(pending, &pendingProduce{topic: topic, partition: partition, p: p, requiredOffset: info.LastOffset + 1, leaderEpoch: epoch})
		}
		return rp
	})
	if len(pending) > 0 {
		s.awaitReplication(ctx, resp, pending, time.Duration(req.TimeoutMillis)*time.Millisecond)
	}
	return resp
}

// hasTransactionalRecords reports whether any partition's first batch is
// transactional (Kafka's ProduceRequest.hasTransactionalRecords).
func hasTransactionalRecords(req *kmsg.ProduceRequest) bool {
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			if h, err := wire.ReadBatchHeader(p.Records); err == nil && h.Attributes.Transactional() {
				return true
			}
		}
	}
	return false
}

// errorCode maps an error to its Kafka code: kerr values (possibly wrapped)
// keep theirs, anything else is UNKNOWN_SERVER_ERROR.
func errorCode(err error) int16 {
	if err == nil {
		return 0
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Code
	}
	return kerr.UnknownServerError.Code
}
