package security

import (
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"hash"
	"math/big"
	"regexp"
	"strconv"
	"strings"
)

// ScramMechanism is SCRAM-SHA-256 or SCRAM-SHA-512 (Kafka's ScramMechanism).
type ScramMechanism struct {
	Name string
	// Type is the mechanism's number in AlterUserScramCredentials and
	// DescribeUserScramCredentials (Kafka's ScramMechanism.type).
	Type int8
	hash func() hash.Hash
}

// The SCRAM mechanisms Kafka 2.8 supports.
var (
	ScramSHA256 = ScramMechanism{Name: "SCRAM-SHA-256", Type: 1, hash: sha256.New}
	ScramSHA512 = ScramMechanism{Name: "SCRAM-SHA-512", Type: 2, hash: sha512.New}
)

// ScramMechanisms are both, in Kafka's order.
var ScramMechanisms = []ScramMechanism{ScramSHA256, ScramSHA512}

// The iteration bounds Kafka accepts: the server refuses credentials below
// the minimum, and kafka-configs and AlterUserScramCredentials refuse
// iterations outside both.
const (
	ScramMinIterations = 4096
	ScramMaxIterations = 16384
)

// ScramMechanismNamed returns the mechanism of a name, or false.
func ScramMechanismNamed(name string) (ScramMechanism, bool) {
	for _, m := range ScramMechanisms {
		if m.Name == name {
			return m, true
		}
	}
	return ScramMechanism{}, false
}

// ScramMechanismOfType returns the mechanism of a type number, or false.
func ScramMechanismOfType(t int8) (ScramMechanism, bool) {
	for _, m := range ScramMechanisms {
		if m.Type == t {
			return m, true
		}
	}
	return ScramMechanism{}, false
}

func (m ScramMechanism) hmac(key, data []byte) []byte {
	h := hmac.New(m.hash, key)
	h.Write(data)
	return h.Sum(nil)
}

func (m ScramMechanism) digest(b []byte) []byte {
	h := m.hash()
	h.Write(b)
	return h.Sum(nil)
}

// SaltedPassword is RFC 5802's Hi(password, salt, iterations): PBKDF2 with
// the mechanism's HMAC and one block.
func (m ScramMechanism) SaltedPassword(password string, salt []byte, iterations int) []byte {
	k, err := pbkdf2.Key(m.hash, password, salt, iterations, m.hash().Size())
	if err != nil {
		// Only FIPS-140-only mode refuses PBKDF2 keys of this size and salt.
		panic(err)
	}
	return k
}

// ScramCredential is what the broker keeps of a user's password for one
// mechanism (Kafka's ScramCredential).
type ScramCredential struct {
	Salt, StoredKey, ServerKey []byte
	Iterations                 int
}

// CredentialFromSaltedPassword derives the stored and server keys as
// ScramFormatter.generateCredential does.
func (m ScramMechanism) CredentialFromSaltedPassword(salt, saltedPassword []byte, iterations int) ScramCredential {
	clientKey := m.hmac(saltedPassword, []byte("Client Key"))
	return ScramCredential{
		Salt:       salt,
		StoredKey:  m.digest(clientKey),
		ServerKey:  m.hmac(saltedPassword, []byte("Server Key")),
		Iterations: iterations,
	}
}

// NewCredential makes a credential for a password with a fresh salt.
func (m ScramMechanism) NewCredential(password string, iterations int) ScramCredential {
	salt := RandomSalt()
	return m.CredentialFromSaltedPassword(salt, m.SaltedPassword(password, salt, iterations), iterations)
}

// RandomSalt is a salt as ScramFormatter.secureRandomBytes makes it: the
// UTF-8 of a random 130-bit number written in base 36.
func RandomSalt() []byte { return []byte(randomBase36()) }

func randomBase36() string {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 130))
	if err != nil {
		panic(err) // crypto/rand never fails on Linux
	}
	return n.Text(36)
}

// String is the credential as /config/users/<user> stores it under the
// mechanism's name (ScramCredentialUtils.credentialToString).
func (c ScramCredential) String() string {
	b64 := base64.StdEncoding.EncodeToString
	return fmt.Sprintf("salt=%s,stored_key=%s,server_key=%s,iterations=%d", b64(c.Salt), b64(c.StoredKey), b64(c.ServerKey), c.Iterations)
}

