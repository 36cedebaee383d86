package broker_test

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/zkafka/zkafka/broker"
	"github.com/zkafka/zkafka/internal/testcluster"
	"github.com/zkafka/zkafka/internal/wait"
	"github.com/zkafka/zkafka/wire"
)

// dialFrom connects to addr from a local address on the loopback network
// (Linux routes all of 127/8 to lo), so a test can be several client IPs.
func dialFrom(t *testing.T, from, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// apiVersions sends an ApiVersions v0 request and waits up to d for its
// response.
func apiVersions(c net.Conn, d time.Duration) error {
	frame := []byte{0, 18, 0, 0, 0, 0, 0, 7, 0, 4, 't', 'e', 's', 't'}
	if _, err := c.Write(append(binary.BigEndian.AppendUint32(nil, uint32(len(frame))), frame...)); err != nil {
		return err
	}
	c.SetReadDeadline(time.Now().Add(d))
	_, err := wire.ReadFrame(c, 1<<20)
	return err
}

// closedByBroker reports whether err is the broker closing the connection.
func closedByBroker(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// unanswered reports whether err is a read that timed out: the broker holds
// the connection without serving it.
func unanswered(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// TestMaxConnectionsPerIP: a connection over its address's limit
// (max.connections.per.ip, or its entry in max.connections.per.ip.overrides)
// is accepted and closed at once, and a slot freed is usable again.
func TestMaxConnectionsPerIP(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Properties: map[string]string{
		"max.connections.per.ip":           "1",
		"max.connections.per.ip.overrides": "127.0.0.1:1000,127.0.0.2:2",
	}})
	addr := c.Addr(1)

	a, b := dialFrom(t, "127.0.0.2", addr), dialFrom(t, "127.0.0.2", addr)
	for _, conn := range []net.Conn{a, b} {
		if err := apiVersions(conn, 10*time.Second); err != nil {
			t.Fatalf("connection within the override: %v", err)
		}
	}
	if err := apiVersions(dialFrom(t, "127.0.0.2", addr), 10*time.Second); !closedByBroker(err) {
		t.Fatalf("third connection from 127.0.0.2 (override 2): %v, want closed", err)
	}
	// Another address has the default limit, 1.
	if err := apiVersions(dialFrom(t, "127.0.0.3", addr), 10*time.Second); err != nil {
		t.Fatalf("first connection from 127.0.0.3: %v", err)
	}
	if err := apiVersions(dialFrom(t, "127.0.0.3", addr), 10*time.Second); !closedByBroker(err) {
		t.Fatalf("second connection from 127.0.0.3 (limit 1): %v, want closed", err)
	}

	a.Close()
	wait.For(t, 10*time.Second, "a connection from 127.0.0.2 once one closed", func() bool {
		return apiVersions(dialFrom(t, "127.0.0.2", addr), 10*time.Second) == nil
	})
}

// twoListeners is testcluster's PLAINTEXT listener, the inter-broker one,
// and an EXTERNAL one for clients.
func twoListeners(extra map[string]string) map[string]string {
	props := map[string]string{
		"listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,EXTERNAL:PLAINTEXT",
		"listeners":                      "PLAINTEXT://127.0.0.1:0,EXTERNAL://127.0.0.1:0",
	}
	for k, v := range extra {
		props[k] = v
	}
	return props
}

// TestListenerMaxConnectionsWaits: at a listener's limit the broker stops
// accepting, so a further client waits unserved until a connection closes,
// then is served; nothing is closed.
func TestListenerMaxConnectionsWaits(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Properties: twoListeners(map[string]string{
		"listener.name.external.max.connections": "2",
	})})
	addr, _ := c.Broker(1).ListenerAddr("EXTERNAL")

	a, b := dialFrom(t, "127.0.0.1", addr), dialFrom(t, "127.0.0.1", addr)
	for _, conn := range []net.Conn{a, b} {
		if err := apiVersions(conn, 10*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	waiting := dialFrom(t, "127.0.0.1", addr)
	if err := apiVersions(waiting, 500*time.Millisecond); !unanswered(err) {
		t.Fatalf("third connection at the listener's limit: %v, want it held unserved", err)
	}
	a.Close()
	waiting.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := wire.ReadFrame(waiting, 1<<20); err != nil {
		t.Fatalf("held connection once a slot freed: %v", err)
	}
	// The inter-broker listener has no such limit.
	if err := apiVersions(dialFrom(t, "127.0.0.1", c.Addr(1)), 10*time.Second); err != nil {
		t.Fatal(err)
	}
}

// TestMaxConnectionsClosesLeastRecentlyActive: max.connections does not hold
// back the inter-broker listener; a connection it accepts beyond the limit
// makes the broker close the least recently active client connection.
func TestMaxConnectionsClosesLeastRecentlyActive(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Properties: twoListeners(map[string]string{
		"max.connections": "3",
	})})
	s := c.Broker(1)
	addr, _ := s.ListenerAddr("EXTERNAL")
	// The controller's channel to its own broker is the one connection
	// before the test's.
	wait.For(t, 10*time.Second, "the controller's connection", func() bool { return broker.ConnectionCount(s) == 1 })

	older, newer := dialFrom(t, "127.0.0.1", addr), dialFrom(t, "127.0.0.1", addr)
	for _, conn := range []net.Conn{older, newer, newer} {
		if err := apiVersions(conn, 10*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	if err := apiVersions(dialFrom(t, "127.0.0.1", addr), 500*time.Millisecond); !unanswered(err) {
		t.Fatalf("client connection at max.connections: %v, want it held unserved", err)
	}
	if err := apiVersions(dialFrom(t, "127.0.0.1", c.Addr(1)), 10*time.Second); err != nil {
		t.Fatalf("inter-broker listener at max.connections: %v", err)
	}
	older.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := older.Read(make([]byte, 1)); !closedByBroker(err) {
		t.Fatalf("least recently active connection: %v, want closed", err)
	}
	if err := apiVersions(newer, 10*time.Second); err != nil {
		t.Fatalf("more recently active connection: %v", err)
	}
}

// TestQueuedMaxRequestBytes: a request that finds queued.max.request.bytes
// taken by requests in hand is not read until that memory is released.
func TestQueuedMaxRequestBytes(t *testing.T) {
	const max = 1 << 20
	c := testcluster.Start(t, testcluster.Options{Properties: map[string]string{
		"socket.request.max.bytes": "1048576",
		"queued.max.request.bytes": "1048576",
	}})
	addr := c.Addr(1)

	// A frame announced at the whole pool, its body still arriving.
	big := dialFrom(t, "127.0.0.1", addr)
	if _, err := big.Write(append(binary.BigEndian.AppendUint32(nil, max), 0, 18, 0, 0)); err != nil {
		t.Fatal(err)
	}
	small := dialFrom(t, "127.0.0.1", addr)
	wait.For(t, 10*time.Second, "the pool to be taken", func() bool {
		return unanswered(apiVersions(small, 200*time.Millisecond))
	})
	// The rest of the big frame: it is read, fails to parse, and its
	// memory returns to the pool, so the waiting requests are served.
	if _, err := big.Write(make([]byte, max-4)); err != nil {
		t.Fatal(err)
	}
	small.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := wire.ReadFrame(small, 1<<20); err != nil {
		t.Fatalf("request once the pool had memory: %v", err)
	}
}
