package broker

// SaslAuthenticate (key 36), versions 0–2.
//
//	v0: a SASL token each way
//	v1: the response carries the session lifetime (KIP-368), and a client
//	    sending v1 re-authenticates before it ends
//	v2: flexible (KIP-482)
//
// The exchange itself runs in the listener (listener_sasl.go). What reaches
// this handler is a SaslAuthenticate after authentication, which Kafka's
// KafkaApis answers with ILLEGAL_SASL_STATE.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

var saslAuthenticateAPI = api{
	key: 36, min: 0, max: maxVersion(36),
	handle: func(_ context.Context, _ *Server, r *request) kmsg.Response {
		resp := r.body.(*kmsg.SASLAuthenticateRequest).ResponseKind().(*kmsg.SASLAuthenticateResponse)
		msg := "SaslAuthenticate request received after successful authentication"
		resp.ErrorCode, resp.ErrorMessage = kerr.IllegalSaslState.Code, &msg
		return resp
	},
	errorResponse: func(req kmsg.Request, code int16) kmsg.Response {
		resp := req.ResponseKind().(*kmsg.SASLAuthenticateResponse)
		resp.ErrorCode = code
		return resp
	},
}
