package broker

// CreateDelegationToken (key 38), versions 0–2 (v1 changes nothing on the
// wire but that a throttled response is sent before the throttle; v2 is
// flexible): a delegation token for the connection's principal, with the
// renewers given (User principals only, else INVALID_PRINCIPAL_TYPE) and
// the lifetime asked, capped by delegation.token.max.lifetime.ms (the
// maximum when <= 0). Tokens need a SASL-authenticated connection not
// itself authenticated with a token (DELEGATION_TOKEN_REQUEST_NOT_ALLOWED),
// and delegation.token.secret.key (DELEGATION_TOKEN_AUTH_DISABLED). Kafka
// 2.8 authorizes no ACL here (KIP-373's CREATE_TOKENS is 3.0's).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/kafka"
)

var createDelegationTokenAPI = api{
	key: 38, min: 0, max: maxVersion(38),
	handle: func(_ context.Context, s *Server, r *request) kmsg.Response {
		return s.handleCreateDelegationToken(r, r.body.(*kmsg.CreateDelegationTokenRequest))
	},
	errorResponse: func(req kmsg.Request, code int16) kmsg.Response {
		resp := req.ResponseKind().(*kmsg.CreateDelegationTokenResponse)
		resp.ErrorCode, resp.IssueTimestamp, resp.ExpiryTimestamp, resp.MaxTimestamp = code, -1, -1, -1
		return resp
	},
}

// allowTokenRequests is KafkaApis.allowTokenRequests: not on PLAINTEXT,
// not from an anonymous one-way SSL client, not with a token.
func (*Server) allowTokenRequests(r *request) bool {
	protocol := r.conn.protocol
	return !r.conn.tokenAuthenticated && protocol != "PLAINTEXT" && !(protocol == "SSL" && r.principal() == kafka.Anonymous)
}

func (s *Server) handleCreateDelegationToken(r *request, req *kmsg.CreateDelegationTokenRequest) *kmsg.CreateDelegationTokenResponse {
	resp := req.ResponseKind().(*kmsg.CreateDelegationTokenResponse)
	owner := r.principal()
	resp.PrincipalType, resp.PrincipalName = owner.Type, owner.Name
	resp.IssueTimestamp, resp.ExpiryTimestamp, resp.MaxTimestamp = -1, -1, -1
	if !s.allowTokenRequests(r) {
		resp.ErrorCode = kerr.DelegationTokenRequestNotAllowed.Code
		return resp
	}
	renewers := make([]kafka.Principal, 0, len(req.Renewers))
	for _, p := range req.Renewers {
		if p.PrincipalType != "User" {
			resp.ErrorCode = kerr.InvalidPrincipalType.Code
			return resp
		}
		renewers = append(renewers, kafka.Principal{Type: p.PrincipalType, Name: p.PrincipalName})
	}
	res, err := s.tokens.create(owner, renewers, req.MaxLifetimeMillis)
	if err != nil {
		s.log.Error("Cannot create a delegation token", zap.Error(err))
		resp.ErrorCode = errorCode(err)
		return resp
	}
	if resp.ErrorCode = res.code; res.code != 0 {
		return resp
	}
	t := res.token
	resp.IssueTimestamp, resp.ExpiryTimestamp, resp.MaxTimestamp = t.issue, t.expires, t.maxTime
	resp.TokenID, resp.HMAC = t.id, res.hmac
	return resp
}
