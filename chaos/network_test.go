package chaos

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// oneNamespace is a topology of one broker (1) in a network namespace of the test's own and one
// (2) that is a server on this machine, at the gateway: enough for a slow fault's redirects.
type oneNamespace struct {
	ns   string
	peer int // broker 2's port on the gateway
}

const (
	testGateway = "10.98.0.1"
	testBroker1 = "10.98.0.11"
)

func (o oneNamespace) brokerAddr(b int32) (string, int) {
	if b == 1 {
		return testBroker1, 9
	}
	return testGateway, o.peer
}
func (oneNamespace) zkAddrs() []string   { return nil }
func (oneNamespace) zkTarget(int) string { return "" }
func (oneNamespace) gateway() string     { return testGateway }
func (o oneNamespace) nft(b int32, script string) error {
	if b != 1 {
		return nil // broker 2 is this machine: nothing of it is redirected here
	}
	return execute(script, "ip", "netns", "exec", o.ns, "nft", "-f", "-")
}
func (oneNamespace) enter(_ context.Context, _ func(context.Context) error) error { return nil }
func (oneNamespace) leave(_ context.Context, _ func(context.Context) error) error { return nil }

// TestSlowHealEndsProxiedConnections: when a slow fault heals, a broker's connection that went
// through the proxy sees the close at once, so it reconnects directly instead of waiting on a dead
// connection; a change of the namespace's nat table before the close would keep the close from
// reaching it.
func TestSlowHealEndsProxiedConnections(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("needs root for a network namespace (the chaos tests all do)")
	}
	ns := "zkcslowtest"
	_ = execute("", "ip", "netns", "del", ns)
	_ = execute("", "ip", "link", "del", "zkcslowgw")
	for _, s := range [][]string{
		{"ip", "netns", "add", ns},
		{"ip", "link", "add", "zkcslowgw", "type", "veth", "peer", "name", "eth0", "netns", ns},
		{"ip", "addr", "add", testGateway + "/24", "dev", "zkcslowgw"},
		{"ip", "link", "set", "zkcslowgw", "up"},
		{"ip", "-n", ns, "addr", "add", testBroker1 + "/24", "dev", "eth0"},
		{"ip", "-n", ns, "link", "set", "eth0", "up"},
	} {
		if err := execute("", s[0], s[1:]...); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		_ = execute("", "ip", "netns", "del", ns)
		_ = execute("", "ip", "link", "del", "zkcslowgw")
	})
	_, port, err := net.SplitHostPort(echoServer(t, testGateway))
	if err != nil {
		t.Fatal(err)
	}
	peer, _ := strconv.Atoi(port)
	topo := oneNamespace{ns: ns, peer: peer}
	n := newNetwork([]int32{1, 2}, topo, nil)
	if err := n.slow(1, impairment{Latency: 20 * time.Millisecond}, 1); err != nil {
		t.Fatal(err)
	}
	c := dialIn(t, ns, net.JoinHostPort(testGateway, strconv.Itoa(topo.peer)))
	defer c.Close()
	start := time.Now()
	if _, err := c.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(c, make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	if rtt := time.Since(start); rtt < 40*time.Millisecond {
		t.Fatalf("round trip %v: the connection did not go through the proxy", rtt)
	}
	if err := n.unslow(); err != nil {
		t.Fatal(err)
	}
	if err := c.SetReadDeadline(time.Now().Add(5 * time.Second)); err != nil {
		t.Fatal(err)
	}
	_, err = c.Read(make([]byte, 1))
	var ne net.Error
	if err == nil || errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("after the heal the proxied connection read %v: it never saw the close", err)
	}
}

// dialIn connects to addr from inside network namespace ns: the socket is made on a thread that
// entered it, and keeps it.
func dialIn(t *testing.T, ns, addr string) net.Conn {
	t.Helper()
	type result struct {
		c   net.Conn
		err error
	}
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread() // the thread ends with the goroutine, still in ns: never reused
		f, err := os.Open(filepath.Join("/run/netns", ns))
		if err != nil {
			done <- result{err: err}
			return
		}
		defer f.Close()
		if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
			done <- result{err: err}
			return
		}
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		done <- result{c, err}
	}()
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	return r.c
}
