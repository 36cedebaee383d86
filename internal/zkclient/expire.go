package zkclient

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"go.uber.org/zap"
)

// ZooKeeper protocol constants used by ForceExpire.
const (
	opCloseSession  = -11 // OpCode.closeSession
	maxConnectFrame = 4096
)

// credentials holds the session id and password from the latest ConnectResponse, which
// go-zookeeper keeps to itself.
type credentials struct {
	mu      sync.Mutex
	id      int64
	passwd  []byte
	timeout time.Duration // negotiated session timeout
	// abandoned makes the dialer refuse: see Abandon.
	abandoned bool
	conn      net.Conn // the latest connection dialed
	// lastDialErr is the latest dial's error (nil once one succeeded): why no session came.
	lastDialErr error
	// handshake bounds the wait for a ConnectResponse (see handshakeTimeout). Set once before the
	// first dial.
	handshake time.Duration
	// sasl, when set, authenticates each connection once its session is established. Set once
	// before the first dial.
	sasl *SASL
	// tls, when set, wraps each connection in TLS. Set once before the first dial.
	tls *tls.Config
	// authFailed is closed when the server refuses the SASL credentials.
	authFailed     chan struct{}
	authFailedOnce sync.Once
}

func (cr *credentials) get() (id int64, passwd []byte, timeout time.Duration) {
	cr.mu.Lock()
	defer cr.mu.Unlock()
	return cr.id, cr.passwd, cr.timeout
}

func (cr *credentials) set(r connectResponse) {
	cr.mu.Lock()
	defer cr.mu.Unlock()
	cr.id, cr.passwd, cr.timeout = r.sessionID, r.passwd, r.timeout
}

// dialer is go-zookeeper's Dialer with the connection wrapped to read the ConnectResponse.
func (cr *credentials) dialer(network, address string, timeout time.Duration) (net.Conn, error) {
	cr.mu.Lock()
	abandoned := cr.abandoned
	cr.mu.Unlock()
	if abandoned {
		return nil, errAbandoned
	}
	conn, err := cr.dial(context.Background(), network, address, timeout)
	cr.mu.Lock()
	cr.lastDialErr = err
	cr.mu.Unlock()
	if err != nil {
		return nil, err
	}
	cr.mu.Lock()
	cr.conn = conn
	handshake := cr.handshake
	cr.mu.Unlock()
	return &captureConn{Conn: conn, creds: cr, handshake: handshake}, nil
}

// dial connects to a server, through TLS when the client has a TLS config: the server's host is
// the name its certificate must carry.
func (cr *credentials) dial(ctx context.Context, network, address string, timeout time.Duration) (net.Conn, error) {
	d := &net.Dialer{Timeout: timeout}
	if cr.tls == nil {
		return d.DialContext(ctx, network, address)
	}
	cfg := cr.tls.Clone()
	if cfg.ServerName == "" {
		host, _, err := net.SplitHostPort(address)
		if err != nil {
			return nil, err
		}
		cfg.ServerName = host
	}
	return (&tls.Dialer{NetDialer: d, Config: cfg}).DialContext(ctx, network, address)
}

// errAbandoned is what the dialer answers after Abandon.
var errAbandoned = errors.New("zkclient: session abandoned")

// Abandon drops the connection without closing the session, as a process
// killed with SIGKILL does: the server keeps the session, and its ephemeral
// znodes, until the session timeout expires it. The client stops as Close
// does but never reconnects, so no closeSession is sent.
func (c *Client) Abandon() error {
	c.creds.mu.Lock()
	c.creds.abandoned = true
	conn := c.creds.conn
	c.creds.mu.Unlock()
	if conn != nil {
		_ = conn.Close()
	}
	return c.Close()
}

// captureConn copies the first frame the server sends on a connection, the ConnectResponse, and
// records its session id and password. Later reads pass straight through.
type captureConn struct {
	net.Conn
	creds     *credentials
	handshake time.Duration
	first     []byte
	done      bool
}

// SetReadDeadline caps the deadline go-zookeeper gives the ConnectResponse — ten times its receive
// timeout, two minutes with Kafka's 18 s sessions — at the handshake timeout, after which the
// client gives up on a server and tries again, as Java's does after its connect timeout. A ZooKeeper that accepts connections while it is still
// starting and never answers them held a broker that long, its session expiring meanwhile (found by
// `zkafka chaos`: ZooKeeper killed and restarted left the cluster without a controller for 80 s).
// go-zookeeper reads the ConnectResponse before it starts its receive loop, so done is not shared.
func (c *captureConn) SetReadDeadline(t time.Time) error {
	if limit := time.Now().Add(c.handshake); !c.done && !t.IsZero() && c.handshake > 0 && t.After(limit) {
		t = limit
	}
	return c.Conn.SetReadDeadline(t)
}

// saslFailed records why a SASL authentication failed for Connect to report; a refusal ends
// Connect at once.
func (cr *credentials) saslFailed(err error) {
	cr.mu.Lock()
	cr.lastDialErr = err
	cr.mu.Unlock()
	if errors.Is(err, ErrSASLAuthFailed) {
		cr.authFailedOnce.Do(func() { close(cr.authFailed) })
	}
}

func (c *captureConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if !c.done && n > 0 {
		c.first = append(c.first, p[:n]...)
		if len(c.first) >= 4 {
			size := int(binary.BigEndian.Uint32(c.first))
			if size > maxConnectFrame {
				c.done, c.first = true, nil // not a ConnectResponse
			} else if len(c.first) >= 4+size {
				r, perr := parseConnectResponse(c.first[4 : 4+size])
				if perr == nil {
					c.creds.set(r)
				}
				c.done, c.first = true, nil
				// Authenticate before go-zookeeper, which waits in this Read for the
				// ConnectResponse, sends anything on the session, as Java's client does
				// before its first request.
				if perr == nil && r.sessionID != 0 && c.creds.sasl != nil {
					if serr := saslExchange(c.Conn, *c.creds.sasl, c.handshake); serr != nil {
						c.creds.saslFailed(serr)
						return 0, serr
					}
				}
			}
		}
	}
	return n, err
}

