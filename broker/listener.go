package broker

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/internal/reqclock"
	"github.com/zkafka/zkafka/kafka"
	"github.com/zkafka/zkafka/wire"
)

// listener accepts connections on one named listener. Each connection is
// served by one goroutine that handles its requests in order, as Kafka does
// by muting a channel until its response is sent.
type listener struct {
	s    *Server
	name string
	ln   net.Listener
	sec  *listenerSecurity // its security protocol's TLS and SASL
	log  *zap.Logger
	done chan struct{} // closed by close

	mu     sync.Mutex
	conns  map[net.Conn]*connState
	closed bool
	wg     sync.WaitGroup
}

// connState is what the listener knows of an open connection: when it last
// read a request (Kafka closes the least recently active one when
// max.connections is exceeded) and whether it is being closed.
type connState struct {
	lastActive atomic.Int64 // unix nanoseconds
	done       chan struct{}
	closeOnce  sync.Once
	// principal is who the connection authenticated as; only the
	// connection's goroutine, which runs its handlers, reads or sets it.
	principal kafka.Principal
	// tokenAuthenticated: the principal authenticated with a delegation
	// token (KafkaPrincipal.tokenAuthenticated), which may not ask for more.
	tokenAuthenticated bool
	protocol           string // the listener's security protocol
	// sasl is the authentication of a SASL listener's connection (nil on
	// others), owned by the connection's goroutine too.
	sasl   *saslConn
	remote string // the client's address, for logs
	// zeroCopy: the connection is plain TCP, so a Fetch's records go from
	// the segment file to the socket (sendFile); over TLS they are read
	// into memory to be encrypted.
	zeroCopy bool
}

func newListener(s *Server, name string, ln net.Listener, sec *listenerSecurity) *listener {
	return &listener{s: s, name: name, ln: ln, sec: sec, conns: map[net.Conn]*connState{}, done: make(chan struct{}),
		log: s.log.Named("network").With(zap.String("listener", name))}
}

func (l *listener) serve() {
	defer l.wg.Wait()
	for {
		c, err := l.ln.Accept()
		if err != nil {
			if !errors.Is(err, net.ErrClosed) {
				l.log.Error("Accept failed", zap.Error(err))
			}
			return
		}
		addr := c.RemoteAddr().(*net.TCPAddr).AddrPort().Addr().Unmap()
		if err := l.s.quotas.inc(l.done, l.name, addr); err != nil {
			var tooMany *tooManyConnectionsError
			var throttled *connectionThrottledError
			switch {
			case errors.As(err, &throttled):
				l.log.Debug(fmt.Sprintf("Delaying closing of connection from %s for %d ms", throttled.addr, throttled.throttle.Milliseconds()))
				l.closeAfter(c, throttled.throttle)
			case errors.As(err, &tooMany):
				c.Close()
				l.log.Info(fmt.Sprintf("Rejected connection from %s, address already has the configured maximum of %d connections.", tooMany.addr, tooMany.max))
			default:
				c.Close()
				return // the listener closed while waiting for a slot
			}
			continue
		}
		st := &connState{done: make(chan struct{}), principal: kafka.Anonymous, remote: c.RemoteAddr().String(), protocol: l.sec.protocol}
		if l.sec.sasl {
			st.sasl = &saslConn{sec: l.sec}
		}
		st.lastActive.Store(time.Now().UnixNano())
		l.mu.Lock()
		if l.closed {
			l.mu.Unlock()
			c.Close()
			l.s.quotas.dec(l.name, addr)
			return
		}
		l.conns[c] = st
		l.wg.Add(1)
		l.mu.Unlock()
		if l.s.quotas.protected(l.name) {
			l.s.closeExcessConnections()
		}
		go func() {
			defer l.wg.Done()
			l.serveConn(c, st)
			l.mu.Lock()
			delete(l.conns, c)
			l.mu.Unlock()
			st.close(c)
			l.s.quotas.dec(l.name, addr)
		}()
	}
}

