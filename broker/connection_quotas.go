package broker

import (
	"fmt"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/zkafka/zkafka/brokerconfig"
	"github.com/zkafka/zkafka/quota"
)

// connectionQuotas counts open connections per client address, per listener
// and in all, and enforces max.connections.per.ip (with its overrides),
// listener.name.<l>.max.connections and max.connections as Kafka 2.8's
// ConnectionQuotas does:
//   - an accepted connection over its address's limit is closed at once;
//   - at a listener or broker-wide limit the acceptor stops accepting until a
//     connection closes, so further clients wait in the kernel's backlog;
//   - the inter-broker listener, when there are others, is exempt from the
//     broker-wide limit, and a connection it accepts beyond that limit makes
//     the broker close the least recently active connection of another
//     listener;
//   - a connection above its address's connection_creation_rate (an IP
//     quota, KIP-612) is not counted or served: the listener holds it for
//     the throttle time, then closes it.
type connectionQuotas struct {
	maxConnections int32
	perIP          int32
	perIPOverrides map[netip.Addr]int32
	listenerMax    map[string]int32
	interBroker    string
	numListeners   int
	ipRates        *quota.ConnectionRates

	mu          sync.Mutex
	changed     chan struct{} // closed and replaced whenever a count drops
	perAddr     map[netip.Addr]int32
	perListener map[string]int32
	total       int32
}

// tooManyConnectionsError rejects a connection over its address's limit.
type tooManyConnectionsError struct {
	addr netip.Addr
	max  int32
}

func (e *tooManyConnectionsError) Error() string {
	return fmt.Sprintf("Too many connections from %s (maximum = %d)", e.addr, e.max)
}

// connectionThrottledError holds back a connection above its address's
// connection creation rate for throttle.
type connectionThrottledError struct {
	addr     netip.Addr
	throttle time.Duration
}

func (e *connectionThrottledError) Error() string {
	return fmt.Sprintf("Connection from %s throttled for %d ms", e.addr, e.throttle.Milliseconds())
}

// newConnectionQuotas resolves the override hosts, as Kafka resolves them
// once when the config is read; a host name counts for every address it
// resolves to.
func newConnectionQuotas(cfg *brokerconfig.Config, ipRates *quota.ConnectionRates) (*connectionQuotas, error) {
	q := &connectionQuotas{
		ipRates:        ipRates,
		maxConnections: cfg.MaxConnections,
		perIP:          cfg.MaxConnectionsPerIP,
		perIPOverrides: map[netip.Addr]int32{},
		listenerMax:    cfg.ListenerMaxConnections,
		interBroker:    cfg.InterBrokerListenerName,
		numListeners:   len(cfg.Listeners),
		changed:        make(chan struct{}),
		perAddr:        map[netip.Addr]int32{},
		perListener:    map[string]int32{},
	}
	for host, n := range cfg.MaxConnectionsPerIPOverrides {
		if a, err := netip.ParseAddr(host); err == nil {
			q.perIPOverrides[a.Unmap()] = n
			continue
		}
		ips, err := net.LookupIP(host)
		if err != nil {
			return nil, fmt.Errorf("max.connections.per.ip.overrides: %w", err)
		}
		for _, ip := range ips {
			if a, ok := netip.AddrFromSlice(ip); ok {
				q.perIPOverrides[a.Unmap()] = n
			}
		}
	}
	return q, nil
}

// inc counts a connection the listener accepted, first waiting until the
// listener and the broker have a free slot; it gives up when done closes.
// A *tooManyConnectionsError means the connection is over its address's
// limit and a *connectionThrottledError that it is above its address's
// connection rate; it was not counted either way, and the caller closes it
// (after the throttle).
func (q *connectionQuotas) inc(done <-chan struct{}, listener string, addr netip.Addr) error {
	q.mu.Lock()
	for !q.slotAvailable(listener) {
		changed := q.changed
		q.mu.Unlock()
		select {
		case <-changed:
		case <-done:
			return net.ErrClosed
		}
		q.mu.Lock()
	}
	defer q.mu.Unlock()
	if rate, ok := q.ipRates.Lookup(addr); ok {
		if d := rate.Record(1); d > 0 {
			rate.Unrecord(1) // not accepted, as Kafka does
			return &connectionThrottledError{addr: addr, throttle: d}
		}
	}
	max, ok := q.perIPOverrides[addr]
	if !ok {
		max = q.perIP
	}
	if q.perAddr[addr] >= max {
		return &tooManyConnectionsError{addr: addr, max: max}
	}
	q.perAddr[addr]++
	q.perListener[listener]++
	q.total++
	return nil
}

// dec uncounts a closed connection and wakes acceptors waiting for a slot.
func (q *connectionQuotas) dec(listener string, addr netip.Addr) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.perAddr[addr] <= 1 {
		delete(q.perAddr, addr)
	} else {
		q.perAddr[addr]--
	}
	q.perListener[listener]--
	q.total--
	close(q.changed)
	q.changed = make(chan struct{})
}

func (q *connectionQuotas) slotAvailable(listener string) bool {
	if max, ok := q.listenerMax[listener]; ok && q.perListener[listener] >= max {
		return false
	}
	return q.protected(listener) || q.total < q.maxConnections
}

// protected is Kafka's rule that the inter-broker listener, when there are
// others, is not held back by max.connections.
func (q *connectionQuotas) protected(listener string) bool {
	return listener == q.interBroker && q.numListeners > 1
}

// excess is how many connections are open beyond max.connections; the
// broker closes that many from listeners other than the protected one.
func (q *connectionQuotas) excess() int32 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return max(q.total-q.maxConnections, 0)
}

// memoryPool bounds the bytes of requests read but not yet handled
// (queued.max.request.bytes), as Kafka's non-strict SimpleMemoryPool: a
// request is admitted while any memory is left, so the pool may overdraw by
// one request of at most socket.request.max.bytes. A connection whose request
// finds the pool empty reads nothing more until memory is released, as Kafka
// mutes the channel. A nil pool (the default, -1) bounds nothing, and the
// listener skips it.
type memoryPool struct {
	mu        sync.Mutex
	available int64
	changed   chan struct{} // closed and replaced at every release
}

func newMemoryPool(size int64) *memoryPool {
	if size <= 0 {
		return nil
	}
	return &memoryPool{available: size, changed: make(chan struct{})}
}

// acquire takes size bytes, waiting while the pool is exhausted; false when
// done closes first. Only a bounded pool is asked.
func (p *memoryPool) acquire(done <-chan struct{}, size int64) bool {
	p.mu.Lock()
	for p.available <= 0 {
		changed := p.changed
		p.mu.Unlock()
		select {
		case <-changed:
		case <-done:
			return false
		}
		p.mu.Lock()
	}
	defer p.mu.Unlock()
	p.available -= size
	return true
}

// release returns size bytes to the pool.
func (p *memoryPool) release(size int64) {
	if p == nil || size == 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.available += size
	close(p.changed)
	p.changed = make(chan struct{})
}
