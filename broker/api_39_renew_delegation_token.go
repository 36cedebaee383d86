package broker

// RenewDelegationToken (key 39), versions 0–2 (v2 flexible): the owner or a
// renewer of the token whose HMAC is given moves its expiry to now plus the
// renew period (delegation.token.expiry.time.ms when negative), never past
// the token's maximum. DELEGATION_TOKEN_NOT_FOUND for an unknown HMAC,
// DELEGATION_TOKEN_OWNER_MISMATCH for anyone else, DELEGATION_TOKEN_EXPIRED
// for a token past its expiry; the connection must be allowed token
// requests (api_38) and tokens enabled. Errors answer an expiry of -1.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
)

var renewDelegationTokenAPI = api{
	key: 39, min: 0, max: maxVersion(39),
	handle: func(_ context.Context, s *Server, r *request) kmsg.Response {
		req := r.body.(*kmsg.RenewDelegationTokenRequest)
		resp := req.ResponseKind().(*kmsg.RenewDelegationTokenResponse)
		resp.ExpiryTimestamp = -1
		if !s.allowTokenRequests(r) {
			resp.ErrorCode = kerr.DelegationTokenRequestNotAllowed.Code
			return resp
		}
		code, expiry, err := s.tokens.renew(r.principal(), req.HMAC, req.RenewTimeMillis)
		if err != nil {
			s.log.Error("Cannot renew a delegation token", zap.Error(err))
			code = errorCode(err)
		}
		resp.ErrorCode, resp.ExpiryTimestamp = code, expiry
		return resp
	},
	errorResponse: func(req kmsg.Request, code int16) kmsg.Response {
		resp := req.ResponseKind().(*kmsg.RenewDelegationTokenResponse)
		resp.ErrorCode, resp.ExpiryTimestamp = code, -1
		return resp
	},
}
