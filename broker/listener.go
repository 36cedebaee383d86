package broker

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/wire"
)

// listener accepts connections on one named listener. Each connection is
// served by one goroutine that handles its requests in order, as Kafka does
// by muting a channel until its response is sent.
type listener struct {
	s    *Server
	name string
	ln   net.Listener
	log  *zap.Logger

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

func newListener(s *Server, name string, ln net.Listener) *listener {
	return &listener{s: s, name: name, ln: ln, conns: map[net.Conn]struct{}{},
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
		l.mu.Lock()
		if l.closed {
			l.mu.Unlock()
			c.Close()
			return
		}
		l.conns[c] = struct{}{}
		l.wg.Add(1)
		l.mu.Unlock()
		go func() {
			defer l.wg.Done()
			l.serveConn(c)
			l.mu.Lock()
			delete(l.conns, c)
			l.mu.Unlock()
			c.Close()
		}()
	}
}

// close stops accepting and closes every open connection.
func (l *listener) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	l.ln.Close()
	for c := range l.conns {
		c.Close()
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
}

func (l *listener) serveConn(c net.Conn) {
	log := l.log.With(zap.Stringer("remote", c.RemoteAddr()))
	r := bufio.NewReader(c)
	var out []byte
	for {
		// An idle connection is closed after connections.max.idle.ms.
		if err := c.SetReadDeadline(time.Now().Add(l.s.cfg.ConnectionsMaxIdle)); err != nil {
			return
		}
		frame, err := wire.ReadFrame(r, l.s.cfg.SocketRequestMaxBytes)
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				log.Info("Closing connection", zap.Error(err))
			}
			return
		}
		hdr, body, err := wire.ParseRequest(frame)
		var resp kmsg.Response
		handled := false
		switch {
		case errors.Is(err, wire.ErrUnknownAPIKey):
		case body != nil && !l.s.supported(hdr.APIKey, hdr.APIVersion):
			resp = l.s.unsupportedVersion(hdr, body)
		case err != nil:
			log.Info("Closing connection after a malformed request", zap.Int16("api-key", hdr.APIKey), zap.Int16("api-version", hdr.APIVersion), zap.Error(err))
			return
		default:
			r := &request{hdr: hdr, body: body, listener: l.name, remote: c.RemoteAddr().String()}
			resp = l.s.handle(l.s.ctx, r)
			if r.closeConnection {
				log.Info("Closing connection after a failed produce with acks=0")
				return
			}
			handled = true
		}
		switch {
		case resp != nil:
			out = wire.AppendResponse(out[:0], hdr, resp)
		case handled:
			continue // acks=0 produce: no response at all
		default:
			// An API or version that cannot be answered in its own shape gets
			// a bare UNSUPPORTED_VERSION.
			log.Info("Unsupported API or version", zap.Int16("api-key", hdr.APIKey), zap.Int16("api-version", hdr.APIVersion))
			out = wire.AppendErrorOnly(out[:0], hdr.CorrelationID, kerr.UnsupportedVersion.Code)
		}
		if _, err := c.Write(out); err != nil {
			return
		}
	}
}

// handle dispatches a decoded request to its API handler.
func (s *Server) handle(ctx context.Context, r *request) kmsg.Response {
	a := s.apis[r.hdr.APIKey]
	return a.handle(ctx, s, r)
}