// closeAfter closes a connection the listener will not serve after d (or
// when the listener closes), reading nothing from it meanwhile, as Kafka's
// acceptor holds a throttled connection.
func (l *listener) closeAfter(c net.Conn, d time.Duration) {
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		defer c.Close()
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-l.done:
		}
	}()
}

// close closes the connection once, waking its goroutine if it waits for
// request memory.
func (st *connState) close(c net.Conn) {
	st.closeOnce.Do(func() {
		close(st.done)
		c.Close()
	})
}

// close stops accepting and closes every open connection.
func (l *listener) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.closed {
		close(l.done)
	}
	l.closed = true
	l.ln.Close()
	for c, st := range l.conns {
		st.close(c)
	}
}

// closeExcessConnections closes, while more connections are open than
// max.connections, the least recently active connection of a listener the
// limit applies to: the inter-broker listener may go beyond the limit, and
// other clients make room for it.
func (s *Server) closeExcessConnections() {
	for range s.quotas.excess() {
		var (
			victim     net.Conn
			victimSt   *connState
			victimLast int64
		)
		for _, l := range s.listeners {
			if s.quotas.protected(l.name) {
				continue
			}
			l.mu.Lock()
			for c, st := range l.conns {
				select {
				case <-st.done:
					continue // already closing
				default:
				}
				if last := st.lastActive.Load(); victim == nil || last < victimLast {
					victim, victimSt, victimLast = c, st, last
				}
			}
			l.mu.Unlock()
		}
		if victim == nil {
			return
		}
		s.log.Named("network").Info("Closing the least recently active connection: max.connections exceeded",
			zap.Stringer("remote", victim.RemoteAddr()))
		victimSt.close(victim)
	}
}

// request is one decoded request and where it came from.
type request struct {
	hdr      wire.RequestHeader
	body     kmsg.Request
	listener string
	remote   string // the client's address
	// closeConnection asks the listener to close the connection after the
	// handler returns: an acks=0 produce that failed, since the client reads
	// no response and must notice by reconnecting, as in Kafka.
	closeConnection bool
	// throttleTime is how long a client quota mutes the connection.
	throttleTime time.Duration
	size         int // the request's bytes, as quotas count them
	// clock measures the handler's time for the request quota, which
	// records it once (requestTimeRecorded).
	clock               *reqclock.Clock
	requestTimeRecorded bool
	conn                *connState // the connection it came on
}

// principal is who the request's connection authenticated as; the user
// of its client quotas.
func (r *request) principal() kafka.Principal { return r.conn.principal }

