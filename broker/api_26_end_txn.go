package broker

// EndTxn (key 26), versions 0–3 (Kafka 2.8): the producer commits or
// aborts its transaction. The coordinator writes PrepareCommit or
// PrepareAbort to __transaction_state and answers; the markers follow
// (WriteTxnMarkers to every partition leader of the transaction).
//
//	v1: same as v0
//	v2: PRODUCER_FENCED (v0–v1 get INVALID_PRODUCER_EPOCH instead)
//	v3: flexible
//
// Errors: INVALID_REQUEST, INVALID_PRODUCER_ID_MAPPING, PRODUCER_FENCED,
// CONCURRENT_TRANSACTIONS (the previous end still writing its markers),
// INVALID_TXN_STATE (no transaction, or the opposite outcome already
// decided), NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS,
// COORDINATOR_NOT_AVAILABLE. Ending a transaction the way it just ended is
// answered with no error.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/acl"
)

var endTxnAPI = api{
	key: 26, min: 0, max: maxVersion(26),
	handle: func(ctx context.Context, s *Server, r *request) kmsg.Response {
		if resp := s.deniedOn(r, acl.OpWrite, acl.ResourceTransactionalID, r.body.(*kmsg.EndTxnRequest).TransactionalID, kerr.TransactionalIDAuthorizationFailed.Code); resp != nil {
			return resp
		}
		req := r.body.(*kmsg.EndTxnRequest)
		resp := req.ResponseKind().(*kmsg.EndTxnResponse)
		err := s.txnCoordinator.EndTxn(ctx, req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit)
		resp.ErrorCode = fencedCode(err, req.Version, txnAPIFencedVersion)
		return resp
	},
	errorResponse: func(req kmsg.Request, code int16) kmsg.Response {
		resp := req.ResponseKind().(*kmsg.EndTxnResponse)
		resp.ErrorCode = code
		return resp
	},
}
