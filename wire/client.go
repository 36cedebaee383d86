package wire

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
	"github.com/twmb/franz-go/pkg/sasl"
)

// maxResponseSize bounds what a Client reads for one response.
const maxResponseSize = 256 << 20

// Client is one connection to a broker that sends one request at a time, the
// way Kafka's controller channel and inter-broker clients do. It is safe for
// concurrent use; requests are serialized.
type Client struct {
	mu       sync.Mutex
	conn     net.Conn
	r        *bufio.Reader
	clientID string
	corrID   int32
	// max holds the broker's highest version per key, capped at Kafka 2.8.
	max map[int16]int16
	// brokerMax is the broker's highest version per key, uncapped.
	brokerMax map[int16]int16
	buf       []byte
	// reuse, set by ReuseResponseFrames, keeps each response's frame as
	// spare, for the next response to be read into.
	reuse bool
	spare []byte
}

// maxSpareResponse bounds the response frame a Client keeps for the next
// (replica.fetch.response.max.bytes is 10 MiB by default).
const maxSpareResponse = 16 << 20

// ReuseResponseFrames makes the client read each response into the frame of
// the one before when it fits, instead of allocating a frame per response:
// the byte fields of a response (a Fetch's records) are then valid only until
// the next request. For a caller done with each response before it sends the
// next, as a replica fetcher is after appending what it fetched.
func (c *Client) ReuseResponseFrames() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reuse = true
}

// ErrUnsupportedByBroker means the broker does not serve the request's API.
var ErrUnsupportedByBroker = errors.New("request not supported by the broker")

// Dial connects to addr and negotiates versions with ApiVersions (v3, falling
// back to v0 when the broker answers UNSUPPORTED_VERSION, per KIP-511).
func Dial(ctx context.Context, addr, clientID string) (*Client, error) {
	return DialSecure(ctx, addr, clientID, Security{})
}

// Security is how a Client meets a listener's security protocol: TLS when
// TLS is set (SSL, SASL_SSL), then SASL with SASL's mechanism when set
// (SASL_PLAINTEXT, SASL_SSL).
type Security struct {
	TLS  *tls.Config
	SASL sasl.Mechanism
}

// DialSecure is Dial through a TLS handshake (its ServerName the address's
// host unless set) and a SASL exchange after ApiVersions, as Kafka's
// clients authenticate: SaslHandshake v1, then SaslAuthenticate until the
// mechanism is done.
func DialSecure(ctx context.Context, addr, clientID string, sec Security) (*Client, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	if sec.TLS != nil {
		cfg := sec.TLS
		if cfg.ServerName == "" {
			cfg = cfg.Clone()
			cfg.ServerName, _, _ = net.SplitHostPort(addr)
		}
		tc := tls.Client(conn, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			conn.Close()
			return nil, fmt.Errorf("TLS handshake with %s: %w", addr, err)
		}
		conn = tc
	}
	c := &Client{conn: conn, r: bufio.NewReader(conn), clientID: clientID}
	if err := c.negotiate(ctx); err != nil {
		conn.Close()
		return nil, fmt.Errorf("api versions with %s: %w", addr, err)
	}
	if sec.SASL != nil {
		if err := c.authenticate(ctx, addr, sec.SASL); err != nil {
			conn.Close()
			return nil, fmt.Errorf("SASL authentication with %s: %w", addr, err)
		}
	}
	return c, nil
}

// authenticate runs a SASL exchange with SaslHandshake v1 and
// SaslAuthenticate.
func (c *Client) authenticate(ctx context.Context, addr string, m sasl.Mechanism) error {
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Mechanism = m.Name()
	resp, err := c.RequestVersion(ctx, hs, 1)
	if err != nil {
		return err
	}
	if err := kerr.ErrorForCode(resp.(*kmsg.SASLHandshakeResponse).ErrorCode); err != nil {
		return fmt.Errorf("%s: %w", m.Name(), err)
	}
	host, _, _ := net.SplitHostPort(addr)
	session, token, err := m.Authenticate(ctx, host)
	if err != nil {
		return err
	}
	v, ok := c.MaxVersion(kmsg.SASLAuthenticate.Int16())
	if !ok {
		return fmt.Errorf("SaslAuthenticate: %w", ErrUnsupportedByBroker)
	}
	for {
		req := kmsg.NewPtrSASLAuthenticateRequest()
		req.SASLAuthBytes = token
		resp, err := c.RequestVersion(ctx, req, min(v, req.MaxVersion()))
		if err != nil {
			return err
		}
		ar := resp.(*kmsg.SASLAuthenticateResponse)
		if err := kerr.ErrorForCode(ar.ErrorCode); err != nil {
			if ar.ErrorMessage != nil {
				return fmt.Errorf("%w: %s", err, *ar.ErrorMessage)
			}
			return err
		}
		done, next, err := session.Challenge(ar.SASLAuthBytes)
		if err != nil || done {
			return err
		}
		token = next
	}
}

