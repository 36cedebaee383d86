package broker

// DescribeAcls (key 29), versions 0–2 (v1: resource pattern types, KIP-290;
// v2: flexible). The authorizer's cached ACLs matching the filter, grouped
// by resource pattern. It needs DESCRIBE on the cluster; without an
// authorizer it answers SECURITY_DISABLED, and a filter with an UNKNOWN
// element (or, at v0, a pattern type other than LITERAL) is
// INVALID_REQUEST, where Kafka refuses to parse the request.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/acl"
)

var describeACLsAPI = api{
	key: 29, min: 0, max: maxVersion(29),
	handle: func(_ context.Context, s *Server, r *request) kmsg.Response {
		return s.handleDescribeACLs(r, r.body.(*kmsg.DescribeACLsRequest))
	},
	errorResponse: func(req kmsg.Request, code int16) kmsg.Response {
		resp := req.ResponseKind().(*kmsg.DescribeACLsResponse)
		resp.ErrorCode = code
		return resp
	},
}

// securityDisabled is Kafka's message when no authorizer is configured.
const securityDisabled = "No Authorizer is configured on the broker"

func (s *Server) handleDescribeACLs(r *request, req *kmsg.DescribeACLsRequest) *kmsg.DescribeACLsResponse {
	resp := req.ResponseKind().(*kmsg.DescribeACLsResponse)
	fail := func(e *kerr.Error, msg string) *kmsg.DescribeACLsResponse {
		resp.ErrorCode, resp.ErrorMessage = e.Code, kmsg.StringPtr(msg)
		return resp
	}
	if !s.authorizeCluster(r, acl.OpDescribe) {
		return fail(kerr.ClusterAuthorizationFailed, clusterNotAuthorized)
	}
	if s.authorizer == nil {
		return fail(kerr.SecurityDisabled, securityDisabled)
	}
	f := aclFilter(req.ResourceType, req.ResourceName, req.ResourcePatternType, req.Principal, req.Host, req.Operation, req.PermissionType)
	if msg := badFilter(f, req.Version); msg != "" {
		return fail(kerr.InvalidRequest, msg)
	}
	index := map[acl.Resource]int{}
	for _, b := range s.authorizer.ACLs(f) {
		i, ok := index[b.Resource]
		if !ok {
			i = len(resp.Resources)
			index[b.Resource] = i
			res := kmsg.NewDescribeACLsResponseResource()
			res.ResourceType, res.ResourceName = kmsg.ACLResourceType(b.Resource.Type), b.Resource.Name
			res.ResourcePatternType = kmsg.ACLResourcePatternType(b.Resource.Pattern)
			resp.Resources = append(resp.Resources, res)
		}
		a := kmsg.NewDescribeACLsResponseResourceACL()
		a.Principal, a.Host = b.Entry.Principal, b.Entry.Host
		a.Operation, a.PermissionType = kmsg.ACLOperation(b.Entry.Operation), kmsg.ACLPermissionType(b.Entry.Permission)
		resp.Resources[i].ACLs = append(resp.Resources[i].ACLs, a)
	}
	return resp
}

// clusterNotAuthorized is the message of a request refused for lack of an
// operation on the cluster (AuthHelper.authorizeClusterOperation's, without
// the request's description).
const clusterNotAuthorized = "Request is not authorized."

// aclFilter reads a filter of DescribeAcls or DeleteAcls. Requests before
// KIP-290 carry no pattern type; their default, LITERAL, is what v0 meant.
func aclFilter(typ kmsg.ACLResourceType, name *string, pattern kmsg.ACLResourcePatternType, principal, host *string, op kmsg.ACLOperation, perm kmsg.ACLPermissionType) acl.Filter {
	return acl.Filter{
		Type: acl.ResourceType(typ), Name: name, Pattern: acl.PatternType(pattern),
		Principal: principal, Host: host, Operation: acl.Operation(op), Permission: acl.Permission(perm),
	}
}

// badFilter is why Kafka's request validation refuses a filter, "" if it
// does not.
func badFilter(f acl.Filter, version int16) string {
	switch {
	case version == 0 && f.Pattern != acl.PatternLiteral:
		return "Version 0 only supports literal resource pattern types"
	case f.Unknown():
		return "Filter contain UNKNOWN elements"
	}
	return ""
}
