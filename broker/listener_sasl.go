package broker

// The SASL side of a SASL_PLAINTEXT or SASL_SSL connection, as Kafka 2.8's
// SaslServerAuthenticator runs it before the connection's requests reach
// KafkaApis:
//
//	HANDSHAKE_OR_VERSIONS ──ApiVersions──▶ HANDSHAKE ──SaslHandshake──▶ AUTHENTICATE ──last token──▶ COMPLETE
//	        └──────────────────SaslHandshake──────────────────┘                 ▲                 │
//	                                        SaslHandshake (re-authentication, KIP-368) ────────────┘
//
// Before COMPLETE only ApiVersions (once) and SaslHandshake are served; any
// other request closes the connection, as does a failed exchange after its
// error response. SaslHandshake v0 means the tokens that follow are raw
// size-prefixed frames without Kafka headers; v1 wraps them in
// SaslAuthenticate. Once COMPLETE the connection's requests go to the
// handlers; with connections.max.reauth.ms a session expires, and a client
// that does not re-authenticate in time is closed at its next request.

import (
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/kafka"
	"github.com/zkafka/zkafka/security"
	"github.com/zkafka/zkafka/wire"
)

type saslState int

const (
	saslHandshakeOrVersions saslState = iota
	saslHandshake
	saslAuthenticate
	saslComplete
)

// saslConn is one connection's authentication, owned by its goroutine.
type saslConn struct {
	sec       *listenerSecurity
	state     saslState
	mechanism string
	server    security.Server
	raw       bool // SaslHandshake v0: tokens are bare frames
	// clientReauth: the client sent SaslAuthenticate v1+, so it knows
	// session lifetimes and re-authenticates (KIP-368).
	clientReauth     bool
	expires          time.Time     // the session's end; zero: never
	lifetime         time.Duration // the session's length from its start; 0: never ends
	reauthenticating bool
	// badMechanism fails a re-authentication that asked for another
	// mechanism, at its first token as Kafka does.
	badMechanism string
}

// maxFrame is the largest frame the connection reads next: before it
// authenticates, sasl.server.max.receive.size.
func (a *saslConn) maxFrame(socketMax int32) int32 {
	if a == nil || a.state == saslComplete {
		return socketMax
	}
	return min(a.sec.maxReceive, socketMax)
}

// authenticate handles a frame of a SASL connection. served is false when
// the frame is an ordinary request of an authenticated connection, for the
// handlers; otherwise out is what to send (possibly nothing) and keep whether
// the connection stays open after it.
func (l *listener) authenticate(log *zap.Logger, st *connState, frame []byte) (out []byte, served, keep bool) {
	a := st.sasl
	if a.state == saslComplete {
		key := int16(-1)
		if len(frame) >= 2 {
			key = int16(binary.BigEndian.Uint16(frame))
		}
		switch {
		case key == kmsg.SASLHandshake.Int16() && a.sec.reauth > 0 && a.clientReauth:
			a.state, a.reauthenticating = saslHandshake, true
		case !a.expires.IsZero() && time.Now().After(a.expires):
			log.Info("Closing connection whose SASL session expired without re-authentication", zap.Stringer("principal", st.principal))
			return nil, true, false
		default:
			return nil, false, true
		}
	}
	if a.state == saslAuthenticate && a.raw {
		return l.rawToken(log, st, frame)
	}
	hdr, body, err := wire.ParseRequest(frame)
	if err != nil {
		// Kafka would take a frame that is not a request for a GSSAPI token
		// of a 0.9 client; GSSAPI is not served.
		log.Info("Closing SASL connection after a frame that is not a Kafka request", zap.Error(err))
		return nil, true, false
	}
	if a.state == saslAuthenticate {
		return l.saslAuthenticate(log, st, hdr, body)
	}
	switch hdr.APIKey {
	case apiVersionsAPI.key:
		if a.state != saslHandshakeOrVersions {
			log.Info("Closing SASL connection: unexpected ApiVersions request during authentication")
			return nil, true, false
		}
		a.state = saslHandshake
		if !l.s.supported(hdr.APIKey, hdr.APIVersion) {
			return wire.AppendResponse(nil, hdr, l.s.unsupportedVersion(hdr, body)), true, true
		}
		return wire.AppendResponse(nil, hdr, l.s.apiVersionsResponse(hdr.APIVersion, 0)), true, true
	case kmsg.SASLHandshake.Int16():
		if !l.s.supported(hdr.APIKey, hdr.APIVersion) {
			log.Info("Closing SASL connection: unsupported SaslHandshake version", zap.Int16("api-version", hdr.APIVersion))
			return nil, true, false
		}
		return l.saslHandshake(log, st, hdr, body.(*kmsg.SASLHandshakeRequest))
	}
	log.Info(fmt.Sprintf("Closing SASL connection: unexpected Kafka request of type %s during SASL handshake", apiName(hdr.APIKey)))
	return nil, true, false
}

