package zkclient_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"go.uber.org/goleak"
	"go.uber.org/zap/zaptest"

	"github.com/zkafka/zkafka/internal/zkclient"
	"github.com/zkafka/zkafka/internal/zktest"
)

func TestMain(m *testing.M) { zktest.Main(m) }

const waitTimeout = 20 * time.Second

func connect(t *testing.T, connect string) *zkclient.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	defer cancel()
	c, err := zkclient.Connect(ctx, zkclient.Config{
		Connect:        connect,
		SessionTimeout: 4 * time.Second,
		Logger:         zaptest.NewLogger(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return c
}

// root is the shared server's address with the chroot removed.
func root(chroot string) (server, path string) {
	i := strings.IndexByte(chroot, '/')
	return chroot[:i], chroot[i:]
}

func await[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v, ok := <-ch:
		if !ok {
			t.Fatalf("%s: channel closed", what)
		}
		return v
	case <-time.After(waitTimeout):
		t.Fatalf("timed out waiting for %s", what)
	}
	panic("unreachable")
}

func TestChrootIsCreatedAndHidden(t *testing.T) {
	conn := zktest.NewChroot(t)
	server, chroot := root(conn)
	c := connect(t, conn+"/nested")
	raw := connect(t, server)

	if ok, _, err := raw.Exists(chroot + "/nested"); err != nil || !ok {
		t.Fatalf("chroot %s/nested exists = %v, %v; want created by Connect", chroot, ok, err)
	}
	if _, err := c.Create("/a", []byte("1"), 0, nil); err != nil {
		t.Fatal(err)
	}
	if data, _, err := raw.Get(chroot + "/nested/a"); err != nil || string(data) != "1" {
		t.Fatalf("server path %s/nested/a = %q, %v; want 1", chroot, data, err)
	}
	seq, err := c.Create("/a/seq-", nil, zk.FlagSequence, nil)
	if err != nil {
		t.Fatal(err)
	}
	if seq != "/a/seq-0000000000" {
		t.Fatalf("sequential create returned %q, want /a/seq-0000000000", seq)
	}
	children, _, err := c.Children("/")
	if err != nil || !slices.Equal(children, []string{"a"}) {
		t.Fatalf("Children(/) = %v, %v; want [a]", children, err)
	}
	if _, err := c.Set("/a", []byte("2"), 0); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete("/a/seq-0000000000", -1); err != nil {
		t.Fatal(err)
	}
	if data, _, err := c.Get("/a"); err != nil || string(data) != "2" {
		t.Fatalf("Get(/a) = %q, %v; want 2", data, err)
	}
	if _, _, err := c.Get("a"); !errors.Is(err, zk.ErrInvalidPath) {
		t.Fatalf("Get(a) err = %v, want zk.ErrInvalidPath", err)
	}
}

func TestErrorsWrapZooKeeperErrors(t *testing.T) {
	c := connect(t, zktest.NewChroot(t))
	if _, _, err := c.Get("/missing"); !errors.Is(err, zk.ErrNoNode) || !strings.Contains(err.Error(), "/missing") {
		t.Fatalf("Get missing: err = %v, want zk.ErrNoNode naming the path", err)
	}
	if _, err := c.Create("/x", nil, 0, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create("/x", nil, 0, nil); !errors.Is(err, zk.ErrNodeExists) {
		t.Fatalf("second create: err = %v, want zk.ErrNodeExists", err)
	}
	if _, err := c.Set("/x", nil, 7); !errors.Is(err, zk.ErrBadVersion) {
		t.Fatalf("set at wrong version: err = %v, want zk.ErrBadVersion", err)
	}
	if ok, _, err := c.Exists("/missing"); ok || err != nil {
		t.Fatalf("Exists(/missing) = %v, %v; want false, nil", ok, err)
	}
}

// TestSyncThenRead: a write by another session is visible to a read after
// Sync; Sync takes chroot-relative paths and names a bad one in its error.
func TestSyncThenRead(t *testing.T) {
	chroot := zktest.NewChroot(t)
	reader, writer := connect(t, chroot), connect(t, chroot)
	if _, err := writer.Create("/epoch", []byte("7"), 0, nil); err != nil {
		t.Fatal(err)
	}
	if err := reader.Sync("/epoch"); err != nil {
		t.Fatalf("Sync: %v", err)
	}
	if data, _, err := reader.Get("/epoch"); err != nil || string(data) != "7" {
		t.Fatalf("Get after Sync = %q, %v; want the other session's write", data, err)
	}
	if err := reader.Sync("no-slash"); err == nil || !strings.Contains(err.Error(), "no-slash") {
		t.Fatalf("Sync(no-slash) = %v, want an error naming the path", err)
	}
}

func TestCreateIfMissing(t *testing.T) {
	c := connect(t, zktest.NewChroot(t))
	if err := c.CreateIfMissing("/brokers/topics/t1", []byte("first")); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateIfMissing("/brokers/topics/t1", []byte("second")); err != nil {
		t.Fatalf("existing znode: %v", err)
	}
	if data, _, err := c.Get("/brokers/topics/t1"); err != nil || string(data) != "first" {
		t.Fatalf("Get = %q, %v; want the first data kept", data, err)
	}
	if data, _, err := c.Get("/brokers"); err != nil || len(data) != 0 {
		t.Fatalf("parent Get = %q, %v; want empty data", data, err)
	}
	if err := c.CreateIfMissing("/brokers/ids", nil); err != nil {
		t.Fatal(err)
	}
	children, _, err := c.Children("/brokers")
	slices.Sort(children)
	if err != nil || !slices.Equal(children, []string{"ids", "topics"}) {
		t.Fatalf("Children(/brokers) = %v, %v", children, err)
	}
}

func TestWatchEventsCarryChrootRelativePaths(t *testing.T) {
	c := connect(t, zktest.NewChroot(t))

	exists, _, created, err := c.ExistsW("/controller")
	if err != nil || exists {
		t.Fatalf("ExistsW = %v, %v", exists, err)
	}
	if err := c.CreateIfMissing("/brokers/ids", nil); err != nil {
		t.Fatal(err)
	}
	_, _, childrenChanged, err := c.ChildrenW("/brokers/ids")
	if err != nil {
		t.Fatal(err)
	}

	if _, err := c.Create("/controller", []byte(`{"brokerid":1}`), zk.FlagEphemeral, nil); err != nil {
		t.Fatal(err)
	}
	if ev := await(t, created, "exists watch"); ev.Type != zk.EventNodeCreated || ev.Path != "/controller" {
		t.Fatalf("exists watch: %+v, want EventNodeCreated /controller", ev)
	}

	_, _, dataChanged, err := c.GetW("/controller")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Set("/controller", []byte(`{"brokerid":2}`), -1); err != nil {
		t.Fatal(err)
	}
	if ev := await(t, dataChanged, "data watch"); ev.Type != zk.EventNodeDataChanged || ev.Path != "/controller" {
		t.Fatalf("data watch: %+v, want EventNodeDataChanged /controller", ev)
	}

	if _, err := c.Create("/brokers/ids/1", nil, zk.FlagEphemeral, nil); err != nil {
		t.Fatal(err)
	}
	if ev := await(t, childrenChanged, "children watch"); ev.Type != zk.EventNodeChildrenChanged || ev.Path != "/brokers/ids" {
		t.Fatalf("children watch: %+v, want EventNodeChildrenChanged /brokers/ids", ev)
	}
	if _, ok := <-childrenChanged; ok {
		t.Fatal("a watch channel delivered a second event")
	}
}

func TestMultiWithVersionCheck(t *testing.T) {
	c := connect(t, zktest.NewChroot(t))
	if _, err := c.Create("/controller_epoch", []byte("0"), 0, nil); err != nil {
		t.Fatal(err)
	}
	create := &zk.CreateRequest{Path: "/controller", Data: []byte("1"), Flags: zk.FlagEphemeral}
	res, err := c.Multi(
		&zk.CheckVersionRequest{Path: "/controller_epoch", Version: 0},
		create,
		&zk.SetDataRequest{Path: "/controller_epoch", Data: []byte("1"), Version: 0},
	)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 3 || res[1].String != "/controller" || res[2].Stat == nil || res[2].Stat.Version != 1 {
		t.Fatalf("multi responses %+v; want the create at /controller and epoch version 1", res)
	}
	if create.Path != "/controller" || create.Acl != nil {
		t.Fatalf("Multi modified the caller's op: %+v", create)
	}

	// A controller still holding epoch zkVersion 0 is fenced: nothing in the multi is applied.
	res, err = c.Multi(
		&zk.CheckVersionRequest{Path: "/controller_epoch", Version: 0},
		&zk.CreateRequest{Path: "/brokers", Data: nil},
		&zk.DeleteRequest{Path: "/controller", Version: -1},
	)
	if !errors.Is(err, zk.ErrBadVersion) {
		t.Fatalf("stale check: err = %v, want zk.ErrBadVersion", err)
	}
	if len(res) != 3 || !errors.Is(res[0].Error, zk.ErrBadVersion) {
		t.Fatalf("stale check responses %+v; want op 0 to fail with bad version", res)
	}
	if ok, _, _ := c.Exists("/brokers"); ok {
		t.Fatal("a failed multi created /brokers")
	}
	if ok, _, _ := c.Exists("/controller"); !ok {
		t.Fatal("a failed multi deleted /controller")
	}
	if _, err := c.Multi("not an op"); err == nil {
		t.Fatal("Multi accepted an unknown op type")
	}
}

func TestCloseDeletesEphemeralsAtOnce(t *testing.T) {
	conn := zktest.NewChroot(t)
	owner := connect(t, conn)
	observer := connect(t, conn)
	if _, err := owner.Create("/controller", nil, zk.FlagEphemeral, nil); err != nil {
		t.Fatal(err)
	}
	_, _, deleted, err := observer.ExistsW("/controller")
	if err != nil {
		t.Fatal(err)
	}
	if err := owner.Close(); err != nil {
		t.Fatal(err)
	}
	if ev := await(t, deleted, "delete after close"); ev.Type != zk.EventNodeDeleted {
		t.Fatalf("event %+v, want EventNodeDeleted", ev)
	}
	if _, _, err := owner.Get("/controller"); !errors.Is(err, zk.ErrConnectionClosed) && !errors.Is(err, zk.ErrClosing) {
		t.Fatalf("Get after Close: err = %v, want a closed-connection error", err)
	}
	if err := owner.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestForceExpireReplacesTheSession(t *testing.T) {
	conn := zktest.NewChroot(t)
	c := connect(t, conn)
	observer := connect(t, conn)

	var order []string
	expired := make(chan struct{}, 1)
	renewed := make(chan int64, 1)
	c.OnSessionExpired(func() { order = append(order, "expired-1") })
	c.OnSessionExpired(func() { order = append(order, "expired-2"); expired <- struct{}{} })
	c.OnNewSession(func() { order = append(order, "new"); renewed <- c.SessionID() })

	first := c.SessionID()
	if first == 0 {
		t.Fatal("no session id after Connect")
	}
	if err := c.CreateIfMissing("/brokers/ids", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create("/brokers/ids/1", []byte("{}"), zk.FlagEphemeral, nil); err != nil {
		t.Fatal(err)
	}
	_, _, ownWatch, err := c.GetW("/brokers/ids/1")
	if err != nil {
		t.Fatal(err)
	}
	_, _, deleted, err := observer.ExistsW("/brokers/ids/1")
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	defer cancel()
	if err := c.ForceExpire(ctx); err != nil {
		t.Fatal(err)
	}

	if ev := await(t, deleted, "ephemeral deleted"); ev.Type != zk.EventNodeDeleted || ev.Path != "/brokers/ids/1" {
		t.Fatalf("observer saw %+v, want EventNodeDeleted /brokers/ids/1", ev)
	}
	await(t, expired, "OnSessionExpired")
	if ev := await(t, ownWatch, "expired client's watch"); ev.Type != zk.EventNotWatching || !errors.Is(ev.Err, zk.ErrSessionExpired) {
		t.Fatalf("expired client's watch got %+v, want EventNotWatching with ErrSessionExpired", ev)
	}
	second := await(t, renewed, "OnNewSession")
	if second == 0 || second == first {
		t.Fatalf("new session id 0x%x, old 0x%x; want a different, non-zero id", second, first)
	}
	if !slices.Equal(order, []string{"expired-1", "expired-2", "new"}) {
		t.Fatalf("callback order %v", order)
	}

	// The new session works, and the ephemeral is really gone.
	if ok, _, err := c.Exists("/brokers/ids/1"); err != nil || ok {
		t.Fatalf("Exists after expiry = %v, %v; want false", ok, err)
	}
	if _, err := c.Create("/brokers/ids/1", []byte("{}"), zk.FlagEphemeral, nil); err != nil {
		t.Fatalf("re-register on the new session: %v", err)
	}
}

func TestConnectHonoursContext(t *testing.T) {
	// Nothing listens on port 1 of the loopback address.
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := zkclient.Connect(ctx, zkclient.Config{Connect: "127.0.0.1:1"})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("Connect took %v after its deadline", d)
	}
}

func TestCloseLeavesNoGoroutines(t *testing.T) {
	conn := zktest.NewChroot(t) // the shared server's goroutine predates the check
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())

	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	defer cancel()
	c, err := zkclient.Connect(ctx, zkclient.Config{Connect: conn, SessionTimeout: 4 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	// Outstanding watches through the chroot each hold a goroutine until Close.
	if _, _, _, err := c.ExistsW("/a"); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := c.ChildrenW("/"); err != nil {
		t.Fatal(err)
	}
	c.OnNewSession(func() {})
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}

	// And a Connect that never gets a session.
	ctx, cancel = context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	if _, err := zkclient.Connect(ctx, zkclient.Config{Connect: "127.0.0.1:1/x"}); err == nil {
		t.Fatal("Connect to a closed port succeeded")
	}
}

func TestSessionSurvivesAZooKeeperRestart(t *testing.T) {
	server := zktest.Start(t, zktest.Options{})
	c := connect(t, server.Connect+"/restart")
	expired := make(chan struct{}, 1)
	c.OnSessionExpired(func() { expired <- struct{}{} })
	if _, err := c.Create("/controller", nil, zk.FlagEphemeral, nil); err != nil {
		t.Fatal(err)
	}
	id := c.SessionID()

	if err := server.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := server.Restart(); err != nil {
		t.Fatal(err)
	}
	// ZooKeeper persists sessions, so the client reattaches within its 4s timeout.
	ok, _, err := c.Exists("/controller")
	if err != nil || !ok {
		t.Fatalf("ephemeral after the restart: %v %v (the session survived, so it must be there)", ok, err)
	}
	if got := c.SessionID(); got != id {
		t.Fatalf("session 0x%x after the restart, want the same 0x%x", got, id)
	}
	select {
	case <-expired:
		t.Fatal("OnSessionExpired ran for a session that survived")
	default:
	}
}

// TestRequestInFlightWhenTheConnectionDropsIsRetried sends a write to a
// paused ZooKeeper, kills ZooKeeper so the connection drops with the request
// unanswered, and restarts it: the write is sent again on the same session
// (Kafka's retry-until-connected) and the caller sees success.
func TestRequestInFlightWhenTheConnectionDropsIsRetried(t *testing.T) {
	server := zktest.Start(t, zktest.Options{})
	// A session timeout that outlasts the pause, the kill and the restart on
	// a loaded machine: the retry waits at most that long for the session.
	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	defer cancel()
	c, err := zkclient.Connect(ctx, zkclient.Config{Connect: server.Connect + "/inflight", SessionTimeout: 20 * time.Second, Logger: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	id := c.SessionID()
	if err := server.Pause(); err != nil {
		t.Fatal(err)
	}
	written := make(chan error, 1)
	go func() {
		_, err := c.Create("/written-in-flight", []byte("x"), 0, nil)
		written <- err
	}()
	select {
	case err := <-written:
		t.Fatalf("the write was answered by a paused ZooKeeper: %v", err)
	case <-time.After(200 * time.Millisecond): // give the request time to leave
	}
	if err := server.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := server.Restart(); err != nil {
		t.Fatal(err)
	}
	if err := await(t, written, "the write in flight during the outage"); err != nil {
		t.Fatalf("write in flight during the outage: %v", err)
	}
	if data, _, err := c.Get("/written-in-flight"); err != nil || string(data) != "x" {
		t.Fatalf("after the retry: %q %v", data, err)
	}
	if c.SessionID() != id {
		t.Fatal("the session changed; the test needs it to survive")
	}
}

// TestRequestWhileZooKeeperIsDownWaitsForTheSession sends a read while the
// only ZooKeeper server is down: the client flushes requests it could not
// send with ErrNoServer each time it has tried every server, yet the request
// must wait for the session to come back (Kafka's retry-until-connected)
// instead of failing the caller — a broker's CreateTopics failed that way
// during a ZooKeeper leader election.
func TestRequestWhileZooKeeperIsDownWaitsForTheSession(t *testing.T) {
	server := zktest.Start(t, zktest.Options{})
	// A session timeout that outlasts the outage, the server's restart on a
	// loaded machine included: the retry waits at most that long.
	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	defer cancel()
	c, err := zkclient.Connect(ctx, zkclient.Config{Connect: server.Connect + "/down", SessionTimeout: 20 * time.Second, Logger: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := c.Create("/there", []byte("y"), 0, nil); err != nil {
		t.Fatal(err)
	}
	id := c.SessionID()
	if err := server.Kill(); err != nil {
		t.Fatal(err)
	}
	read := make(chan error, 1)
	go func() {
		data, _, err := c.Get("/there")
		if err == nil && string(data) != "y" {
			err = fmt.Errorf("read %q", data)
		}
		read <- err
	}()
	// The client gives up on its server list after a second of failed dials.
	select {
	case err := <-read:
		t.Fatalf("the read was answered with ZooKeeper down: %v", err)
	case <-time.After(1500 * time.Millisecond):
	}
	if err := server.Restart(); err != nil {
		t.Fatal(err)
	}
	if err := await(t, read, "the read made while ZooKeeper was down"); err != nil {
		t.Fatalf("read made while ZooKeeper was down: %v", err)
	}
	if c.SessionID() != id {
		t.Fatal("the session changed; the test needs it to survive")
	}
}

// relay listens on 127.0.0.1 and relays connections to a ZooKeeper server, except those whose
// index (from 0) is in silent: those are accepted and never answered, as ZooKeeper 3.8.0 leaves a
// connection made while it starts up (its close fails with a NullPointerException and the socket
// stays open).
type relay struct {
	addr   string
	mu     sync.Mutex
	conns  []net.Conn
	live   []net.Conn // the relayed connections open now, both ends
	silent map[int]bool
}

func newRelay(t *testing.T, target string, silent ...int) *relay {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &relay{addr: l.Addr().String(), silent: map[int]bool{}}
	for _, i := range silent {
		r.silent[i] = true
	}
	t.Cleanup(func() {
		l.Close()
		r.mu.Lock()
		defer r.mu.Unlock()
		for _, c := range r.conns {
			c.Close()
		}
	})
	go func() {
		for i := 0; ; i++ {
			c, err := l.Accept()
			if err != nil {
				return
			}
			r.mu.Lock()
			r.conns = append(r.conns, c)
			r.mu.Unlock()
			if r.silent[i] {
				continue
			}
			up, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			r.mu.Lock()
			r.conns = append(r.conns, up)
			r.live = append(r.live, c, up)
			r.mu.Unlock()
			go io.Copy(up, c)
			go io.Copy(c, up)
		}
	}()
	return r
}

// drop closes the relayed connections open now, as a ZooKeeper that dies does.
func (r *relay) drop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.live {
		c.Close()
	}
	r.live = nil
}

// A server that accepts the connection and never answers the ConnectRequest is given up after the
// handshake timeout (a third of the session timeout here), not after go-zookeeper's ten receive
// timeouts (27 s for a 4 s session, two minutes for Kafka's 18 s).
func TestConnectGivesUpOnASilentServer(t *testing.T) {
	connect := zktest.NewChroot(t)
	server, chroot, _ := strings.Cut(connect, "/")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	c, err := zkclient.Connect(ctx, zkclient.Config{Connect: newRelay(t, server, 0).addr + "/" + chroot, SessionTimeout: 4 * time.Second})
	if err != nil {
		t.Fatalf("no session %v after the silent first connection: %v", time.Since(start).Round(time.Millisecond), err)
	}
	defer c.Close()
	if _, _, err := c.Exists("/"); err != nil {
		t.Fatal(err)
	}
}

// A server that leaves the reconnection unanswered (ZooKeeper 3.8.0 restarting) is given up early
// enough for another try within the session timeout: with a single server, Java's connect timeout
// (the whole session timeout) would let the session expire on the server meanwhile.
func TestSessionSurvivesASilentServerOnReconnect(t *testing.T) {
	connect := zktest.NewChroot(t)
	server, chroot, _ := strings.Cut(connect, "/")
	// Long enough that one unanswered handshake (a third of it) and a retry leave ample slack on a
	// loaded machine, while a client that waited the whole timeout could not be back in time.
	const sessionTimeout = 15 * time.Second
	r := newRelay(t, server, 1)
	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	defer cancel()
	c, err := zkclient.Connect(ctx, zkclient.Config{Connect: r.addr + "/" + chroot, SessionTimeout: sessionTimeout, Logger: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := c.Create("/kept", []byte("k"), 0, nil); err != nil {
		t.Fatal(err)
	}
	id := c.SessionID()
	dropped := time.Now()
	r.drop()
	if data, _, err := c.Get("/kept"); err != nil || string(data) != "k" {
		t.Fatalf("read after the silent reconnection: %q %v", data, err)
	}
	// The server counts the session timeout from the last request it saw, just before the drop: a
	// session back later than that only survived by the server's rounding to its tick.
	if back := time.Since(dropped); c.SessionID() != id || back >= sessionTimeout {
		t.Fatalf("session 0x%x back after %v; want the session 0x%x within %v", c.SessionID(), back.Round(time.Millisecond), id, sessionTimeout)
	}
}

// TestServerMode: a serving server says its mode; something that is not ZooKeeper, or nothing at
// all, gives an error.
func TestServerMode(t *testing.T) {
	mode, err := zkclient.ServerMode(context.Background(), zktest.SharedServer(t).Addr())
	if err != nil || mode != "standalone" {
		t.Fatalf("the shared server: mode %q, %v; want standalone", mode, err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		c, err := ln.Accept()
		if err == nil {
			_, _ = c.Write([]byte("This ZooKeeper instance is not currently serving requests\n"))
			c.Close()
		}
	}()
	if mode, err := zkclient.ServerMode(context.Background(), ln.Addr().String()); err == nil {
		t.Errorf("a server not serving: mode %q, no error", mode)
	}
	<-done
	addr := ln.Addr().String()
	ln.Close()
	if mode, err := zkclient.ServerMode(context.Background(), addr); err == nil {
		t.Errorf("nothing listening: mode %q, no error", mode)
	}
}

// TestConnectNamesWhyNoSessionCame: with no server listening, Connect's error carries the dial's
// own error (connection refused), not only the context's deadline.
func TestConnectNamesWhyNoSessionCame(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, err = zkclient.Connect(ctx, zkclient.Config{Connect: addr, SessionTimeout: 4 * time.Second})
	if !errors.Is(err, syscall.ECONNREFUSED) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Connect to a closed port: %v; want the deadline and connection refused", err)
	}
}
