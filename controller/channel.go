package controller

import (
	"context"
	"net"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
)

const (
	// senderBackoff is how long a sender waits after a failed connect or request before retrying
	// the same request (hard-coded 100 ms in Kafka's RequestSendThread).
	senderBackoff = 100 * time.Millisecond
	// requestTimeout bounds one connect or one request round trip (controller.socket.timeout.ms
	// and request.timeout.ms, both 30 s by default).
	requestTimeout = 30 * time.Second
)

// brokerRequest is one queued controller request and what to do with its response.
type brokerRequest struct {
	req        kmsg.Request
	onResponse func(kmsg.Response)
}

// channelManager owns one request queue and one sender goroutine per live broker (Kafka's
// ControllerChannelManager). Only the event loop calls its methods.
type channelManager struct {
	ctx      context.Context // the controller's lifetime; senders stop when it ends
	dial     func(ctx context.Context, addr string) (BrokerClient, error)
	listener string
	logger   *zap.Logger
	senders  map[int32]*requestSender
}

// requestSender sends one broker's requests, in order, one at a time.
type requestSender struct {
	broker int32
	addr   string
	queue  *fifo[brokerRequest]
	cancel context.CancelFunc
	done   chan struct{}
}

func newChannelManager(ctx context.Context, dial func(context.Context, string) (BrokerClient, error), listener string, logger *zap.Logger) *channelManager {
	return &channelManager{ctx: ctx, dial: dial, listener: listener, logger: logger, senders: map[int32]*requestSender{}}
}

// addBroker starts a sender for b, connecting to its endpoint for the inter-broker listener.
func (m *channelManager) addBroker(b liveBroker) {
	if _, ok := m.senders[b.reg.ID]; ok {
		return
	}
	ep, ok := b.reg.Endpoint(m.listener)
	if !ok {
		m.logger.Error("Broker has no endpoint for the inter-broker listener; it will get no controller requests",
			zap.Int32("target-broker-id", b.reg.ID), zap.String("listener", m.listener))
		return
	}
	ctx, cancel := context.WithCancel(m.ctx)
	s := &requestSender{
		broker: b.reg.ID,
		addr:   net.JoinHostPort(ep.Host, strconv.Itoa(int(ep.Port))),
		queue:  newFIFO[brokerRequest](),
		cancel: cancel,
		done:   make(chan struct{}),
	}
	m.senders[b.reg.ID] = s
	go s.run(ctx, m.dial, m.logger.With(zap.Int32("target-broker-id", s.broker), zap.String("address", s.addr)))
}

// removeBroker stops the broker's sender and drops its queued requests.
func (m *channelManager) removeBroker(id int32) {
	s, ok := m.senders[id]
	if !ok {
		return
	}
	delete(m.senders, id)
	s.cancel()
	<-s.done
}

// send queues a request for broker id; it is dropped if the broker has no sender.
func (m *channelManager) send(id int32, r brokerRequest) {
	s, ok := m.senders[id]
	if !ok {
		m.logger.Warn("Not sending request to a broker that is not alive",
			zap.Int32("target-broker-id", id), zap.String("api", kmsg.NameForKey(r.req.Key())))
		return
	}
	s.queue.push(r)
}

// shutdown stops every sender.
func (m *channelManager) shutdown() {
	for id := range m.senders {
		m.removeBroker(id)
	}
}

// run sends queued requests until ctx ends. A failed connect or request closes the connection,
// waits senderBackoff and retries the same request: requests are never skipped, as in Kafka.
func (s *requestSender) run(ctx context.Context, dial func(context.Context, string) (BrokerClient, error), logger *zap.Logger) {
	defer close(s.done)
	var client BrokerClient
	defer func() {
		if client != nil {
			_ = client.Close()
		}
	}()
	failures := 0
	logFailure := func(msg string, err error, r brokerRequest) {
		// The first failure in a row is worth a warning; a dead broker fails every 100 ms until
		// its znode disappears, so the repeats go to debug.
		level := zap.WarnLevel
		if failures > 0 {
			level = zap.DebugLevel
		}
		failures++
		logger.Log(level, msg, zap.String("api", kmsg.NameForKey(r.req.Key())), zap.Int("attempt", failures), zap.Error(err))
	}
	for {
		r, ok := s.queue.pop(ctx)
		if !ok {
			return
		}
		for {
			if client == nil {
				dctx, cancel := context.WithTimeout(ctx, requestTimeout)
				c, err := dial(dctx, s.addr)
				cancel()
				if err != nil {
					if ctx.Err() != nil {
						return
					}
					logFailure("Controller's connection to broker was unsuccessful", err, r)
					if !sleep(ctx, senderBackoff) {
						return
					}
					continue
				}
				client = c
			}
			rctx, cancel := context.WithTimeout(ctx, requestTimeout)
			resp, err := client.Request(rctx, r.req)
			cancel()
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				logFailure("Controller's request to broker failed; reconnecting", err, r)
				_ = client.Close()
				client = nil
				if !sleep(ctx, senderBackoff) {
					return
				}
				continue
			}
			failures = 0
			if r.onResponse != nil {
				r.onResponse(resp)
			}
			break
		}
	}
}

// sleep waits d or until ctx ends, reporting whether the full wait happened.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