func (l *listener) serveConn(c net.Conn, st *connState) {
	log := l.log.With(zap.Stringer("remote", c.RemoteAddr()))
	if l.sec.tls != nil {
		tc := tls.Server(c, l.sec.tls)
		if !l.tlsHandshake(log, tc, st) {
			return
		}
		c = tc
	}
	_, st.zeroCopy = c.(*net.TCPConn)
	r := bufio.NewReader(c)
	var out []byte
	var gaps []wire.Gap
	// held is the request memory taken from queued.max.request.bytes for the
	// request in hand, returned once it is handled.
	var held int64
	defer func() { l.s.memoryPool.release(held) }()
	// spare is the frame of this connection's last Produce request, read
	// into again by the next: a Produce's records are written to the log and
	// kept nowhere once it is handled, and a producer sends frames of about
	// the same size, so the broker does not allocate and clear a megabyte per
	// request. A frame read into spare that turns out to be anything else
	// keeps it (a SASL token, a request whose handler may hold its bytes).
	var spare []byte
	for {
		// An idle connection is closed after connections.max.idle.ms.
		if err := c.SetReadDeadline(time.Now().Add(l.s.cfg.ConnectionsMaxIdle)); err != nil {
			return
		}
		size, err := wire.ReadFrameSize(r, st.sasl.maxFrame(l.s.cfg.SocketRequestMaxBytes))
		if err != nil {
			logReadFailure(log, err)
			return
		}
		if l.s.memoryPool != nil {
			if !l.s.memoryPool.acquire(st.done, int64(size)) {
				return
			}
			held = int64(size)
			// A request waiting for memory is not idle: the wait is the broker's.
			if err := c.SetReadDeadline(time.Now().Add(l.s.cfg.ConnectionsMaxIdle)); err != nil {
				return
			}
		}
		var into []byte
		if isProduceFrame(r, size) {
			into, spare = spare, nil
		}
		frame, err := wire.ReadFrameBodyInto(r, size, into)
		if err != nil {
			logReadFailure(log, err)
			return
		}
		st.lastActive.Store(time.Now().UnixNano())
		if st.sasl != nil {
			if resp, served, keep := l.authenticate(log, st, frame); served {
				l.s.memoryPool.release(held)
				held = 0
				if len(resp) > 0 {
					if _, err := c.Write(resp); err != nil {
						return
					}
				}
				if !keep {
					return
				}
				continue
			}
		}
		hdr, body, err := wire.ParseRequest(frame)
		var resp kmsg.Response
		handled := false
		var throttle time.Duration
		switch {
		case errors.Is(err, wire.ErrUnknownAPIKey):
		case body != nil && !l.s.supported(hdr.APIKey, hdr.APIVersion):
			resp = l.s.unsupportedVersion(hdr, body)
		case err != nil:
			log.Info("Closing connection after a malformed request", zap.Int16("api-key", hdr.APIKey), zap.Int16("api-version", hdr.APIVersion), zap.Error(err))
			return
		default:
			r := &request{hdr: hdr, body: body, listener: l.name, remote: c.RemoteAddr().String(), size: len(frame), conn: st}
			var panicked bool
			if resp, panicked = l.handleRecovering(log, r); panicked {
				if resp != nil {
					// The connection is closed next, whether or not this
					// reaches the client.
					c.Write(wire.AppendResponse(out[:0], hdr, resp))
				}
				return
			}
			if r.closeConnection {
				log.Info("Closing connection after a failed produce with acks=0")
				return
			}
			l.s.applyRequestQuota(r, resp)
			handled, throttle = true, r.throttleTime
			if hdr.APIKey == produceAPIKey && len(frame) <= maxSpareFrame {
				spare = frame
			}
		}
		l.s.memoryPool.release(held)
		held = 0
		files, _ := resp.(*fileFetchResponse)
		switch {
		case files != nil:
			out, gaps = files.appendFrame(out[:0], hdr)
		case resp != nil:
			out = wire.AppendResponse(out[:0], hdr, resp)
		case handled:
			// acks=0 produce: no response at all, but a quota still mutes.
			if throttle > 0 && !st.mute(throttle) {
				return
			}
			continue
		default:
			// An API or version that cannot be answered in its own shape gets
			// a bare UNSUPPORTED_VERSION.
			log.Info("Unsupported API or version", zap.Int16("api-key", hdr.APIKey), zap.Int16("api-version", hdr.APIVersion))
			out = wire.AppendErrorOnly(out[:0], hdr.CorrelationID, kerr.UnsupportedVersion.Code)
		}
		// A client quota mutes the connection: a client that throttles itself
		// (KIP-219) gets the response first, an older one after the wait.
		muteAfter := throttle > 0 && throttlesItself(resp)
		if throttle > 0 && !muteAfter && !st.mute(throttle) {
			files.close()
			return
		}
		if files != nil {
			if err := files.writeFrame(c, out, gaps); err != nil {
				log.Debug("Closing connection after a failed fetch response", zap.Error(err))
				return
			}
		} else if _, err := c.Write(out); err != nil {
			return
		}
		if muteAfter && !st.mute(throttle) {
			return
		}
	}
}