func (c *Client) negotiate(ctx context.Context) error {
	req := kmsg.NewPtrApiVersionsRequest()
	req.ClientSoftwareName = "zkafka"
	req.ClientSoftwareVersion = "0.1.0"
	req.SetVersion(3)
	resp, err := c.roundTrip(ctx, req)
	if err != nil {
		return err
	}
	av := resp.(*kmsg.ApiVersionsResponse)
	if av.ErrorCode == kerr.UnsupportedVersion.Code {
		req.SetVersion(0)
		if resp, err = c.roundTrip(ctx, req); err != nil {
			return err
		}
		av = resp.(*kmsg.ApiVersionsResponse)
	}
	if err := kerr.ErrorForCode(av.ErrorCode); err != nil {
		return err
	}
	ours := kversion.V2_8_0()
	c.max = make(map[int16]int16, len(av.ApiKeys))
	c.brokerMax = make(map[int16]int16, len(av.ApiKeys))
	for _, k := range av.ApiKeys {
		v := k.MaxVersion
		c.brokerMax[k.ApiKey] = v
		if m, ok := ours.LookupMaxKeyVersion(k.ApiKey); ok && m < v {
			v = m
		}
		c.max[k.ApiKey] = v
	}
	return nil
}

// Request sends req at the highest version both sides support (at most Kafka
// 2.8's) and returns the decoded response.
func (c *Client) Request(ctx context.Context, req kmsg.Request) (kmsg.Response, error) {
	c.mu.Lock()
	v, ok := c.max[req.Key()]
	c.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("%s: %w", kmsg.NameForKey(req.Key()), ErrUnsupportedByBroker)
	}
	if m := req.MaxVersion(); m < v {
		v = m
	}
	return c.RequestVersion(ctx, req, v)
}

// RequestVersion sends req at version v.
func (c *Client) RequestVersion(ctx context.Context, req kmsg.Request, v int16) (kmsg.Response, error) {
	req.SetVersion(v)
	return c.roundTrip(ctx, req)
}

func (c *Client) roundTrip(ctx context.Context, req kmsg.Request) (kmsg.Response, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(30 * time.Second)
	}
	if err := c.conn.SetDeadline(deadline); err != nil {
		return nil, err
	}
	// Unblock the read if ctx is cancelled before its deadline.
	stop := context.AfterFunc(ctx, func() { c.conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()

	c.corrID++
	c.buf = AppendRequest(c.buf[:0], c.corrID, c.clientID, req)
	if _, err := c.conn.Write(c.buf); err != nil {
		return nil, c.fail(ctx, err)
	}
	size, err := ReadFrameSize(c.r, maxResponseSize)
	if err != nil {
		return nil, c.fail(ctx, err)
	}
	// spare is nil unless ReuseResponseFrames kept one.
	frame, err := ReadFrameBodyInto(c.r, size, c.spare)
	if err != nil {
		return nil, c.fail(ctx, err)
	}
	if c.reuse && len(frame) <= maxSpareResponse {
		c.spare = frame
	}
	if len(frame) < 4 {
		return nil, c.fail(ctx, ErrTruncatedHeader)
	}
	if got := int32(binary.BigEndian.Uint32(frame)); got != c.corrID {
		return nil, c.fail(ctx, fmt.Errorf("correlation id %d, expected %d", got, c.corrID))
	}
	body := frame[4:]
	resp := req.ResponseKind()
	if resp.IsFlexible() && resp.Key() != 18 {
		if body, err = skipTags(body); err != nil {
			return nil, c.fail(ctx, err)
		}
	}
	if err := resp.ReadFrom(body); err != nil {
		return nil, c.fail(ctx, fmt.Errorf("decode %s v%d response: %w", kmsg.NameForKey(req.Key()), req.GetVersion(), err))
	}
	return resp, nil
}

// fail closes the connection after an I/O or framing error: the stream can no
// longer be trusted. It prefers the context's error when that caused it.
func (c *Client) fail(ctx context.Context, err error) error {
	c.conn.Close()
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	return err
}

// MaxVersion reports the negotiated version for key, if the broker serves it.
func (c *Client) MaxVersion(key int16) (int16, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.max[key]
	return v, ok
}

// BrokerMaxVersion reports the highest version of key the broker serves,
// beyond Kafka 2.8's where it serves more (OffsetCommit v9 with KIP-848's
// consumer protocol).
func (c *Client) BrokerMaxVersion(key int16) (int16, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.brokerMax[key]
	return v, ok
}

// Close closes the connection.
func (c *Client) Close() error { return c.conn.Close() }