func (l *listener) saslHandshake(log *zap.Logger, st *connState, hdr wire.RequestHeader, req *kmsg.SASLHandshakeRequest) ([]byte, bool, bool) {
	a := st.sasl
	resp := req.ResponseKind().(*kmsg.SASLHandshakeResponse)
	resp.SetVersion(hdr.APIVersion)
	resp.SupportedMechanisms = a.sec.mechanisms
	server, ok := l.s.saslServer(a.sec, req.Mechanism)
	if !ok {
		log.Info("Closing SASL connection: mechanism not enabled", zap.String("mechanism", req.Mechanism))
		resp.ErrorCode = kerr.UnsupportedSaslMechanism.Code
		return wire.AppendResponse(nil, hdr, resp), true, false
	}
	a.badMechanism = ""
	if a.reauthenticating && req.Mechanism != a.mechanism {
		a.badMechanism = fmt.Sprintf("SASL mechanism '%s' requested by client is not supported for re-authentication of mechanism '%s'", req.Mechanism, a.mechanism)
	}
	a.state, a.server, a.raw = saslAuthenticate, server, hdr.APIVersion == 0
	if !a.reauthenticating {
		a.mechanism = req.Mechanism
	}
	return wire.AppendResponse(nil, hdr, resp), true, true
}

// rawToken evaluates a token of a SaslHandshake v0 exchange: the answer is
// a bare size-prefixed frame, and a failure closes the connection without
// one.
func (l *listener) rawToken(log *zap.Logger, st *connState, token []byte) ([]byte, bool, bool) {
	challenge, done, err := st.sasl.server.Evaluate(token)
	if err != nil {
		log.Info(fmt.Sprintf("Failed authentication with %s (%s)", st.remote, l.saslFailure(st.sasl, err)))
		return nil, true, false
	}
	if done {
		if msg := l.completeSASL(st); msg != "" {
			log.Info(fmt.Sprintf("Failed authentication with %s (%s)", st.remote, msg))
			return nil, true, false
		}
	}
	return binary.BigEndian.AppendUint32(nil, uint32(len(challenge))), true, true
}

func (l *listener) saslAuthenticate(log *zap.Logger, st *connState, hdr wire.RequestHeader, body kmsg.Request) ([]byte, bool, bool) {
	a := st.sasl
	req, ok := body.(*kmsg.SASLAuthenticateRequest)
	if !ok {
		log.Info(fmt.Sprintf("Closing SASL connection: unexpected Kafka request of type %s during SASL authentication", apiName(hdr.APIKey)))
		if api, served := l.s.apis[hdr.APIKey]; served && l.s.supported(hdr.APIKey, hdr.APIVersion) && api.errorResponse != nil {
			return wire.AppendResponse(nil, hdr, api.errorResponse(body, kerr.IllegalSaslState.Code)), true, false
		}
		return nil, true, false
	}
	if !l.s.supported(hdr.APIKey, hdr.APIVersion) {
		log.Info("Closing SASL connection: unsupported SaslAuthenticate version", zap.Int16("api-version", hdr.APIVersion))
		return nil, true, false
	}
	a.clientReauth = a.clientReauth || hdr.APIVersion > 0
	resp := req.ResponseKind().(*kmsg.SASLAuthenticateResponse)
	resp.SetVersion(hdr.APIVersion)
	fail := func(msg string) ([]byte, bool, bool) {
		log.Info(fmt.Sprintf("Failed authentication with %s (%s)", st.remote, msg))
		resp.ErrorCode, resp.ErrorMessage = kerr.SaslAuthenticationFailed.Code, &msg
		return wire.AppendResponse(nil, hdr, resp), true, false
	}
	if a.badMechanism != "" {
		return fail(a.badMechanism)
	}
	challenge, done, err := a.server.Evaluate(req.SASLAuthBytes)
	if err != nil {
		log.Debug("SASL exchange failed", zap.String("mechanism", a.mechanism), zap.Error(err))
		return fail(l.saslFailure(a, err))
	}
	resp.SASLAuthBytes = challenge
	if done {
		if msg := l.completeSASL(st); msg != "" {
			return fail(msg)
		}
		if a.clientReauth {
			resp.SessionLifetimeMillis = a.lifetime.Milliseconds()
		}
	}
	return wire.AppendResponse(nil, hdr, resp), true, true
}

