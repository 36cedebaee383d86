package broker

// CreateAcls (key 30), versions 0–2 (v1: resource pattern types, KIP-290;
// v2: flexible). Each creation gets its own result: INVALID_REQUEST for a
// Cluster resource not named kafka-cluster, an empty name, an UNKNOWN or
// filter-only element (or, at v0, a pattern other than LITERAL); otherwise
// the authorizer adds the ACLs of each resource in one conditional
// ZooKeeper update and notifies every broker. It needs ALTER on the
// cluster; without an authorizer every result is SECURITY_DISABLED.

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/acl"
)

var createACLsAPI = api{
	key: 30, min: 0, max: maxVersion(30),
	handle: func(_ context.Context, s *Server, r *request) kmsg.Response {
		return s.handleCreateACLs(r, r.body.(*kmsg.CreateACLsRequest))
	},
	errorResponse: func(req kmsg.Request, code int16) kmsg.Response {
		return createACLsError(req.(*kmsg.CreateACLsRequest), code, "")
	},
}

func createACLsError(req *kmsg.CreateACLsRequest, code int16, msg string) *kmsg.CreateACLsResponse {
	resp := req.ResponseKind().(*kmsg.CreateACLsResponse)
	for range req.Creations {
		res := kmsg.NewCreateACLsResponseResult()
		res.ErrorCode = code
		if msg != "" {
			res.ErrorMessage = kmsg.StringPtr(msg)
		}
		resp.Results = append(resp.Results, res)
	}
	return resp
}

func (s *Server) handleCreateACLs(r *request, req *kmsg.CreateACLsRequest) *kmsg.CreateACLsResponse {
	if !s.authorizeCluster(r, acl.OpAlter) {
		return createACLsError(req, kerr.ClusterAuthorizationFailed.Code, clusterNotAuthorized)
	}
	if s.authorizer == nil {
		return createACLsError(req, kerr.SecurityDisabled.Code, securityDisabled+".")
	}
	resp := req.ResponseKind().(*kmsg.CreateACLsResponse)
	resp.Results = make([]kmsg.CreateACLsResponseResult, len(req.Creations))
	var valid []acl.Binding
	var at []int
	for i, c := range req.Creations {
		resp.Results[i] = kmsg.NewCreateACLsResponseResult()
		b := acl.Binding{
			Resource: acl.Resource{Type: acl.ResourceType(c.ResourceType), Name: c.ResourceName, Pattern: acl.PatternType(c.ResourcePatternType)},
			Entry:    acl.Entry{Principal: c.Principal, Host: c.Host, Operation: acl.Operation(c.Operation), Permission: acl.Permission(c.PermissionType)},
		}
		msg := ""
		switch {
		case req.Version == 0 && b.Resource.Pattern != acl.PatternLiteral:
			msg = "Version 0 only supports literal resource pattern types"
		case b.Resource.Type == acl.ResourceCluster && b.Resource.Name != acl.ClusterName:
			msg = "The only valid name for the CLUSTER resource is " + acl.ClusterName
		case b.Resource.Name == "":
			msg = "Invalid empty resource name"
		}
		if msg != "" {
			resp.Results[i].ErrorCode, resp.Results[i].ErrorMessage = kerr.InvalidRequest.Code, kmsg.StringPtr(msg)
			continue
		}
		valid, at = append(valid, b), append(at, i)
	}
	for j, err := range s.authorizer.CreateACLs(valid) {
		if err == nil {
			continue
		}
		code := kerr.UnknownServerError.Code
		if errors.Is(err, acl.ErrInvalidBinding) {
			code = kerr.InvalidRequest.Code
		}
		resp.Results[at[j]].ErrorCode, resp.Results[at[j]].ErrorMessage = code, kmsg.StringPtr(err.Error())
	}
	return resp
}
