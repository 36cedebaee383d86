package zkclient

import (
	"crypto/md5"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/zkafka/zkafka/security"
)

// SASL is the identity a client authenticates to ZooKeeper with, as the JAAS
// "Client" context's DigestLoginModule gives it to Java's ZooKeeper client:
// SASL DIGEST-MD5 (RFC 2831). The server then knows the session as
// sasl:<Username>, the id its ACLs name.
type SASL = security.ZooKeeperLogin

// ErrSASLAuthFailed is ZooKeeper refusing the client's SASL credentials.
var ErrSASLAuthFailed = errors.New("zkclient: ZooKeeper SASL authentication failed")

// What Java's ZooKeeperSaslClient sends for DIGEST-MD5: the service and host
// of its digest-uri, and the opcode of a SASL packet.
const (
	saslProtocol   = "zookeeper"
	saslServerName = "zk-sasl-md5"
	opSASL         = 102
	// saslXid numbers the SASL packets. go-zookeeper's own xids start at 1
	// and never see these replies, which saslExchange reads itself.
	saslXid = 0
	// ZooKeeper's answers to credentials it refuses: AUTHFAILED, and
	// SESSIONCLOSEDREQUIRESASLAUTH where it enforces SASL.
	zkAuthFailed       = -115
	zkSessionNeedsSASL = -124
)

// saslExchange authenticates an established connection before go-zookeeper
// sends anything on it: an empty first token (DIGEST-MD5 has no initial
// response), the server's challenge answered, the server's rspauth checked.
// Anything but an I/O error is ErrSASLAuthFailed, which no retry mends: a
// refused login, or a server without SASL (it answers with no challenge), as
// Java's client then fails with AuthFailed.
func saslExchange(conn net.Conn, login SASL, deadline time.Duration) error {
	if err := conn.SetDeadline(time.Now().Add(deadline)); err != nil {
		return err
	}
	defer conn.SetDeadline(time.Time{})
	challenge, err := saslRoundTrip(conn, nil)
	if err != nil {
		return err
	}
	d, err := newDigestMD5(login, challenge)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrSASLAuthFailed, err)
	}
	rspauth, err := saslRoundTrip(conn, []byte(d.response()))
	if err != nil {
		return err
	}
	if err := d.checkRspAuth(rspauth); err != nil {
		return fmt.Errorf("%w: %w", ErrSASLAuthFailed, err)
	}
	return nil
}

// saslRoundTrip sends a GetSASLRequest and reads its SetSASLResponse.
func saslRoundTrip(conn net.Conn, token []byte) ([]byte, error) {
	req := binary.BigEndian.AppendUint32(nil, uint32(4+4+4+len(token)))
	req = binary.BigEndian.AppendUint32(req, saslXid)
	req = binary.BigEndian.AppendUint32(req, opSASL)
	req = binary.BigEndian.AppendUint32(req, uint32(len(token)))
	req = append(req, token...)
	if _, err := conn.Write(req); err != nil {
		return nil, fmt.Errorf("zkclient: send SASL token: %w", err)
	}
	reply, err := readFrame(conn, maxConnectFrame)
	if err != nil {
		return nil, fmt.Errorf("zkclient: read SASL reply: %w", err)
	}
	if len(reply) < 16 {
		return nil, fmt.Errorf("zkclient: SASL reply of %d bytes", len(reply))
	}
	// ReplyHeader: xid int32, zxid int64, err int32; then the token.
	if code := int32(binary.BigEndian.Uint32(reply[12:16])); code != 0 {
		if code == zkAuthFailed || code == zkSessionNeedsSASL {
			return nil, ErrSASLAuthFailed
		}
		return nil, fmt.Errorf("%w: SASL reply with error code %d", ErrSASLAuthFailed, code)
	}
	body := reply[16:]
	if len(body) < 4 {
		return nil, fmt.Errorf("zkclient: SASL reply without a token")
	}
	l := int32(binary.BigEndian.Uint32(body))
	if l < 0 {
		return nil, nil
	}
	if int(l) > len(body)-4 {
		return nil, fmt.Errorf("zkclient: SASL token of %d bytes in a reply of %d", l, len(body))
	}
	return body[4 : 4+l], nil
}

// digestMD5 is the client side of one DIGEST-MD5 authentication (RFC 2831,
// qop=auth only: ZooKeeper protects nothing beyond the authentication).
type digestMD5 struct {
	login                    SASL
	realm, nonce, cnonce, nc string
	digestURI                string
}

