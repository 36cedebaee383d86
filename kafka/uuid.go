package kafka

import (
	"crypto/rand"
	"encoding/base64"
)

// NewUUID returns a random version-4 UUID as 22 characters of url-safe
// base64 without padding: Kafka's Uuid.randomUuid().toString(), the form of
// cluster ids, topic ids and the consumer group protocol's member ids. Like
// Kafka's, it never starts with '-', which a command line would take for a
// flag.
func NewUUID() string {
	for {
		var u [16]byte
		_, _ = rand.Read(u[:])  // crypto/rand.Read never returns an error
		u[6] = u[6]&0x0f | 0x40 // version 4
		u[8] = u[8]&0x3f | 0x80 // RFC 4122 variant
		if s := base64.RawURLEncoding.EncodeToString(u[:]); s[0] != '-' {
			return s
		}
	}
}
