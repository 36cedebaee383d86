package broker

// InitProducerId (key 22), versions 0–4 (Kafka 2.8's range), for idempotent
// producers only: a request without a transactional id gets a new producer
// id with epoch 0, as Kafka's coordinator answers it (it accepts such a
// request blindly, whatever producer id and epoch v3+ carry). This broker has
// no transaction coordinator: a transactional id is refused with
// TRANSACTIONAL_ID_AUTHORIZATION_FAILED, the answer Produce gives
// transactional batches too, which clients treat as fatal rather than
// retrying for ever.
//
//	v1: same as v0
//	v2: flexible
//	v3: the producer's current id and epoch (KIP-360)
//	v4: same as v3 (PRODUCER_FENCED, KIP-588)

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
)

var initProducerIDAPI = api{
	key: 22, min: 0, max: maxVersion(22),
	handle: func(_ context.Context, s *Server, r *request) kmsg.Response {
		return s.handleInitProducerID(r.body.(*kmsg.InitProducerIDRequest))
	},
	errorResponse: func(req kmsg.Request, code int16) kmsg.Response {
		resp := req.ResponseKind().(*kmsg.InitProducerIDResponse)
		resp.ErrorCode, resp.ProducerID, resp.ProducerEpoch = code, -1, -1
		return resp
	},
}

func (s *Server) handleInitProducerID(req *kmsg.InitProducerIDRequest) *kmsg.InitProducerIDResponse {
	resp := req.ResponseKind().(*kmsg.InitProducerIDResponse)
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	if req.TransactionalID != nil {
		resp.ErrorCode = kerr.TransactionalIDAuthorizationFailed.Code
		return resp
	}
	id, err := s.replicas.producerIDs.generate()
	if err != nil {
		s.log.Error("Cannot allocate a producer id", zap.Error(err))
		resp.ErrorCode = kerr.CoordinatorNotAvailable.Code
		return resp
	}
	resp.ProducerID, resp.ProducerEpoch = id, 0
	return resp
}
