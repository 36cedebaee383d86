package broker

// InitProducerId (key 22), versions 0–4 (Kafka 2.8's range), answered by
// the transaction coordinator. Without a transactional id it hands out a
// new producer id with epoch 0 from /latest_producer_id_block (whatever
// producer id and epoch v3+ carry, as Kafka accepts such a request
// blindly). With one, this broker must coordinate the id (FindCoordinator
// key type 1): the id's producer id is returned with its epoch bumped,
// fencing the previous producer; an open transaction is aborted first and
// answered CONCURRENT_TRANSACTIONS for the producer to retry.
//
//	v1: same as v0
//	v2: flexible
//	v3: the producer's current id and epoch (KIP-360): both -1, or both set
//	    (else INVALID_REQUEST); an epoch that is neither the current nor the
//	    previous one is fenced
//	v4: same as v3, PRODUCER_FENCED (KIP-588); v0–v3 get INVALID_PRODUCER_EPOCH
//	    instead
//
// Errors: INVALID_REQUEST (empty transactional id),
// INVALID_TRANSACTION_TIMEOUT (transaction.timeout.ms not in
// 1..transaction.max.timeout.ms), NOT_COORDINATOR,
// COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE,
// CONCURRENT_TRANSACTIONS, PRODUCER_FENCED.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/transaction"
)

// producerFencedVersions are the first versions of InitProducerId,
// AddPartitionsToTxn, AddOffsetsToTxn and EndTxn that know PRODUCER_FENCED;
// older clients get INVALID_PRODUCER_EPOCH.
const (
	initProducerIDFencedVersion = 4
	txnAPIFencedVersion         = 2
)

var initProducerIDAPI = api{
	key: 22, min: 0, max: maxVersion(22),
	handle: func(ctx context.Context, s *Server, r *request) kmsg.Response {
		if resp := s.initProducerIDDenied(r, r.body.(*kmsg.InitProducerIDRequest)); resp != nil {
			return resp
		}
		return s.handleInitProducerID(ctx, r.body.(*kmsg.InitProducerIDRequest))
	},
	errorResponse: func(req kmsg.Request, code int16) kmsg.Response {
		resp := req.ResponseKind().(*kmsg.InitProducerIDResponse)
		resp.ErrorCode, resp.ProducerID, resp.ProducerEpoch = code, -1, -1
		return resp
	},
}

func (s *Server) handleInitProducerID(ctx context.Context, req *kmsg.InitProducerIDRequest) *kmsg.InitProducerIDResponse {
	resp := req.ResponseKind().(*kmsg.InitProducerIDResponse)
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	var expected *transaction.ProducerIDAndEpoch
	switch {
	case req.ProducerID == -1 && req.ProducerEpoch == -1:
	case req.ProducerID == -1 || req.ProducerEpoch == -1:
		resp.ErrorCode = kerr.InvalidRequest.Code
		return resp
	default:
		expected = &transaction.ProducerIDAndEpoch{ProducerID: req.ProducerID, Epoch: req.ProducerEpoch}
	}
	id, epoch, err := s.txnCoordinator.InitProducerID(ctx, req.TransactionalID, req.TransactionTimeoutMillis, expected)
	resp.ErrorCode = fencedCode(err, req.Version, initProducerIDFencedVersion)
	if err == nil {
		resp.ProducerID, resp.ProducerEpoch = id, epoch
	}
	return resp
}

// fencedCode is an error's code, with PRODUCER_FENCED given to versions
// before fencedVersion as INVALID_PRODUCER_EPOCH, which they understand.
func fencedCode(err error, version, fencedVersion int16) int16 {
	code := errorCode(err)
	if code == kerr.ProducerFenced.Code && version < fencedVersion {
		return kerr.InvalidProducerEpoch.Code
	}
	return code
}
