package broker

// DeleteGroups (key 42), versions 0–2.
//
//	v1: same as v0
//	v2: flexible
//
// Only an Empty group is deleted (NON_EMPTY_GROUP otherwise): tombstones for
// its offsets and its metadata are written to __consumer_offsets.

import (
	"context"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/acl"
)

var deleteGroupsAPI = api{
	key: 42, min: 0, max: maxVersion(42),
	handle: func(_ context.Context, s *Server, r *request) kmsg.Response {
		req := r.body.(*kmsg.DeleteGroupsRequest)
		resp := req.ResponseKind().(*kmsg.DeleteGroupsResponse)
		// Groups the principal may not DELETE are left alone and answer
		// GROUP_AUTHORIZATION_FAILED (2.8).
		deletable, denied := req.Groups, map[string]bool{}
		if s.authorizer != nil {
			deletable = slices.DeleteFunc(slices.Clone(req.Groups), func(g string) bool {
				denied[g] = !s.authorize(r, acl.OpDelete, acl.ResourceGroup, g)
				return denied[g]
			})
		}
		errs := s.groupCoordinator.DeleteGroups(deletable)
		for _, g := range req.Groups {
			rg := kmsg.NewDeleteGroupsResponseGroup()
			rg.Group, rg.ErrorCode = g, errorCode(errs[g])
			if denied[g] {
				rg.ErrorCode = kerr.GroupAuthorizationFailed.Code
			}
			resp.Groups = append(resp.Groups, rg)
		}
		return resp
	},
	errorResponse: func(req kmsg.Request, code int16) kmsg.Response {
		r := req.(*kmsg.DeleteGroupsRequest)
		resp := r.ResponseKind().(*kmsg.DeleteGroupsResponse)
		for _, g := range r.Groups {
			rg := kmsg.NewDeleteGroupsResponseGroup()
			rg.Group, rg.ErrorCode = g, code
			resp.Groups = append(resp.Groups, rg)
		}
		return resp
	},
}
