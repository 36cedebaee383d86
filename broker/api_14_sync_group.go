package broker

// SyncGroup (key 14), versions 0–5.
//
//	v1: throttle time
//	v2: same as v1
//	v3: group instance id (KIP-345)
//	v4: flexible
//	v5: protocol type and name, checked against the group's (KIP-559)
//
// The leader's request carries every member's assignment; every member's
// request parks until that assignment is stored with acks=all.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/acl"
)

var syncGroupAPI = api{
	key: 14, min: 0, max: maxVersion(14),
	handle: func(ctx context.Context, s *Server, r *request) kmsg.Response {
		if resp := s.deniedOn(r, acl.OpRead, acl.ResourceGroup, r.body.(*kmsg.SyncGroupRequest).Group, kerr.GroupAuthorizationFailed.Code); resp != nil {
			return resp
		}
		resp := s.groupCoordinator.SyncGroup(ctx, r.body.(*kmsg.SyncGroupRequest))
		if resp == nil {
			return nil
		}
		return resp
	},
	errorResponse: func(req kmsg.Request, code int16) kmsg.Response {
		resp := req.ResponseKind().(*kmsg.SyncGroupResponse)
		resp.ErrorCode = code
		return resp
	},
}
