package broker

// DescribeGroups (key 15), versions 0–5.
//
//	v1: throttle time
//	v2: same as v1
//	v3: authorized operations (KIP-430: every group operation, as without an authorizer)
//	v4: group instance ids of members
//	v5: flexible
//
// An unknown group is described as Dead with no members; member metadata and
// assignments are shown only for a Stable group.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/acl"
)

var describeGroupsAPI = api{
	key: 15, min: 0, max: maxVersion(15),
	handle: func(_ context.Context, s *Server, r *request) kmsg.Response {
		req := r.body.(*kmsg.DescribeGroupsRequest)
		resp := req.ResponseKind().(*kmsg.DescribeGroupsResponse)
		for _, g := range req.Groups {
			if !s.authorize(r, acl.OpDescribe, acl.ResourceGroup, g) {
				d := kmsg.NewDescribeGroupsResponseGroup()
				d.Group, d.ErrorCode = g, kerr.GroupAuthorizationFailed.Code
				resp.Groups = append(resp.Groups, d)
				continue
			}
			d := s.groupCoordinator.DescribeGroup(g)
			if req.IncludeAuthorizedOperations && req.Version >= 3 {
				d.AuthorizedOperations = s.authorizedOperations(r, acl.ResourceGroup, g)
			}
			resp.Groups = append(resp.Groups, d)
		}
		return resp
	},
	errorResponse: func(req kmsg.Request, code int16) kmsg.Response {
		r := req.(*kmsg.DescribeGroupsRequest)
		resp := r.ResponseKind().(*kmsg.DescribeGroupsResponse)
		for _, g := range r.Groups {
			d := kmsg.NewDescribeGroupsResponseGroup()
			d.Group, d.ErrorCode = g, code
			resp.Groups = append(resp.Groups, d)
		}
		return resp
	},
}
