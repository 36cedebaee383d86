package broker_test

import (
	"errors"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/internal/testcluster"
	"github.com/zkafka/zkafka/internal/wait"
	"github.com/zkafka/zkafka/wire"
)

// TestIPConnectionRateQuota: with connection_creation_rate 1 on 127.0.0.2
// (an IP quota, KIP-612), connections from that address are served until
// the rate over the 10 s window goes above 1; the next one is held without
// an answer and closed by the broker within the throttle (at most one
// window). Connections from 127.0.0.1 are not limited, and once the quota
// is removed 127.0.0.2 is served again.
func TestIPConnectionRateQuota(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 1})
	addr := c.Addr(1)
	// connect sends ApiVersions from local address from and reports whether
	// it was answered (false: the broker closed the connection unanswered)
	// and how long the broker took either way.
	connect := func(from string) (answered bool, took time.Duration) {
		t.Helper()
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 5 * time.Second}
		conn, err := d.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		start := time.Now()
		if err := conn.SetDeadline(start.Add(10 * time.Second)); err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Write(wire.AppendRequest(nil, 1, "rate", kmsg.NewPtrApiVersionsRequest())); err != nil {
			return false, time.Since(start)
		}
		_, err = wire.ReadFrame(conn, 1<<20)
		switch {
		case err == nil:
			return true, time.Since(start)
		case errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET):
			return false, time.Since(start)
		}
		t.Fatalf("connection from %s: %v", from, err)
		return false, 0
	}
	alterQuotas(t, addr, false, kmsg.AlterClientQuotasRequestEntry{
		Entity: entity("ip", "127.0.0.2"), Ops: []kmsg.AlterClientQuotasRequestEntryOp{setQuota("connection_creation_rate", 1)},
	})
	var held time.Duration
	wait.For(t, 30*time.Second, "a connection from 127.0.0.2 held back", func() bool {
		answered, took := connect("127.0.0.2")
		held = took
		return !answered
	})
	if held > 5*time.Second {
		t.Errorf("the throttled connection was closed after %v: a connection rate's throttle is at most one window (1 s)", held)
	}
	for range 3 {
		if answered, _ := connect("127.0.0.1"); !answered {
			t.Fatal("a connection from 127.0.0.1, which has no quota, was not served")
		}
	}
	alterQuotas(t, addr, false, kmsg.AlterClientQuotasRequestEntry{
		Entity: entity("ip", "127.0.0.2"), Ops: []kmsg.AlterClientQuotasRequestEntryOp{{Key: "connection_creation_rate", Remove: true}},
	})
	wait.For(t, 30*time.Second, "127.0.0.2 served again without its quota", func() bool {
		answered, _ := connect("127.0.0.2")
		return answered
	})
}
