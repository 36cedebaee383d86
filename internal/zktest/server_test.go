package zktest_test

import (
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkafka/zkafka/internal/zktest"
)

func TestMain(m *testing.M) { zktest.Main(m) }

// connect opens a go-zookeeper session and waits until it is established.
func connect(t *testing.T, addr string) *zk.Conn {
	t.Helper()
	conn, events, err := zk.Connect([]string{addr}, 4*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	deadline := time.After(10 * time.Second)
	for {
		select {
		case ev := <-events:
			if ev.State == zk.StateHasSession {
				return conn
			}
		case <-deadline:
			t.Fatalf("no session with %s", addr)
		}
	}
}

func fourLetterWord(t *testing.T, addr, word string) (string, error) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := conn.Write([]byte(word)); err != nil {
		return "", err
	}
	var sb strings.Builder
	buf := make([]byte, 512)
	for {
		n, err := conn.Read(buf)
		sb.Write(buf[:n])
		if err != nil {
			return sb.String(), nil
		}
	}
}

func TestStartServesAndKeepsDataAcrossKillAndRestart(t *testing.T) {
	s := zktest.Start(t, zktest.Options{})
	if s.Addr() != s.Connect || !strings.HasPrefix(s.Addr(), "127.0.0.1:") {
		t.Fatalf("Addr %q, Connect %q: want the same 127.0.0.1 address", s.Addr(), s.Connect)
	}
	out, err := fourLetterWord(t, s.Addr(), "srvr")
	if err != nil || !strings.Contains(out, "Mode: standalone") {
		t.Fatalf("srvr = %q, %v; want standalone mode", out, err)
	}

	c := connect(t, s.Connect)
	if _, err := c.Create("/survivor", []byte("x"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	c.Close()

	if err := s.Kill(); err != nil {
		t.Fatal(err)
	}
	if _, err := net.DialTimeout("tcp", s.Addr(), time.Second); err == nil {
		t.Fatal("port still accepts connections after Kill")
	}
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	data, _, err := connect(t, s.Connect).Get("/survivor")
	if err != nil || string(data) != "x" {
		t.Fatalf("after restart Get(/survivor) = %q, %v; want x", data, err)
	}

	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := s.Stop(); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
	if _, err := net.DialTimeout("tcp", s.Addr(), time.Second); err == nil {
		t.Fatal("port still accepts connections after Stop")
	}
}

func TestTickTimeSetsSessionTimeoutBounds(t *testing.T) {
	s := zktest.Start(t, zktest.Options{TickTime: 100 * time.Millisecond})
	out, err := fourLetterWord(t, s.Addr(), "conf")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"tickTime=100\n", "minSessionTimeout=200\n", "maxSessionTimeout=60000\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("conf lacks %q:\n%s", want, out)
		}
	}
}

func TestOptionsPort(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	s := zktest.Start(t, zktest.Options{Port: port})
	if want := "127.0.0.1:" + strconv.Itoa(port); s.Connect != want {
		t.Fatalf("Connect = %q, want %q", s.Connect, want)
	}
}

func TestStartReportsABusyPort(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	_, err = zktest.StartServer(t.Context(), t.TempDir(), zktest.Options{Port: port})
	if err == nil || errors.Is(err, zktest.ErrNotInstalled) {
		t.Fatalf("StartServer on a busy port: err = %v, want a start-up failure", err)
	}
	if !strings.Contains(err.Error(), "exited during start-up") {
		t.Fatalf("err = %v; want it to say the server exited", err)
	}
}

func TestNewChrootIsUniqueOnTheSharedServer(t *testing.T) {
	a, b := zktest.NewChroot(t), zktest.NewChroot(t)
	shared := zktest.SharedServer(t)
	for _, c := range []string{a, b} {
		if !strings.HasPrefix(c, shared.Connect+"/t-") {
			t.Fatalf("chroot %q not on shared server %q", c, shared.Connect)
		}
	}
	if a == b {
		t.Fatalf("two chroots are equal: %q", a)
	}
}