// ParseScramCredential reads the stored form (credentialFromString).
func ParseScramCredential(s string) (ScramCredential, error) {
	props := map[string]string{}
	for _, tok := range strings.Split(s, ",") {
		i := strings.IndexByte(tok, '=')
		if i <= 0 {
			return ScramCredential{}, fmt.Errorf("credentials not valid: %s", s)
		}
		props[tok[:i]] = tok[i+1:]
	}
	var c ScramCredential
	var err error
	if len(props) != 4 {
		return c, fmt.Errorf("credentials not valid: %s", s)
	}
	for _, f := range []struct {
		key string
		dst *[]byte
	}{{"salt", &c.Salt}, {"stored_key", &c.StoredKey}, {"server_key", &c.ServerKey}} {
		v, ok := props[f.key]
		if !ok {
			return c, fmt.Errorf("credentials not valid: %s", s)
		}
		if *f.dst, err = base64.StdEncoding.DecodeString(v); err != nil {
			return c, fmt.Errorf("credentials not valid: %s: %w", s, err)
		}
	}
	if c.Iterations, err = strconv.Atoi(props["iterations"]); err != nil {
		return c, fmt.Errorf("credentials not valid: %s: %w", s, err)
	}
	return c, nil
}

// ScramCredentials finds a user's credential for a mechanism; false for an
// unknown user.
type ScramCredentials func(m ScramMechanism, user string) (ScramCredential, bool)

// TokenCredentials finds the SCRAM credential of a delegation token (its
// HMAC as the password), the name of the token's owner and its expiry
// (epoch milliseconds); false for an unknown token (Kafka's
// DelegationTokenCache).
type TokenCredentials func(m ScramMechanism, tokenID string) (cred ScramCredential, owner string, expiryMs int64, ok bool)

// The message formats of RFC 5802 as Kafka's ScramMessages matches them.
var (
	saslName          = `(?:[\x01-\x2B\x2D-\x3C\x3E-\x7F]|=2C|=3D)+`
	printable         = `[\x21-\x2B\x2D-\x7E]+`
	value             = `[\x01-\x2B\x2D-\x7F]+`
	base64Pattern     = `(?:[a-zA-Z0-9/+]{4})*(?:[a-zA-Z0-9/+]{3}=|[a-zA-Z0-9/+]{2}==)?`
	extensions        = `(?P<extensions>(?:,[A-Za-z]+=` + value + `)*)`
	clientFirstFormat = regexp.MustCompile(`^n,(a=(?P<authzid>` + saslName + `))?,(m=` + value + `,)?n=(?P<saslname>` + saslName + `),r=(?P<nonce>` + printable + `)` + extensions + `$`)
	clientFinalFormat = regexp.MustCompile(`^(?P<bare>c=(?P<channel>` + base64Pattern + `),r=(?P<nonce>` + printable + `)` + extensions + `),p=(?P<proof>` + base64Pattern + `)$`)
)

// Server is one SASL exchange on the broker's side.
type Server interface {
	// Evaluate takes the client's next token and returns the answer to
	// send; done once the client has authenticated. After an error the
	// exchange is over.
	Evaluate(token []byte) (challenge []byte, done bool, err error)
	// Username is who authenticated, once done.
	Username() string
}

// TokenAuthenticator is a Server that may authenticate with a delegation
// token: SCRAM's.
type TokenAuthenticator interface {
	// TokenAuthenticated reports whether the client authenticated with a
	// delegation token (the tokenauth=true extension), whose owner is then
	// Username.
	TokenAuthenticated() bool
	// TokenExpiry is the token's expiry in epoch milliseconds, which may
	// end the session (ScramSaslServer's CREDENTIAL_LIFETIME_MS).
	TokenExpiry() int64
}

type scramServer struct {
	mech        ScramMechanism
	creds       ScramCredentials
	tokens      TokenCredentials
	tokenAuth   bool // the tokenauth=true extension; user is then the token's owner
	tokenExpiry int64
	state       int // 0: expect client-first, 1: expect client-final, 2: done or failed
	user        string
	cred        ScramCredential
	clientBare  string
	serverFirst string
	// serverNonce makes the server's part of the nonce (fixed in tests).
	serverNonce func() string
}

// NewScramServer starts a SCRAM exchange that finds credentials in creds.
// Delegation tokens (the tokenauth=true extension) are found in tokens; nil
// refuses them as unknown.
func NewScramServer(m ScramMechanism, creds ScramCredentials, tokens TokenCredentials) Server {
	return &scramServer{mech: m, creds: creds, tokens: tokens, serverNonce: randomBase36}
}

func (s *scramServer) Username() string { return s.user }

func (s *scramServer) TokenAuthenticated() bool { return s.tokenAuth }

func (s *scramServer) TokenExpiry() int64 { return s.tokenExpiry }

