package broker

// DescribeDelegationToken (key 41), versions 0–2 (v2 flexible): the tokens
// of the owners given (null: every token; an empty list: none), each only
// if the principal owns or may renew it or may DESCRIBE the
// DELEGATION_TOKEN resource of its id (KafkaApis' filterToken). The
// connection must be allowed token requests (api_38), then tokens enabled.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/acl"
	"github.com/zkafka/zkafka/kafka"
)

var describeDelegationTokenAPI = api{
	key: 41, min: 0, max: maxVersion(41),
	handle: func(_ context.Context, s *Server, r *request) kmsg.Response {
		return s.handleDescribeDelegationToken(r, r.body.(*kmsg.DescribeDelegationTokenRequest))
	},
	errorResponse: func(req kmsg.Request, code int16) kmsg.Response {
		resp := req.ResponseKind().(*kmsg.DescribeDelegationTokenResponse)
		resp.ErrorCode = code
		return resp
	},
}

func (s *Server) handleDescribeDelegationToken(r *request, req *kmsg.DescribeDelegationTokenRequest) *kmsg.DescribeDelegationTokenResponse {
	resp := req.ResponseKind().(*kmsg.DescribeDelegationTokenResponse)
	switch {
	case !s.allowTokenRequests(r):
		resp.ErrorCode = kerr.DelegationTokenRequestNotAllowed.Code
		return resp
	case !s.tokens.enabled():
		resp.ErrorCode = kerr.DelegationTokenAuthDisabled.Code
		return resp
	case req.Owners != nil && len(req.Owners) == 0:
		return resp
	}
	me := r.principal()
	for _, t := range s.tokens.all() {
		if req.Owners != nil && !ownedByAny(t, req.Owners) {
			continue
		}
		if !t.ownerOrRenewer(me) && !s.authorize(r, acl.OpDescribe, acl.ResourceDelegationToken, t.id) {
			continue
		}
		d := kmsg.DescribeDelegationTokenResponseTokenDetail{PrincipalType: t.owner.Type, PrincipalName: t.owner.Name,
			IssueTimestamp: t.issue, ExpiryTimestamp: t.expires, MaxTimestamp: t.maxTime, TokenID: t.id, HMAC: s.tokens.hmac(t.id)}
		for _, p := range t.renewers {
			d.Renewers = append(d.Renewers, kmsg.DescribeDelegationTokenResponseTokenDetailRenewer{PrincipalType: p.Type, PrincipalName: p.Name})
		}
		resp.TokenDetails = append(resp.TokenDetails, d)
	}
	return resp
}

// ownedByAny reports whether one of the owners asked for owns or may renew
// the token.
func ownedByAny(t tokenInfo, owners []kmsg.DescribeDelegationTokenRequestOwner) bool {
	for _, o := range owners {
		if t.ownerOrRenewer(kafka.Principal{Type: o.PrincipalType, Name: o.PrincipalName}) {
			return true
		}
	}
	return false
}
