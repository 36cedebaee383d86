package broker

// FindCoordinator (key 10), versions 0–3 (Kafka 2.8's range; batched keys
// came with v4 in Kafka 3.0).
//
//	v0: the group's coordinator: node id, host, port
//	v1: coordinator type (0 group, 1 transaction), throttle time, error message
//	v2: same as v1
//	v3: flexible
//
// A group's coordinator is the leader of its __consumer_offsets partition,
// abs(javaHashCode(group)) % offsets.topic.num.partitions. The first request
// creates the topic; until its leaders are elected the answer is
// COORDINATOR_NOT_AVAILABLE and clients retry. This broker has no
// transaction coordinator: transaction keys get COORDINATOR_NOT_AVAILABLE.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

var findCoordinatorAPI = api{
	key: 10, min: 0, max: maxVersion(10),
	handle: func(_ context.Context, s *Server, r *request) kmsg.Response {
		return s.handleFindCoordinator(r.body.(*kmsg.FindCoordinatorRequest), r.listener)
	},
	errorResponse: func(req kmsg.Request, code int16) kmsg.Response {
		resp := req.ResponseKind().(*kmsg.FindCoordinatorResponse)
		resp.ErrorCode, resp.NodeID, resp.Port = code, -1, -1
		return resp
	},
}

func (s *Server) handleFindCoordinator(req *kmsg.FindCoordinatorRequest, listener string) *kmsg.FindCoordinatorResponse {
	resp := req.ResponseKind().(*kmsg.FindCoordinatorResponse)
	var err error
	switch req.CoordinatorType {
	case 0:
		resp.NodeID, resp.Host, resp.Port, err = s.coordinatorNode(req.CoordinatorKey, listener)
	case 1:
		resp.NodeID, resp.Port, err = -1, -1, kerr.CoordinatorNotAvailable
	default:
		resp.NodeID, resp.Port, err = -1, -1, kerr.InvalidRequest
	}
	resp.ErrorCode = errorCode(err)
	if req.Version >= 1 {
		resp.ErrorMessage = groupErrorString(resp.ErrorCode)
	}
	return resp
}