// saslFailure is the message a client gets for a failed exchange: an
// AuthenticationError's own, else Kafka's generic one.
func (l *listener) saslFailure(a *saslConn, err error) string {
	if ae, ok := err.(*security.AuthenticationError); ok {
		return ae.Msg
	}
	what := "authentication"
	if a.reauthenticating {
		what = "re-authentication"
	}
	return fmt.Sprintf("Authentication failed during %s due to invalid credentials with SASL mechanism %s", what, a.mechanism)
}

// completeSASL makes the authenticated user the connection's principal and
// starts its session; a re-authentication must keep the principal (Kafka's
// ensurePrincipalUnchanged), else the message of its failure.
func (l *listener) completeSASL(st *connState) string {
	a := st.sasl
	p := kafka.Principal{Type: "User", Name: a.server.Username()}
	if a.reauthenticating && p != st.principal {
		return fmt.Sprintf("Cannot change principals during re-authentication from %s: %s", st.principal, p)
	}
	st.principal = p
	now := time.Now()
	a.lifetime = a.sec.reauth
	ta, ok := a.server.(security.TokenAuthenticator)
	st.tokenAuthenticated = ok && ta.TokenAuthenticated()
	if st.tokenAuthenticated && a.lifetime > 0 {
		// A token's expiry shortens the session
		// (calcCompletionTimesAndReturnSessionLifetimeMs); the broker's
		// connections.max.reauth.ms, 0 by default, is always set, so
		// without it the session does not end.
		a.lifetime = max(0, min(a.lifetime, time.UnixMilli(ta.TokenExpiry()).Sub(now)))
	}
	a.state, a.reauthenticating, a.server = saslComplete, false, nil
	a.expires = time.Time{}
	if a.lifetime > 0 {
		a.expires = now.Add(a.lifetime)
	}
	return ""
}

// tlsHandshake runs the TLS handshake of an SSL or SASL_SSL connection; on
// SSL a client certificate makes the principal its subject's distinguished
// name, as Kafka's default principal builder does (User:CN=...,O=...).
func (l *listener) tlsHandshake(log *zap.Logger, c *tls.Conn, st *connState) bool {
	if err := c.SetDeadline(time.Now().Add(l.s.cfg.ConnectionsMaxIdle)); err != nil {
		return false
	}
	if err := c.Handshake(); err != nil {
		log.Info(fmt.Sprintf("Failed authentication with %s (SSL handshake failed)", st.remote), zap.Error(err))
		return false
	}
	if err := c.SetDeadline(time.Time{}); err != nil {
		return false
	}
	if certs := c.ConnectionState().PeerCertificates; l.sec.protocol == "SSL" && len(certs) > 0 {
		st.principal = kafka.Principal{Type: "User", Name: certs[0].Subject.String()}
	}
	return true
}

func apiName(key int16) string {
	if n := kmsg.NameForKey(key); n != "" {
		return n
	}
	return fmt.Sprintf("unknown api key %d", key)
}
