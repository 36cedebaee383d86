package zkclient

import (
	"context"
	"crypto/tls"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
	"go.uber.org/zap"
)

// DefaultSessionTimeout is Kafka's default zookeeper.session.timeout.ms.
const DefaultSessionTimeout = 18 * time.Second

// Config says how to reach ZooKeeper.
type Config struct {
	Connect        string        // "h1:2181,h2:2181/optional/chroot"
	SessionTimeout time.Duration // zookeeper.session.timeout.ms; zero means DefaultSessionTimeout
	Logger         *zap.Logger   // nil means no logs; the client logs under the name "zk"
	// SASL, when set, authenticates every connection (the JAAS "Client" context of Kafka's
	// brokers and tools).
	SASL *SASL
	// TLS, when set, connects to the servers' secure client port (zookeeper.ssl.client.enable);
	// with a client certificate ZooKeeper knows the session as x509:<subject>.
	TLS *tls.Config
	// SecureACLs gives the znodes this client creates Kafka's secure ACLs (zookeeper.set.acl):
	// see DefaultACL.
	SecureACLs bool
}

// Client is a ZooKeeper session that survives expiry by replacing itself with a new session.
// Its methods are safe for concurrent use.
type Client struct {
	cfg    Config // as given to Connect, for NewSession
	conn   *zk.Conn
	events <-chan zk.Event // go-zookeeper's copy of every event; drained only by Close
	chroot string          // "" or "/a/b"
	// sessionTimeout is the requested one; retry waits at most this long for a reconnect.
	sessionTimeout time.Duration
	logger         *zap.Logger
	creds          credentials
	secureACLs     bool

	mu         sync.Mutex
	queue      []sessionEvent
	onExpired  []func()
	onNew      []func()
	closed     bool
	watchers   sync.WaitGroup // chroot-stripping watch goroutines
	wake       chan struct{}  // capacity 1: the queue has events
	quit       chan struct{}
	done       chan struct{} // the wrapper goroutine has returned
	hasSession chan struct{} // closed once the first session is established
	closeOnce  sync.Once
}

// sessionEvent is a session state change with the session id current when it happened.
type sessionEvent struct {
	state     zk.State
	sessionID int64
	timeout   time.Duration // negotiated
}

// Connect opens a session and waits, until ctx ends, for the server to establish it. It then
// creates the chroot if it is missing.
func Connect(ctx context.Context, cfg Config) (*Client, error) {
	servers, chroot, err := parseConnect(cfg.Connect)
	if err != nil {
		return nil, err
	}
	if cfg.SessionTimeout == 0 {
		cfg.SessionTimeout = DefaultSessionTimeout
	}
	logger := cfg.Logger
	if logger == nil {
		logger = zap.NewNop()
	}
	c := &Client{
		cfg:            cfg,
		chroot:         chroot,
		sessionTimeout: cfg.SessionTimeout,
		logger:         logger.Named("zk"),
		wake:           make(chan struct{}, 1),
		quit:           make(chan struct{}),
		done:           make(chan struct{}),
		hasSession:     make(chan struct{}),
		secureACLs:     cfg.SecureACLs,
	}
	c.creds.sasl, c.creds.tls, c.creds.authFailed = cfg.SASL, cfg.TLS, make(chan struct{})
	c.creds.handshake = handshakeTimeout(cfg.SessionTimeout, len(servers))
	conn, events, err := zk.Connect(servers, cfg.SessionTimeout,
		zk.WithLogger(zapPrintf{c.logger}),
		zk.WithLogInfo(false),
		zk.WithDialer(c.creds.dialer),
		zk.WithEventCallback(c.enqueue),
	)
	if err != nil {
		return nil, fmt.Errorf("zkclient: connect to %s: %w", cfg.Connect, err)
	}
	c.conn, c.events = conn, events
	go c.run()

	select {
	case <-c.hasSession:
	case <-c.creds.authFailed:
		_ = c.Close()
		c.creds.mu.Lock()
		why := c.creds.lastDialErr
		c.creds.mu.Unlock()
		return nil, fmt.Errorf("zkclient: connect to %s as sasl:%s: %w", cfg.Connect, cfg.SASL.Username, why)
	case <-ctx.Done():
		_ = c.Close()
		c.creds.mu.Lock()
		dialErr := c.creds.lastDialErr
		c.creds.mu.Unlock()
		if dialErr != nil {
			// The cause a user can act on: no server could be reached at all.
			return nil, fmt.Errorf("zkclient: connect to %s: timed out waiting for a session (%w): %w", cfg.Connect, ctx.Err(), dialErr)
		}
		return nil, fmt.Errorf("zkclient: connect to %s: no session: %w", cfg.Connect, ctx.Err())
	}
	if chroot != "" {
		if err := c.ensurePath(chroot, nil); err != nil {
			_ = c.Close()
			return nil, fmt.Errorf("zkclient: create chroot %s: %w", chroot, err)
		}
	}
	return c, nil
}

// NewSession opens another session with this client's configuration: same servers, chroot,
// credentials and session timeout. The caller closes it.
func (c *Client) NewSession(ctx context.Context) (*Client, error) { return Connect(ctx, c.cfg) }

// parseConnect splits Kafka's zookeeper.connect into servers and chroot.
func parseConnect(s string) (servers []string, chroot string, err error) {
	hosts := s
	if i := strings.IndexByte(s, '/'); i >= 0 {
		hosts, chroot = s[:i], s[i:]
	}
	for h := range strings.SplitSeq(hosts, ",") {
		if h = strings.TrimSpace(h); h != "" {
			servers = append(servers, h)
		}
	}
	if len(servers) == 0 {
		return nil, "", fmt.Errorf("zkclient: connect string %q names no server", s)
	}
	if chroot == "/" {
		chroot = ""
	}
	if chroot != "" {
		for part := range strings.SplitSeq(chroot[1:], "/") {
			if part == "" || part == "." || part == ".." {
				return nil, "", fmt.Errorf("zkclient: connect string %q: invalid chroot %q", s, chroot)
			}
		}
	}
	return servers, chroot, nil
}

