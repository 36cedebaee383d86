package zktest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"
)

// The shared server serves every test of one test binary, each in its own chroot.
var shared struct {
	mu      sync.Mutex
	enabled bool // Main is running the tests
	server  *Server
	dir     string
	err     error // a failed start is not retried by every test
}

// Main runs a package's tests and then stops the shared server, if any test started it. Use it as
// the whole TestMain:
//
//	func TestMain(m *testing.M) { zktest.Main(m) }
func Main(m *testing.M) {
	shared.mu.Lock()
	shared.enabled = true
	shared.mu.Unlock()

	code := m.Run()

	shared.mu.Lock()
	if shared.server != nil {
		if err := shared.server.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "zktest: stop shared ZooKeeper: %v\n", err)
			code = 1
		}
	}
	if shared.dir != "" {
		_ = os.RemoveAll(shared.dir) // only a temp dir; a leftover is harmless
	}
	shared.mu.Unlock()
	os.Exit(code)
}

// NewChroot returns a connect string for a fresh, unique chroot ("/t-<random>") on the test
// binary's shared ZooKeeper server, starting that server on first use. zkclient creates the chroot
// when it connects. The package's TestMain must call Main.
func NewChroot(tb testing.TB) string {
	tb.Helper()
	s := sharedServer(tb)
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		tb.Fatalf("zktest: random chroot: %v", err)
	}
	return s.Connect + "/t-" + hex.EncodeToString(b[:])
}

// SharedServer returns the test binary's shared server, starting it on first use. Tests that stop,
// kill or restart ZooKeeper must use Start instead.
func SharedServer(tb testing.TB) *Server {
	tb.Helper()
	return sharedServer(tb)
}

func sharedServer(tb testing.TB) *Server {
	tb.Helper()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if !shared.enabled {
		tb.Fatal("zktest: the shared server needs TestMain to call zktest.Main(m)")
	}
	if shared.server == nil && shared.err == nil {
		shared.server, shared.dir, shared.err = startShared()
	}
	if shared.err != nil {
		tb.Fatal(shared.err)
	}
	return shared.server
}

func startShared() (*Server, string, error) {
	dir, err := os.MkdirTemp("", "zktest-shared-")
	if err != nil {
		return nil, "", fmt.Errorf("zktest: shared server dir: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), readyTimeout+5*time.Second)
	defer cancel()
	s, err := StartServer(ctx, dir, Options{})
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, "", err
	}
	return s, dir, nil
}
