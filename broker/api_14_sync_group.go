package broker

// SyncGroup (key 14), versions 0–5.
//
//	v1: throttle time
//	v2: same as v1
//	v3: group instance id (KIP-345)
//	v4: flexible
//	v5: protocol type and name, mandatory (INCONSISTENT_GROUP_PROTOCOL
//	    without them, before the ACL check) and checked against the
//	    group's (KIP-559)
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
		req := r.body.(*kmsg.SyncGroupRequest)
		// v5's protocol type and name are mandatory, and 2.8 checks them
		// before the group's ACLs.
		if req.Version >= 5 && (req.ProtocolType == nil || req.Protocol == nil) {
			return s.apis[r.hdr.APIKey].errorResponse(req, kerr.InconsistentGroupProtocol.Code)
		}
		if resp := s.deniedOn(r, acl.OpRead, acl.ResourceGroup, req.Group, kerr.GroupAuthorizationFailed.Code); resp != nil {
			return resp
		}
		resp := s.groupCoordinator.SyncGroup(ctx, req)
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
