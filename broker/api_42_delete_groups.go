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

	"github.com/twmb/franz-go/pkg/kmsg"
)

var deleteGroupsAPI = api{
	key: 42, min: 0, max: maxVersion(42),
	handle: func(_ context.Context, s *Server, r *request) kmsg.Response {
		req := r.body.(*kmsg.DeleteGroupsRequest)
		resp := req.ResponseKind().(*kmsg.DeleteGroupsResponse)
		errs := s.groupCoordinator.DeleteGroups(req.Groups)
		for _, g := range req.Groups {
			rg := kmsg.NewDeleteGroupsResponseGroup()
			rg.Group, rg.ErrorCode = g, errorCode(errs[g])
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
