package broker

// DescribeUserScramCredentials (key 50), version 0 (KIP-554, flexible): the
// mechanisms and iterations of users' SCRAM credentials in /config/users,
// never their salts or keys (adminzk.DescribeUserScramCredentials, Kafka
// 2.8's ZkAdminManager). No users, or null, describes every user with a
// credential; a named user without one, an empty name or a name given twice
// fails that user alone. DESCRIBE on the cluster, else
// CLUSTER_AUTHORIZATION_FAILED for the whole request.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/acl"
)

var describeUserScramCredentialsAPI = api{
	key: 50, min: 0, max: maxVersion(50),
	handle: func(_ context.Context, s *Server, r *request) kmsg.Response {
		if resp := s.clusterDenied(r, acl.OpDescribe); resp != nil {
			return resp
		}
		return s.handleDescribeUserScramCredentials(r.body.(*kmsg.DescribeUserSCRAMCredentialsRequest))
	},
	errorResponse: func(req kmsg.Request, code int16) kmsg.Response {
		resp := req.ResponseKind().(*kmsg.DescribeUserSCRAMCredentialsResponse)
		resp.ErrorCode, resp.ErrorMessage = code, errorDescription(code)
		return resp
	},
}

func (s *Server) handleDescribeUserScramCredentials(req *kmsg.DescribeUserSCRAMCredentialsRequest) *kmsg.DescribeUserSCRAMCredentialsResponse {
	resp := req.ResponseKind().(*kmsg.DescribeUserSCRAMCredentialsResponse)
	users := make([]string, len(req.Users))
	for i, u := range req.Users {
		users[i] = u.Name
	}
	results, err := s.adminZk().DescribeUserScramCredentials(users)
	if err != nil {
		s.log.Error("Error processing describe user SCRAM credential configs request", zap.Error(err))
		resp.ErrorCode, resp.ErrorMessage = errorCode(err), errorMessage(err)
		return resp
	}
	for _, r := range results {
		rr := kmsg.DescribeUserSCRAMCredentialsResponseResult{User: r.User, ErrorCode: errorCode(r.Err), ErrorMessage: errorMessage(r.Err)}
		for _, c := range r.Credentials {
			rr.CredentialInfos = append(rr.CredentialInfos, kmsg.DescribeUserSCRAMCredentialsResponseResultCredentialInfo{Mechanism: c.Mechanism, Iterations: c.Iterations})
		}
		resp.Results = append(resp.Results, rr)
	}
	return resp
}
