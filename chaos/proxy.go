package chaos

import (
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"sync"
	"time"
)

// retransmitTimeout is Linux's smallest TCP retransmission timeout (TCP_RTO_MIN): how late a lost
// segment arrives when the first retransmission gets through.
const retransmitTimeout = 200 * time.Millisecond

// impairment is what a proxy does to the bytes it relays, each way: every chunk waits Latency, and
// is lost with probability Loss — which over TCP means it arrives a retransmission timeout later
// (doubling while the retransmissions are lost too), holding back everything behind it, as the
// application on a lossy link sees it. A userspace proxy stands in for the kernel's netem, which
// this machine's kernel lacks.
type impairment struct {
	Latency time.Duration
	Loss    float64
}

// proxy relays TCP connections from its listeners to their targets through an impairment. It owns
// every connection it accepted: close ends them all, and every goroutine with them.
type proxy struct {
	imp impairment

	mu        sync.Mutex
	rng       *rand.Rand
	listeners []net.Listener
	conns     map[net.Conn]struct{}
	closed    bool
	wg        sync.WaitGroup
}

func newProxy(imp impairment, seed uint64) *proxy {
	return &proxy{imp: imp, rng: rand.New(rand.NewPCG(seed, 17)), conns: map[net.Conn]struct{}{}}
}

// listen opens a listener on host (an ephemeral port) that relays to target, and returns its
// address.
func (p *proxy) listen(host, target string) (*net.TCPAddr, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		ln.Close()
		return nil, errors.New("proxy closed")
	}
	p.listeners = append(p.listeners, ln)
	p.mu.Unlock()
	p.wg.Go(func() { p.accept(ln, target) })
	return ln.Addr().(*net.TCPAddr), nil
}

func (p *proxy) accept(ln net.Listener, target string) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return // closed
		}
		p.wg.Go(func() { p.relay(c, target) })
	}
}

// track adds c to the connections close ends, or closes it at once after close.
func (p *proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		c.Close()
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *proxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	c.Close()
}

func (p *proxy) relay(client net.Conn, target string) {
	if !p.track(client) {
		return
	}
	defer p.untrack(client)
	server, err := net.DialTimeout("tcp", target, 5*time.Second)
	if err != nil {
		return
	}
	if !p.track(server) {
		return
	}
	defer p.untrack(server)
	var wg sync.WaitGroup
	wg.Go(func() { p.pipe(server, client) })
	p.pipe(client, server)
	wg.Wait()
}

// pipe copies src to dst, each chunk released at its own time. Release times never go back, so the
// bytes keep their order, as TCP delivers them.
func (p *proxy) pipe(dst, src net.Conn) {
	type chunk struct {
		b  []byte
		at time.Time
	}
	chunks := make(chan chunk, 64)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for c := range chunks {
			time.Sleep(time.Until(c.at)) // the impairment itself

			if _, err := dst.Write(c.b); err != nil {
				// Both ends go: the reader below then fails and closes chunks.
				dst.Close()
				src.Close()
				for range chunks {
				}
				return
			}
		}
		if tc, ok := dst.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
	}()
	var last time.Time
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			at := time.Now().Add(p.delay())
			if at.Before(last) {
				at = last
			}
			last = at
			chunks <- chunk{b: append([]byte(nil), buf[:n]...), at: at}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				dst.Close()
			}
			break
		}
	}
	close(chunks)
	<-done
}

// delay is one chunk's: the latency, plus a retransmission timeout (doubling) for every time it is
// lost.
func (p *proxy) delay() time.Duration {
	d := p.imp.Latency
	if p.imp.Loss <= 0 {
		return d
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for rto := retransmitTimeout; rto <= 8*retransmitTimeout && p.rng.Float64() < p.imp.Loss; rto *= 2 {
		d += rto
	}
	return d
}

// close ends every listener and connection and waits for the proxy's goroutines.
func (p *proxy) close() {
	p.mu.Lock()
	p.closed = true
	for _, ln := range p.listeners {
		ln.Close()
	}
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}
