package kafka

import (
	"encoding/base64"
	"testing"
)

// TestNewUUID: 22 characters of url-safe base64 that decode to a
// version-4, RFC 4122 UUID, never starting with '-', and not repeating.
func TestNewUUID(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		s := NewUUID()
		b, err := base64.RawURLEncoding.DecodeString(s)
		if err != nil || len(s) != 22 || len(b) != 16 {
			t.Fatalf("%q: %d characters, %d bytes, %v", s, len(s), len(b), err)
		}
		if b[6]>>4 != 4 || b[8]>>6 != 2 || s[0] == '-' || seen[s] {
			t.Fatalf("%q: version %d, variant %b, or a repeat", s, b[6]>>4, b[8]>>6)
		}
		seen[s] = true
	}
}