// connectResponse is what ForceExpire needs from ZooKeeper's ConnectResponse.
type connectResponse struct {
	sessionID int64 // 0: the server refused the session as expired
	passwd    []byte
	timeout   time.Duration
}

// parseConnectResponse decodes a ConnectResponse body: int32 protocolVersion, int32 timeOut (ms),
// int64 sessionId, buffer passwd (int32 length and bytes), then an optional bool readOnly.
func parseConnectResponse(b []byte) (connectResponse, error) {
	if len(b) < 20 {
		return connectResponse{}, fmt.Errorf("zkclient: connect response of %d bytes is too short", len(b))
	}
	r := connectResponse{
		timeout:   time.Duration(int32(binary.BigEndian.Uint32(b[4:8]))) * time.Millisecond,
		sessionID: int64(binary.BigEndian.Uint64(b[8:16])),
	}
	n := int32(binary.BigEndian.Uint32(b[16:20]))
	if n > 0 {
		if int(n) > len(b)-20 {
			return connectResponse{}, fmt.Errorf("zkclient: connect response password of %d bytes overruns the frame", n)
		}
		r.passwd = append([]byte(nil), b[20:20+n]...)
	}
	return r, nil
}

// appendConnectRequest appends a size-prefixed ConnectRequest: int32 protocolVersion (0),
// int64 lastZxidSeen, int32 timeOut, int64 sessionId, buffer passwd, bool readOnly.
func appendConnectRequest(dst []byte, timeout time.Duration, sessionID int64, passwd []byte) []byte {
	body := 4 + 8 + 4 + 8 + 4 + len(passwd) + 1
	dst = binary.BigEndian.AppendUint32(dst, uint32(body))
	dst = binary.BigEndian.AppendUint32(dst, 0) // protocol version
	dst = binary.BigEndian.AppendUint64(dst, 0) // lastZxidSeen: 0 is never ahead of the server
	dst = binary.BigEndian.AppendUint32(dst, uint32(timeout.Milliseconds()))
	dst = binary.BigEndian.AppendUint64(dst, uint64(sessionID))
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(passwd)))
	dst = append(dst, passwd...)
	return append(dst, 0) // readOnly false
}

func appendInt32(dst []byte, v int32) []byte {
	return binary.BigEndian.AppendUint32(dst, uint32(v))
}

func readFrame(r io.Reader, max int) ([]byte, error) {
	var size [4]byte
	if _, err := io.ReadFull(r, size[:]); err != nil {
		return nil, err
	}
	n := int(binary.BigEndian.Uint32(size[:]))
	if n > max {
		return nil, fmt.Errorf("zkclient: frame of %d bytes exceeds %d", n, max)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, err
	}
	return b, nil
}

// ForceExpire makes the server expire this client's session, for tests of what follows an expiry.
// It connects a second time with the session's id and password, which moves the session to the
// new connection, and closes the session there. The client then sees StateExpired when it
// reconnects, its ephemeral znodes are deleted, and it opens a new session.
func (c *Client) ForceExpire(ctx context.Context) error {
	id, passwd, timeout := c.creds.get()
	if id == 0 || id != c.conn.SessionID() {
		return errors.New("zkclient: force expire: no established session")
	}
	server := c.conn.Server()
	conn, err := c.creds.dial(ctx, "tcp", server, 0)
	if err != nil {
		return fmt.Errorf("zkclient: force expire: dial %s: %w", server, err)
	}
	defer conn.Close()
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(timeout)
	}
	if err := conn.SetDeadline(deadline); err != nil {
		return fmt.Errorf("zkclient: force expire: %w", err)
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Now()) })
	defer stop()

	if _, err := conn.Write(appendConnectRequest(nil, timeout, id, passwd)); err != nil {
		return fmt.Errorf("zkclient: force expire: send connect: %w", err)
	}
	frame, err := readFrame(conn, maxConnectFrame)
	if err != nil {
		return fmt.Errorf("zkclient: force expire: read connect response: %w", err)
	}
	resp, err := parseConnectResponse(frame)
	if err != nil {
		return fmt.Errorf("zkclient: force expire: %w", err)
	}
	if resp.sessionID != id {
		return fmt.Errorf("zkclient: force expire: server answered session 0x%x for 0x%x (already expired?)", resp.sessionID, id)
	}

	// A request header alone: int32 xid, int32 type.
	req := binary.BigEndian.AppendUint32(nil, 8)
	req = binary.BigEndian.AppendUint32(req, 1)
	req = appendInt32(req, opCloseSession)
	if _, err := conn.Write(req); err != nil {
		return fmt.Errorf("zkclient: force expire: send close session: %w", err)
	}
	// Reply header: int32 xid, int64 zxid, int32 err.
	reply, err := readFrame(conn, maxConnectFrame)
	if err != nil {
		return fmt.Errorf("zkclient: force expire: read close session reply: %w", err)
	}
	if len(reply) < 16 {
		return fmt.Errorf("zkclient: force expire: close session reply of %d bytes", len(reply))
	}
	if code := int32(binary.BigEndian.Uint32(reply[12:16])); code != 0 {
		return fmt.Errorf("zkclient: force expire: close session failed with ZooKeeper error %d", code)
	}
	c.logger.Info("forced ZooKeeper session expiry", zap.String("session-id", fmt.Sprintf("0x%x", id)))
	return nil
}
