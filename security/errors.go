package security

import "errors"

// AuthenticationError is an authentication failure whose message the client
// may see (Kafka's SaslAuthenticationException).
type AuthenticationError struct{ Msg string }

func (e *AuthenticationError) Error() string { return e.Msg }

// ErrInvalidCredentials is a failure the client only learns as "invalid
// credentials" (Kafka's SaslException): unknown user, wrong proof, malformed
// SCRAM message.
var ErrInvalidCredentials = errors.New("invalid credentials")

// ErrConfig marks a security configuration the broker cannot start with; the
// message names the key.
var ErrConfig = errors.New("invalid security configuration")
