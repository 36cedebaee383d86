package broker

// Heartbeat (key 12), versions 0–4.
//
//	v1: throttle time
//	v2: same as v1
//	v3: group instance id (KIP-345)
//	v4: flexible
//
// REBALANCE_IN_PROGRESS tells a member to rejoin.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/acl"
)

var heartbeatAPI = api{
	key: 12, min: 0, max: maxVersion(12),
	handle: func(_ context.Context, s *Server, r *request) kmsg.Response {
		if resp := s.deniedOn(r, acl.OpRead, acl.ResourceGroup, r.body.(*kmsg.HeartbeatRequest).Group, kerr.GroupAuthorizationFailed.Code); resp != nil {
			return resp
		}
		return s.groupCoordinator.Heartbeat(r.body.(*kmsg.HeartbeatRequest))
	},
	errorResponse: func(req kmsg.Request, code int16) kmsg.Response {
		resp := req.ResponseKind().(*kmsg.HeartbeatResponse)
		resp.ErrorCode = code
		return resp
	},
}