// produceAPIKey is the Produce request's API key.
const produceAPIKey = 0

// maxSpareFrame bounds the Produce frame a connection keeps for its next:
// larger ones (socket.request.max.bytes allows 100 MiB) are not pinned.
const maxSpareFrame = 4 << 20

// isProduceFrame peeks at the API key of the frame body about to be read,
// the first field of its header.
func isProduceFrame(r *bufio.Reader, size int32) bool {
	if size < 2 {
		return false
	}
	key, err := r.Peek(2)
	return err == nil && int16(binary.BigEndian.Uint16(key)) == produceAPIKey
}

// throttlesItself reports whether the client waits out the response's
// throttle time on its own (KIP-219's versions).
func throttlesItself(resp kmsg.Response) bool {
	tr, ok := resp.(kmsg.ThrottleResponse)
	if !ok {
		return false
	}
	_, after := tr.Throttle()
	return after
}

// mute waits d before the connection's next request is read, false if the
// connection is closed meanwhile.
func (st *connState) mute(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-st.done:
		return false
	}
}

// logReadFailure logs why a request could not be read, unless the client
// hung up or the broker closed the connection.
func logReadFailure(log *zap.Logger, err error) {
	if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
		log.Info("Closing connection", zap.Error(err))
	}
}

// handleRecovering runs a request's handler. A panic costs only this
// connection: it is logged with its stack, and the client gets
// UNKNOWN_SERVER_ERROR where the response has a place for it (nil
// otherwise); the caller then closes the connection, whose state the handler
// may have left half-changed.
func (l *listener) handleRecovering(log *zap.Logger, r *request) (resp kmsg.Response, panicked bool) {
	defer func() {
		v := recover()
		if v == nil {
			return
		}
		log.Error("Request handler panicked; closing the connection",
			zap.Int16("api-key", r.hdr.APIKey), zap.String("api", kmsg.NameForKey(r.hdr.APIKey)),
			zap.Int16("api-version", r.hdr.APIVersion), zap.Stringp("client-id", r.hdr.ClientID),
			zap.Any("panic", v), zap.StackSkip("stack", 1))
		resp, panicked = l.s.unknownServerError(r), true
	}()
	ctx, clock := reqclock.Start(l.s.ctx)
	r.clock = clock
	return l.s.handle(ctx, r), false
}

// unknownServerError answers a request whose handler failed with
// UNKNOWN_SERVER_ERROR, in the shape an unsupported version is answered in;
// nil when that shape holds no error code for it (Metadata for all topics,
// an empty list) or the request gets no response (acks=0).
func (s *Server) unknownServerError(r *request) kmsg.Response {
	if pr, ok := r.body.(*kmsg.ProduceRequest); ok && pr.Acks == 0 {
		return nil
	}
	code := kerr.UnknownServerError.Code
	resp := s.apis[r.hdr.APIKey].errorResponse(r.body, code)
	if !slices.Contains(errorCodes(nil, reflect.ValueOf(resp)), code) {
		return nil
	}
	return resp
}

// errorCodes appends the value of every ErrorCode field in v, a kmsg
// response or part of one, to codes: the enclosing struct's before those of
// its entries.
func errorCodes(codes []int16, v reflect.Value) []int16 {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			codes = errorCodes(codes, v.Elem())
		}
	case reflect.Slice:
		for i := range v.Len() {
			codes = errorCodes(codes, v.Index(i))
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Field(i); v.Type().Field(i).Name == "ErrorCode" && f.Kind() == reflect.Int16 {
				codes = append(codes, int16(f.Int()))
			}
		}
		for i := range v.NumField() {
			codes = errorCodes(codes, v.Field(i))
		}
	}
	return codes
}

// handle dispatches a decoded request to its API handler.
func (s *Server) handle(ctx context.Context, r *request) kmsg.Response {
	a := s.apis[r.hdr.APIKey]
	return a.handle(ctx, s, r)
}
