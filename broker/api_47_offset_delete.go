package broker

// OffsetDelete (key 47), version 0 (KIP-496).
//
// Deletes a group's committed offsets of topics it is not subscribed to
// (GROUP_SUBSCRIBED_TO_TOPIC for the others); any offset of an Empty group.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

var offsetDeleteAPI = api{
	key: 47, min: 0, max: maxVersion(47),
	handle: func(_ context.Context, s *Server, r *request) kmsg.Response {
		return s.groupCoordinator.OffsetDelete(r.body.(*kmsg.OffsetDeleteRequest))
	},
	errorResponse: func(req kmsg.Request, code int16) kmsg.Response {
		resp := req.ResponseKind().(*kmsg.OffsetDeleteResponse)
		resp.ErrorCode = code
		return resp
	},
}