func newDigestMD5(login SASL, challenge []byte) (*digestMD5, error) {
	fields, err := parseDigestDirectives(string(challenge))
	if err != nil {
		return nil, err
	}
	if fields["nonce"] == "" {
		return nil, fmt.Errorf("zkclient: DIGEST-MD5 challenge without a nonce: %q", challenge)
	}
	if qop := fields["qop"]; qop != "" && !containsToken(qop, "auth") {
		return nil, fmt.Errorf("zkclient: DIGEST-MD5 challenge offers qop %q, not auth", qop)
	}
	if fields["algorithm"] != "md5-sess" {
		return nil, fmt.Errorf("zkclient: DIGEST-MD5 challenge with algorithm %q", fields["algorithm"])
	}
	var b [24]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, err
	}
	return &digestMD5{
		login: login, realm: fields["realm"], nonce: fields["nonce"],
		cnonce: base64.RawStdEncoding.EncodeToString(b[:]), nc: "00000001",
		digestURI: saslProtocol + "/" + saslServerName,
	}, nil
}

func md5Hex(s string) string {
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

// digest is RFC 2831's response-value for A2's prefix ("AUTHENTICATE" for the
// client's response, empty for the server's rspauth).
func (d *digestMD5) digest(method string) string {
	secret := md5.Sum(latin1(d.login.Username + ":" + d.realm + ":" + d.login.Password))
	a1 := string(secret[:]) + ":" + d.nonce + ":" + d.cnonce
	a2 := method + ":" + d.digestURI
	return md5Hex(md5Hex(a1) + ":" + d.nonce + ":" + d.nc + ":" + d.cnonce + ":auth:" + md5Hex(a2))
}

func (d *digestMD5) response() string {
	return fmt.Sprintf(`charset=utf-8,username=%s,realm=%s,nonce=%s,nc=%s,cnonce=%s,digest-uri=%s,maxbuf=65536,response=%s,qop=auth`,
		quoteDigest(d.login.Username), quoteDigest(d.realm), quoteDigest(d.nonce), d.nc, quoteDigest(d.cnonce),
		quoteDigest(d.digestURI), d.digest("AUTHENTICATE"))
}

// checkRspAuth verifies the server knew the password too.
func (d *digestMD5) checkRspAuth(token []byte) error {
	fields, err := parseDigestDirectives(string(token))
	if err != nil {
		return err
	}
	if fields["rspauth"] != d.digest("") {
		return errors.New("zkclient: ZooKeeper's DIGEST-MD5 rspauth does not match")
	}
	return nil
}

// latin1 encodes s in ISO 8859-1 when every character has a code there, as
// RFC 2831 (and Java's client) hashes the credentials, else in UTF-8.
func latin1(s string) []byte {
	b := make([]byte, 0, len(s))
	for _, r := range s {
		if r > 0xff {
			return []byte(s)
		}
		b = append(b, byte(r))
	}
	return b
}

func quoteDigest(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

func containsToken(list, tok string) bool {
	for t := range strings.SplitSeq(list, ",") {
		if strings.TrimSpace(t) == tok {
			return true
		}
	}
	return false
}

// parseDigestDirectives reads `key=value` and `key="quoted value"` pairs
// separated by commas.
func parseDigestDirectives(s string) (map[string]string, error) {
	fields := map[string]string{}
	for i := 0; i < len(s); {
		for i < len(s) && (s[i] == ',' || s[i] == ' ') {
			i++
		}
		if i == len(s) {
			break
		}
		eq := strings.IndexByte(s[i:], '=')
		if eq < 0 {
			return nil, fmt.Errorf("zkclient: malformed DIGEST-MD5 directives %q", s)
		}
		key := strings.ToLower(strings.TrimSpace(s[i : i+eq]))
		i += eq + 1
		var v strings.Builder
		if i < len(s) && s[i] == '"' {
			i++
			for i < len(s) && s[i] != '"' {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				v.WriteByte(s[i])
				i++
			}
			if i == len(s) {
				return nil, fmt.Errorf("zkclient: unterminated quote in DIGEST-MD5 directives %q", s)
			}
			i++
		} else {
			for i < len(s) && s[i] != ',' {
				v.WriteByte(s[i])
				i++
			}
		}
		fields[key] = strings.TrimSpace(v.String())
	}
	return fields, nil
}

// SystemLogin is the SASL login Kafka's brokers, tools and old consumers take
// from the JVM's system properties (KAFKA_OPTS here): the JAAS file's
// ZooKeeper client context, nil when there is none.
func SystemLogin() (*SASL, error) {
	return security.ZooKeeperSASL(security.SystemProperties())
}