// SessionID is the id of the current session, 0 while there is none (after an expiry, until the
// replacement is established).
func (c *Client) SessionID() int64 { return c.conn.SessionID() }

// Connected reports whether the client is connected to a server with its session now. It is false
// while the connection is down (requests wait for it to come back) and after an expiry until the
// replacement session is established.
func (c *Client) Connected() bool { return c.conn.State() == zk.StateHasSession }

// OnSessionExpired registers fn to run when the session has expired: its ephemeral znodes and
// watches are gone. It runs on the client's goroutine, after earlier registered callbacks, and
// must not block for long; ZooKeeper requests made from it wait for the new session.
func (c *Client) OnSessionExpired(fn func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.onExpired = append(c.onExpired, fn)
}

// OnNewSession registers fn to run when a replacement session is established after an expiry.
// It runs on the client's goroutine, after earlier registered callbacks, and must not block for
// long. It is not called for the first session, which exists when Connect returns.
func (c *Client) OnNewSession(fn func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.onNew = append(c.onNew, fn)
}

// Close ends the session (its ephemeral znodes go at once) and stops every goroutine the client
// started. It must not be called from a session callback. Calling it again does nothing.
func (c *Client) Close() error {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.closed = true
		c.mu.Unlock()
		close(c.quit)
		// Closing the connection first makes requests from a running callback fail at once
		// instead of holding up Close.
		c.conn.Close()
		// go-zookeeper closes its event channel when its connection loop has returned, after
		// closing every outstanding watch channel, which ends the watch goroutines.
		for range c.events {
		}
		<-c.done
		c.watchers.Wait()
	})
	return nil
}

// enqueue is go-zookeeper's event callback. It runs on go-zookeeper's goroutines, so it only
// queues session events for run.
func (c *Client) enqueue(ev zk.Event) {
	if ev.Type != zk.EventSession {
		return
	}
	c.mu.Lock()
	id, _, timeout := c.creds.get()
	c.queue = append(c.queue, sessionEvent{state: ev.State, sessionID: id, timeout: timeout})
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// run is the wrapper goroutine: it follows the session through its states and runs callbacks.
func (c *Client) run() {
	defer close(c.done)
	var (
		current int64 // the established session, 0 before the first
		expired bool  // current has expired and OnSessionExpired has run
	)
	for {
		select {
		case <-c.quit:
			return
		case <-c.wake:
		}
		c.mu.Lock()
		batch := c.queue
		c.queue = nil
		c.mu.Unlock()
		for _, ev := range batch {
			select {
			case <-c.quit:
				return
			default:
			}
			id := zap.String("session-id", fmt.Sprintf("0x%x", ev.sessionID))
			switch {
			case ev.state == zk.StateHasSession && current == 0:
				current = ev.sessionID
				c.logger.Info("ZooKeeper session established", id, zap.Duration("session-timeout", ev.timeout))
				close(c.hasSession)
			case ev.state == zk.StateHasSession && ev.sessionID == current:
				c.logger.Info("ZooKeeper session reconnected", id)
			case ev.state == zk.StateHasSession:
				// A different session: the old one expired, even if the expiry itself was not seen.
				if !expired {
					c.logger.Warn("ZooKeeper session replaced", zap.String("old-session-id", fmt.Sprintf("0x%x", current)))
					c.runCallbacks(func() []func() { return c.onExpired })
				}
				current, expired = ev.sessionID, false
				c.logger.Info("ZooKeeper new session established", id, zap.Duration("session-timeout", ev.timeout))
				c.runCallbacks(func() []func() { return c.onNew })
			case ev.state == zk.StateExpired && current != 0 && !expired:
				expired = true
				c.logger.Warn("ZooKeeper session expired", zap.String("session-id", fmt.Sprintf("0x%x", current)))
				c.runCallbacks(func() []func() { return c.onExpired })
			case ev.state == zk.StateDisconnected:
				c.logger.Info("ZooKeeper disconnected", zap.String("server", c.conn.Server()))
			default:
				c.logger.Debug("ZooKeeper state", zap.Stringer("state", ev.state))
			}
		}
	}
}

// runCallbacks runs a snapshot of a callback list, so a callback may register further callbacks.
func (c *Client) runCallbacks(list func() []func()) {
	c.mu.Lock()
	fns := append([]func(){}, list()...)
	c.mu.Unlock()
	for _, fn := range fns {
		fn()
	}
}

// zapPrintf routes go-zookeeper's printf-style logging to zap.
type zapPrintf struct{ l *zap.Logger }

func (z zapPrintf) Printf(format string, args ...any) {
	z.l.Info("go-zookeeper", zap.String("detail", fmt.Sprintf(format, args...)))
}

// handshakeTimeout is how long a dialed server has to answer the ConnectRequest: Java's connect
// timeout, the session timeout divided by the number of servers, but never more than a third of
// it. ZooKeeper 3.8.0 leaves a connection made while it starts up open and unanswered (closing it
// fails with a NullPointerException), so a client of a single restarting server that waited the
// whole session timeout lost its session; a third leaves time for two more tries.
func handshakeTimeout(sessionTimeout time.Duration, servers int) time.Duration {
	return min(sessionTimeout/time.Duration(servers), sessionTimeout/3)
}
