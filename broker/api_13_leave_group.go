package broker

// LeaveGroup (key 13), versions 0–4.
//
//	v1: throttle time
//	v2: same as v1
//	v3: a batch of members, by member id or group instance id (KIP-345),
//	    each with its own error
//	v4: flexible

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/acl"
)

var leaveGroupAPI = api{
	key: 13, min: 0, max: maxVersion(13),
	handle: func(_ context.Context, s *Server, r *request) kmsg.Response {
		if resp := s.deniedOn(r, acl.OpRead, acl.ResourceGroup, r.body.(*kmsg.LeaveGroupRequest).Group, kerr.GroupAuthorizationFailed.Code); resp != nil {
			return resp
		}
		return s.groupCoordinator.LeaveGroup(r.body.(*kmsg.LeaveGroupRequest))
	},
	errorResponse: func(req kmsg.Request, code int16) kmsg.Response {
		resp := req.ResponseKind().(*kmsg.LeaveGroupResponse)
		resp.ErrorCode = code
		return resp
	},
}
