package broker

// ListGroups (key 16), versions 0–4.
//
//	v1: throttle time
//	v2: same as v1
//	v3: flexible
//	v4: states filter and each group's state (KIP-518)
//
// The groups this broker coordinates; COORDINATOR_LOAD_IN_PROGRESS while a
// partition of them is loading.

import (
	"context"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/acl"
)

var listGroupsAPI = api{
	key: 16, min: 0, max: maxVersion(16),
	handle: func(_ context.Context, s *Server, r *request) kmsg.Response {
		req := r.body.(*kmsg.ListGroupsRequest)
		resp := req.ResponseKind().(*kmsg.ListGroupsResponse)
		groups, err := s.groupCoordinator.ListGroups(req.StatesFilter)
		// A principal that may DESCRIBE the cluster sees every group, any
		// other those it may DESCRIBE (2.8).
		if s.authorizer != nil && !s.authorizeCluster(r, acl.OpDescribe) {
			groups = slices.DeleteFunc(groups, func(g kmsg.ListGroupsResponseGroup) bool {
				return !s.authorize(r, acl.OpDescribe, acl.ResourceGroup, g.Group)
			})
		}
		resp.ErrorCode, resp.Groups = errorCode(err), groups
		return resp
	},
	errorResponse: func(req kmsg.Request, code int16) kmsg.Response {
		resp := req.ResponseKind().(*kmsg.ListGroupsResponse)
		resp.ErrorCode = code
		return resp
	},
}
