package security

import (
	"bytes"
	"crypto/hmac"
	"encoding/base64"
	"errors"
	"testing"
)

// kafkaHi is ScramFormatter.hi as Kafka 2.8 writes it: U1 = HMAC(password,
// salt || INT(1)), Ui = HMAC(password, Ui-1), the XOR of them all.
func kafkaHi(m ScramMechanism, password string, salt []byte, iterations int) []byte {
	mac := hmac.New(m.hash, []byte(password))
	mac.Write(salt)
	mac.Write([]byte{0, 0, 0, 1})
	u := mac.Sum(nil)
	result := bytes.Clone(u)
	for i := 2; i <= iterations; i++ {
		u = m.hmac([]byte(password), u)
		for j := range result {
			result[j] ^= u[j]
		}
	}
	return result
}

// TestScramCredentialGolden holds the bytes /config/users/alice gets for
// password alice-secret with 8192 iterations and a fixed salt (as
// ScramCredentialUtils.credentialToString writes them; computed apart with
// Kafka's own loop), and checks the PBKDF2 the broker uses against that loop.
func TestScramCredentialGolden(t *testing.T) {
	salt := []byte("1y2bqq3sdfj1bcq1sj2jkkz5jrl") // a base-36 salt, as secureRandomBytes makes
	golden := map[string]string{
		"SCRAM-SHA-256": "salt=MXkyYnFxM3NkZmoxYmNxMXNqMmpra3o1anJs,stored_key=zZPUuVZrHtu403AWrMXv5szseJwwu3EhXWlPTSJFpjA=,server_key=Sg9avHSW2XsSI33WEHzTIRKBqKaxXqEVeR4H/cv+DYQ=,iterations=8192",
		"SCRAM-SHA-512": "salt=MXkyYnFxM3NkZmoxYmNxMXNqMmpra3o1anJs,stored_key=pk9S+PwbqMQJZFZhAVTHTiaqGM2bF48K0Jj7nT/SW5JthX92ff7f3n9ZFr2WqrYcEK9WFtmplPWuuMckOao9tg==,server_key=2w6hFZFs6uIiZ/gKKyV32RLLLl8n0SBpArw9FO1B8vWFulUYY7T31mSvuVUw5AAUULCyhYP6kMkVDjYZ0oQa8g==,iterations=8192",
	}
	for _, m := range ScramMechanisms {
		if got, want := m.SaltedPassword("alice-secret", salt, 8192), kafkaHi(m, "alice-secret", salt, 8192); !bytes.Equal(got, want) {
			t.Fatalf("%s: PBKDF2 differs from Kafka's Hi loop", m.Name)
		}
		c := m.CredentialFromSaltedPassword(salt, m.SaltedPassword("alice-secret", salt, 8192), 8192)
		if c.String() != golden[m.Name] {
			t.Errorf("%s:\n got %s\nwant %s", m.Name, c, golden[m.Name])
		}
		back, err := ParseScramCredential(c.String())
		if err != nil || back.String() != c.String() {
			t.Errorf("%s: parse round trip: %v %v", m.Name, back, err)
		}
	}
	for _, bad := range []string{"", "salt=AA==", "salt=AA==,stored_key=AA==,server_key=AA==,iterations=x", "salt=!,stored_key=AA==,server_key=AA==,iterations=1", "a=1,b=2,c=3,d=4"} {
		if _, err := ParseScramCredential(bad); err == nil {
			t.Errorf("ParseScramCredential(%q) succeeded", bad)
		}
	}
	if s := RandomSalt(); len(s) < 20 || bytes.ContainsFunc(s, func(r rune) bool { return !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z') }) {
		t.Errorf("RandomSalt %q is not a base-36 number", s)
	}
}

// TestScramServerRFC7677 runs RFC 7677's SCRAM-SHA-256 example exchange.
func TestScramServerRFC7677(t *testing.T) {
	salt, _ := base64.StdEncoding.DecodeString("W22ZaJ0SNY7soEsUEjb6gQ==")
	m := ScramSHA256
	cred := m.CredentialFromSaltedPassword(salt, m.SaltedPassword("pencil", salt, 4096), 4096)
	newServer := func() *scramServer {
		s := NewScramServer(m, func(mm ScramMechanism, user string) (ScramCredential, bool) {
			return cred, mm.Name == m.Name && user == "user"
		}, nil).(*scramServer)
		s.serverNonce = func() string { return "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0" }
		return s
	}
	s := newServer()
	first, done, err := s.Evaluate([]byte("n,,n=user,r=rOprNGfwEbeRWgbNEkqO"))
	if err != nil || done || string(first) != "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096" {
		t.Fatalf("server-first %q %v %v", first, done, err)
	}
	final, done, err := s.Evaluate([]byte("c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="))
	if err != nil || !done || string(final) != "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=" || s.Username() != "user" {
		t.Fatalf("server-final %q %v %v", final, done, err)
	}

	bad := map[string][2]string{
		"wrong proof":     {"n,,n=user,r=rOprNGfwEbeRWgbNEkqO", "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=AHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="},
		"wrong nonce":     {"n,,n=user,r=rOprNGfwEbeRWgbNEkqO", "c=biws,r=rOprNGfwEbeRWgbNEkqO,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="},
		"short proof":     {"n,,n=user,r=rOprNGfwEbeRWgbNEkqO", "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=AAAA"},
		"unknown user":    {"n,,n=bob,r=abc", ""},
		"malformed first": {"y,,n=user", ""},
		"bad saslname":    {"n,,n=us=er,r=abc", ""},
		"binary":          {"\xff\x00\x01", ""},
	}
	for name, msgs := range bad {
		s := newServer()
		_, _, err := s.Evaluate([]byte(msgs[0]))
		if err == nil && msgs[1] != "" {
			_, _, err = s.Evaluate([]byte(msgs[1]))
		}
		if !errors.Is(err, ErrInvalidCredentials) {
			t.Errorf("%s: %v, want invalid credentials", name, err)
		}
	}
	s = newServer()
	_, _, err = s.Evaluate([]byte("n,a=other,n=user,r=abc"))
	var ae *AuthenticationError
	if !errors.As(err, &ae) || ae.Msg != "Authentication failed: Client requested an authorization id that is different from username" {
		t.Errorf("authzid: %v", err)
	}
}

func TestPlainServer(t *testing.T) {
	users := map[string]string{"alice": "alice-secret"}
	for token, want := range map[string]string{
		"\x00alice\x00alice-secret":      "",
		"alice\x00alice\x00alice-secret": "",
		"\x00alice\x00wrong":             "Authentication failed: Invalid username or password",
		"\x00bob\x00alice-secret":        "Authentication failed: Invalid username or password",
		"\x00\x00x":                      "Authentication failed: username not specified",
		"\x00alice\x00":                  "Authentication failed: password not specified",
		"alice":                          "Invalid SASL/PLAIN response: expected 3 tokens, got 1",
		"a\x00b\x00c\x00d\x00e":          "Invalid SASL/PLAIN response: expected 3 tokens, got 4",
		"bob\x00alice\x00alice-secret":   "Authentication failed: Client requested an authorization id that is different from username",
	} {
		s := NewPlainServer(users)
		_, done, err := s.Evaluate([]byte(token))
		switch {
		case want == "" && (err != nil || !done || s.Username() != "alice"):
			t.Errorf("%q: %v %v", token, done, err)
		case want != "" && (err == nil || err.Error() != want):
			t.Errorf("%q: %v, want %s", token, err, want)
		}
	}
}

func TestParseJaasConfig(t *testing.T) {
	entries, err := ParseJaasConfig(`org.apache.kafka.common.security.plain.PlainLoginModule required
		username="admin" password="admin-secret" user_admin="admin-secret" user_alice="al\"ice";`)
	if err != nil {
		t.Fatal(err)
	}
	users := PlainUsers(entries)
	if len(users) != 2 || users["admin"] != "admin-secret" || users["alice"] != `al"ice` || entries[0].Options["username"] != "admin" {
		t.Errorf("users %v, entries %+v", users, entries)
	}
	for _, bad := range []string{"", "x required a=\"b\"", "x maybe;", "x required a b;", `x required a="b;`} {
		if _, err := ParseJaasConfig(bad); !errors.Is(err, ErrConfig) {
			t.Errorf("ParseJaasConfig(%q): %v", bad, err)
		}
	}
}

// TestScramServerToken: the tokenauth=true extension looks the user up as
// a token id, whose owner becomes the username; without it, or with no
// token store, the same name is a user or unknown.
func TestScramServerToken(t *testing.T) {
	m := ScramSHA512
	cred := m.NewCredential("hmac", 4096)
	tokens := func(mm ScramMechanism, id string) (ScramCredential, string, int64, bool) {
		return cred, "alice", 1600000000000, id == "tok"
	}
	users := func(ScramMechanism, string) (ScramCredential, bool) { return ScramCredential{}, false }
	s := NewScramServer(m, users, tokens)
	if _, _, err := s.Evaluate([]byte("n,,n=tok,r=abc,tokenauth=true")); err != nil {
		t.Fatal(err)
	}
	if s.Username() != "alice" || !s.(TokenAuthenticator).TokenAuthenticated() || s.(TokenAuthenticator).TokenExpiry() != 1600000000000 {
		t.Errorf("user %q token %v", s.Username(), s.(TokenAuthenticator).TokenAuthenticated())
	}
	for _, c := range []struct {
		msg    string
		tokens TokenCredentials
	}{
		{"n,,n=tok,r=abc", tokens},
		{"n,,n=other,r=abc,tokenauth=true", tokens},
		{"n,,n=tok,r=abc,tokenauth=true", nil},
	} {
		if _, _, err := NewScramServer(m, users, c.tokens).Evaluate([]byte(c.msg)); !errors.Is(err, ErrInvalidCredentials) {
			t.Errorf("%s: %v", c.msg, err)
		}
	}
}
