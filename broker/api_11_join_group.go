package broker

// JoinGroup (key 11), versions 0–7.
//
//	v1: rebalance timeout (v0 uses the session timeout for both)
//	v2: throttle time
//	v3: same as v2
//	v4: MEMBER_ID_REQUIRED: a new member is handed its id and rejoins (KIP-394)
//	v5: group instance id: static membership (KIP-345)
//	v6: flexible
//	v7: protocol type and name in the response (KIP-559)
//
// The request parks until the group's join phase completes (coordinator).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/acl"
)

var joinGroupAPI = api{
	key: 11, min: 0, max: maxVersion(11),
	handle: func(ctx context.Context, s *Server, r *request) kmsg.Response {
		if resp := s.deniedOn(r, acl.OpRead, acl.ResourceGroup, r.body.(*kmsg.JoinGroupRequest).Group, kerr.GroupAuthorizationFailed.Code); resp != nil {
			return resp
		}
		resp := s.groupCoordinator.JoinGroup(ctx, r.body.(*kmsg.JoinGroupRequest), derefString(r.hdr.ClientID), r.clientHost())
		if resp == nil {
			return nil
		}
		return resp
	},
	errorResponse: func(req kmsg.Request, code int16) kmsg.Response {
		resp := req.ResponseKind().(*kmsg.JoinGroupResponse)
		resp.ErrorCode, resp.Generation = code, -1
		return resp
	},
}

func derefString(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
