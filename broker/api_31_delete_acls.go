package broker

// DeleteAcls (key 31), versions 0–2 (v1: resource pattern types, KIP-290;
// v2: flexible). For each filter, the ACLs it matched and removed, each
// with its own error; a binding two filters match is reported under the
// first. It needs ALTER on the cluster; without an authorizer every filter
// gets SECURITY_DISABLED, and a filter with an UNKNOWN element is
// INVALID_REQUEST.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/acl"
)

var deleteACLsAPI = api{
	key: 31, min: 0, max: maxVersion(31),
	handle: func(_ context.Context, s *Server, r *request) kmsg.Response {
		return s.handleDeleteACLs(r, r.body.(*kmsg.DeleteACLsRequest))
	},
	errorResponse: func(req kmsg.Request, code int16) kmsg.Response {
		return deleteACLsError(req.(*kmsg.DeleteACLsRequest), code, "")
	},
}

func deleteACLsError(req *kmsg.DeleteACLsRequest, code int16, msg string) *kmsg.DeleteACLsResponse {
	resp := req.ResponseKind().(*kmsg.DeleteACLsResponse)
	for range req.Filters {
		res := kmsg.NewDeleteACLsResponseResult()
		res.ErrorCode = code
		if msg != "" {
			res.ErrorMessage = kmsg.StringPtr(msg)
		}
		resp.Results = append(resp.Results, res)
	}
	return resp
}

func (s *Server) handleDeleteACLs(r *request, req *kmsg.DeleteACLsRequest) *kmsg.DeleteACLsResponse {
	if !s.authorizeCluster(r, acl.OpAlter) {
		return deleteACLsError(req, kerr.ClusterAuthorizationFailed.Code, clusterNotAuthorized)
	}
	if s.authorizer == nil {
		return deleteACLsError(req, kerr.SecurityDisabled.Code, securityDisabled+".")
	}
	filters := make([]acl.Filter, len(req.Filters))
	for i, f := range req.Filters {
		filters[i] = aclFilter(f.ResourceType, f.ResourceName, f.ResourcePatternType, f.Principal, f.Host, f.Operation, f.PermissionType)
		if msg := badFilter(filters[i], req.Version); msg != "" {
			return deleteACLsError(req, kerr.InvalidRequest.Code, msg)
		}
	}
	resp := req.ResponseKind().(*kmsg.DeleteACLsResponse)
	for _, deleted := range s.authorizer.DeleteACLs(filters) {
		res := kmsg.NewDeleteACLsResponseResult()
		for _, d := range deleted {
			m := kmsg.NewDeleteACLsResponseResultMatchingACL()
			if d.Err != nil {
				m.ErrorCode, m.ErrorMessage = kerr.UnknownServerError.Code, kmsg.StringPtr(d.Err.Error())
			}
			b := d.Binding
			m.ResourceType, m.ResourceName = kmsg.ACLResourceType(b.Resource.Type), b.Resource.Name
			m.ResourcePatternType = kmsg.ACLResourcePatternType(b.Resource.Pattern)
			m.Principal, m.Host = b.Entry.Principal, b.Entry.Host
			m.Operation, m.PermissionType = kmsg.ACLOperation(b.Entry.Operation), kmsg.ACLPermissionType(b.Entry.Permission)
			res.MatchingACLs = append(res.MatchingACLs, m)
		}
		resp.Results = append(resp.Results, res)
	}
	return resp
}
