package broker

// AlterUserScramCredentials (key 51), version 0 (KIP-554, flexible): delete
// users' SCRAM credentials, or set them from the salt and salted password
// the client computed, in /config/users/<user> beside the user's quotas,
// with the change notification every broker's credential cache follows
// (adminzk.AlterUserScramCredentials, Kafka 2.8's ZkAdminManager). One
// result per user; a user with an illegal alteration (empty name, unknown
// mechanism, iterations outside 4096–16384, a mechanism twice, deleting a
// missing credential) changes nothing, the others are applied. Only the
// active controller serves it (NOT_CONTROLLER first, as Kafka checks), then
// ALTER on the cluster, else CLUSTER_AUTHORIZATION_FAILED for every user.

import (
	"context"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/acl"
	"github.com/zkafka/zkafka/adminzk"
)

var alterUserScramCredentialsAPI = api{
	key: 51, min: 0, max: maxVersion(51),
	handle: func(_ context.Context, s *Server, r *request) kmsg.Response {
		req := r.body.(*kmsg.AlterUserSCRAMCredentialsRequest)
		if !s.controller.IsActive() {
			return alterUserScramCredentialsError(req, kerr.NotController.Code)
		}
		if resp := s.clusterDenied(r, acl.OpAlter); resp != nil {
			return resp
		}
		return s.handleAlterUserScramCredentials(req)
	},
	errorResponse: func(req kmsg.Request, code int16) kmsg.Response {
		return alterUserScramCredentialsError(req.(*kmsg.AlterUserSCRAMCredentialsRequest), code)
	},
}

// alterUserScramCredentialsError answers every user of the request, once
// and sorted, with code (AlterUserScramCredentialsRequest.getErrorResponse).
func alterUserScramCredentialsError(req *kmsg.AlterUserSCRAMCredentialsRequest, code int16) *kmsg.AlterUserSCRAMCredentialsResponse {
	resp := req.ResponseKind().(*kmsg.AlterUserSCRAMCredentialsResponse)
	var users []string
	for _, d := range req.Deletions {
		users = append(users, d.Name)
	}
	for _, u := range req.Upsertions {
		users = append(users, u.Name)
	}
	slices.Sort(users)
	for _, u := range slices.Compact(users) {
		resp.Results = append(resp.Results, kmsg.AlterUserSCRAMCredentialsResponseResult{User: u, ErrorCode: code, ErrorMessage: errorDescription(code)})
	}
	return resp
}

func (s *Server) handleAlterUserScramCredentials(req *kmsg.AlterUserSCRAMCredentialsRequest) *kmsg.AlterUserSCRAMCredentialsResponse {
	resp := req.ResponseKind().(*kmsg.AlterUserSCRAMCredentialsResponse)
	upsertions := make([]adminzk.ScramUpsertion, len(req.Upsertions))
	for i, u := range req.Upsertions {
		upsertions[i] = adminzk.ScramUpsertion{User: u.Name, Mechanism: u.Mechanism, Iterations: u.Iterations, Salt: u.Salt, SaltedPassword: u.SaltedPassword}
	}
	deletions := make([]adminzk.ScramDeletion, len(req.Deletions))
	for i, d := range req.Deletions {
		deletions[i] = adminzk.ScramDeletion{User: d.Name, Mechanism: d.Mechanism}
	}
	for _, r := range s.adminZk().AlterUserScramCredentials(upsertions, deletions) {
		resp.Results = append(resp.Results, kmsg.AlterUserSCRAMCredentialsResponseResult{User: r.User, ErrorCode: errorCode(r.Err), ErrorMessage: errorMessage(r.Err)})
	}
	return resp
}

// errorDescription is a code's default message, which Kafka's error
// responses carry (ApiError of the code's exception); nil for no error.
func errorDescription(code int16) *string {
	if err := kerr.ErrorForCode(code); err != nil {
		return kmsg.StringPtr(err.(*kerr.Error).Description)
	}
	return nil
}
