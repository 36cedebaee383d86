package broker

// OffsetDelete (key 47), version 0 (KIP-496).
//
// Deletes a group's committed offsets of topics it is not subscribed to
// (GROUP_SUBSCRIBED_TO_TOPIC for the others); any offset of an Empty group.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/acl"
)

var offsetDeleteAPI = api{
	key: 47, min: 0, max: maxVersion(47),
	handle: func(_ context.Context, s *Server, r *request) kmsg.Response {
		if resp := s.deniedOn(r, acl.OpDelete, acl.ResourceGroup, r.body.(*kmsg.OffsetDeleteRequest).Group, kerr.GroupAuthorizationFailed.Code); resp != nil {
			return resp
		}
		return s.groupCoordinator.OffsetDelete(r.body.(*kmsg.OffsetDeleteRequest))
	},
	errorResponse: func(req kmsg.Request, code int16) kmsg.Response {
		resp := req.ResponseKind().(*kmsg.OffsetDeleteResponse)
		resp.ErrorCode = code
		return resp
	},
}
