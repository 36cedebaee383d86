package chaos

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// noLeaks fails the test if it leaves a goroutine behind; registered first, it runs after every
// other cleanup.
func noLeaks(t *testing.T) {
	opt := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, opt) })
}

// echoServer answers every connection to host (a port of its own) with what it reads, until the
// test ends.
func echoServer(t *testing.T, host string) string {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
	})
	return ln.Addr().String()
}

// TestProxyDelaysEachWay: a round trip through the proxy takes at least twice the latency (once each
// way), and the bytes come back whole.
func TestProxyDelaysEachWay(t *testing.T) {
	noLeaks(t)
	p := newProxy(impairment{Latency: 150 * time.Millisecond}, 1)
	addr, err := p.listen("127.0.0.1", echoServer(t, "127.0.0.1"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", addr.String())
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := c.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 4)
	if _, err := io.ReadFull(c, got); err != nil {
		t.Fatal(err)
	}
	if rtt := time.Since(start); rtt < 300*time.Millisecond || string(got) != "ping" {
		t.Fatalf("round trip %v with %q, want ≥ 300ms with \"ping\"", rtt, got)
	}
	c.Close()
	p.close()
}

// TestProxyLossKeepsOrder: with half the chunks "lost" (held back a retransmission timeout or more),
// everything still arrives, in order, and later than without loss.
func TestProxyLossKeepsOrder(t *testing.T) {
	noLeaks(t)
	p := newProxy(impairment{Loss: 0.5}, 7)
	addr, err := p.listen("127.0.0.1", echoServer(t, "127.0.0.1"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", addr.String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var sent bytes.Buffer
	start := time.Now()
	go func() {
		for i := range uint32(200) {
			var b [4]byte
			binary.BigEndian.PutUint32(b[:], i)
			if _, err := c.Write(b[:]); err != nil {
				return
			}
		}
	}()
	for i := range uint32(200) {
		var b [4]byte
		binary.BigEndian.PutUint32(b[:], i)
		sent.Write(b[:])
	}
	got := make([]byte, sent.Len())
	if _, err := io.ReadFull(c, got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, sent.Bytes()) {
		t.Fatal("the bytes came back changed or out of order")
	}
	if d := time.Since(start); d < retransmitTimeout {
		t.Fatalf("everything back after %v: no chunk was held back", d)
	}
	p.close()
}

// TestProxyCloseEndsConnections: closing the proxy ends the connections it relays, so the brokers
// reconnect directly once a fault is healed.
func TestProxyCloseEndsConnections(t *testing.T) {
	noLeaks(t)
	p := newProxy(impairment{}, 1)
	addr, err := p.listen("127.0.0.1", echoServer(t, "127.0.0.1"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", addr.String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(c, make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	p.close()
	if err := c.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if n, err := c.Read(make([]byte, 1)); err == nil {
		t.Fatalf("read %d bytes after the proxy closed", n)
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("the connection outlived the proxy")
	}
	if _, err := p.listen("127.0.0.1", "127.0.0.1:1"); err == nil {
		t.Fatal("a closed proxy opened a listener")
	}
}

// TestSyncTimeout reads syncLimit × tickTime as ZooKeeper does, with its sample values for what a
// zoo.cfg leaves out.
func TestSyncTimeout(t *testing.T) {
	for cfg, want := range map[string]time.Duration{
		"tickTime=2000\nsyncLimit=5\n":            10 * time.Second,
		"# ensemble\ntickTime = 500\nsyncLimit=2": time.Second,
		"dataDir=/data\n":                         10 * time.Second,
	} {
		if got := syncTimeout(cfg); got != want {
			t.Errorf("syncTimeout(%q) = %v, want %v", cfg, got, want)
		}
	}
}
