package broker

// SaslHandshake (key 17), versions 0–1.
//
//	v0: the mechanism; the SASL tokens that follow are bare size-prefixed
//	    frames
//	v1: the tokens follow in SaslAuthenticate requests (KIP-152)
//
// A SASL listener's connection is authenticated before its requests reach
// the handlers (listener_sasl.go), and a re-authentication is taken there
// too. What reaches this handler is a handshake Kafka's KafkaApis answers
// with ILLEGAL_SASL_STATE: on a listener without SASL, or after
// authentication without re-authentication.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

var saslHandshakeAPI = api{
	key: 17, min: 0, max: maxVersion(17),
	handle: func(_ context.Context, _ *Server, r *request) kmsg.Response {
		resp := r.body.(*kmsg.SASLHandshakeRequest).ResponseKind().(*kmsg.SASLHandshakeResponse)
		resp.ErrorCode = kerr.IllegalSaslState.Code
		return resp
	},
	errorResponse: func(req kmsg.Request, code int16) kmsg.Response {
		resp := req.ResponseKind().(*kmsg.SASLHandshakeResponse)
		resp.ErrorCode = code
		return resp
	},
}
