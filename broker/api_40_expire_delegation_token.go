package broker

// ExpireDelegationToken (key 40), versions 0–2 (v2 flexible): as
// RenewDelegationToken, but a negative period removes the token at once
// (answering now as its expiry) and any other sets its expiry to now plus
// the period, within its maximum.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
)

var expireDelegationTokenAPI = api{
	key: 40, min: 0, max: maxVersion(40),
	handle: func(_ context.Context, s *Server, r *request) kmsg.Response {
		req := r.body.(*kmsg.ExpireDelegationTokenRequest)
		resp := req.ResponseKind().(*kmsg.ExpireDelegationTokenResponse)
		resp.ExpiryTimestamp = -1
		if !s.allowTokenRequests(r) {
			resp.ErrorCode = kerr.DelegationTokenRequestNotAllowed.Code
			return resp
		}
		code, expiry, err := s.tokens.expire(r.principal(), req.HMAC, req.ExpiryPeriodMillis)
		if err != nil {
			s.log.Error("Cannot expire a delegation token", zap.Error(err))
			code = errorCode(err)
		}
		resp.ErrorCode, resp.ExpiryTimestamp = code, expiry
		return resp
	},
	errorResponse: func(req kmsg.Request, code int16) kmsg.Response {
		resp := req.ResponseKind().(*kmsg.ExpireDelegationTokenResponse)
		resp.ErrorCode, resp.ExpiryTimestamp = code, -1
		return resp
	},
}