// scramExtensions reads the extensions of a client-first message
// (",key=value" each), as ScramExtensions does.
func scramExtensions(s string) map[string]string {
	m := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return m
}

func (s *scramServer) Evaluate(token []byte) ([]byte, bool, error) {
	state := s.state
	s.state = 2
	switch state {
	case 0:
		return s.clientFirst(string(token))
	case 1:
		return s.clientFinal(string(token))
	}
	return nil, false, fmt.Errorf("unexpected challenge in SASL server state COMPLETE or FAILED: %w", ErrInvalidCredentials)
}

func (s *scramServer) clientFirst(msg string) ([]byte, bool, error) {
	m := clientFirstFormat.FindStringSubmatch(msg)
	if m == nil {
		return nil, false, fmt.Errorf("invalid SCRAM client first message format: %w", ErrInvalidCredentials)
	}
	name := m[clientFirstFormat.SubexpIndex("saslname")]
	// =2C is a comma and =3D an equals sign; any other = is invalid.
	user := strings.ReplaceAll(name, "=2C", ",")
	if strings.Contains(strings.ReplaceAll(user, "=3D", ""), "=") {
		return nil, false, fmt.Errorf("invalid username %s: %w", name, ErrInvalidCredentials)
	}
	user = strings.ReplaceAll(user, "=3D", "=")
	authID := user
	var cred ScramCredential
	if strings.EqualFold(scramExtensions(m[clientFirstFormat.SubexpIndex("extensions")])["tokenauth"], "true") {
		var owner string
		ok := false
		if s.tokens != nil {
			cred, owner, s.tokenExpiry, ok = s.tokens(s.mech, user)
		}
		if !ok {
			return nil, false, fmt.Errorf("token authentication failed: invalid tokenId %s: %w", user, ErrInvalidCredentials)
		}
		authID, s.tokenAuth = owner, true
	} else {
		var ok bool
		if cred, ok = s.creds(s.mech, user); !ok {
			return nil, false, fmt.Errorf("unknown user: %w", ErrInvalidCredentials)
		}
	}
	if authz := m[clientFirstFormat.SubexpIndex("authzid")]; authz != "" && authz != user {
		return nil, false, &AuthenticationError{"Authentication failed: Client requested an authorization id that is different from username"}
	}
	if cred.Iterations < ScramMinIterations {
		return nil, false, fmt.Errorf("iterations %d is less than the minimum %d for %s: %w", cred.Iterations, ScramMinIterations, s.mech.Name, ErrInvalidCredentials)
	}
	s.user, s.cred = authID, cred
	// The bare message follows the GS2 header "n,[a=authzid],", whose
	// authzid holds no comma.
	s.clientBare = msg[2+strings.IndexByte(msg[2:], ',')+1:]
	nonce := m[clientFirstFormat.SubexpIndex("nonce")] + s.serverNonce()
	s.serverFirst = fmt.Sprintf("r=%s,s=%s,i=%d", nonce, base64.StdEncoding.EncodeToString(cred.Salt), cred.Iterations)
	s.state = 1
	return []byte(s.serverFirst), false, nil
}

func (s *scramServer) clientFinal(msg string) ([]byte, bool, error) {
	m := clientFinalFormat.FindStringSubmatch(msg)
	if m == nil {
		return nil, false, fmt.Errorf("invalid SCRAM client final message format: %w", ErrInvalidCredentials)
	}
	// Like Kafka's ScramSaslServer, the nonce is not compared with the one
	// sent: the proof covers the message as the client wrote it, and
	// librdkafka repeats its own nonce in front of the server's.
	proof, _ := base64.StdEncoding.DecodeString(m[clientFinalFormat.SubexpIndex("proof")])
	authMessage := []byte(s.clientBare + "," + s.serverFirst + "," + m[clientFinalFormat.SubexpIndex("bare")])
	clientSignature := s.mech.hmac(s.cred.StoredKey, authMessage)
	if len(proof) != len(clientSignature) {
		return nil, false, fmt.Errorf("invalid client credentials: %w", ErrInvalidCredentials)
	}
	clientKey := make([]byte, len(proof))
	subtle.XORBytes(clientKey, clientSignature, proof)
	if !hmac.Equal(s.mech.digest(clientKey), s.cred.StoredKey) {
		return nil, false, fmt.Errorf("invalid client credentials: %w", ErrInvalidCredentials)
	}
	serverSignature := s.mech.hmac(s.cred.ServerKey, authMessage)
	return []byte("v=" + base64.StdEncoding.EncodeToString(serverSignature)), true, nil
}
