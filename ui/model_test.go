package ui

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zkafka/zkafka/internal/testcluster"
	"github.com/zkafka/zkafka/internal/wait"
	"github.com/zkafka/zkafka/internal/zkclient"
	"github.com/zkafka/zkafka/internal/zktest"
	"github.com/zkafka/zkafka/zkpaths"
)

func TestMain(m *testing.M) { zktest.Main(m) }

// session opens a ZooKeeper session for a test to write with.
func session(t testing.TB, connect string) *zkclient.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := zkclient.Connect(ctx, zkclient.Config{Connect: connect})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func mustCreate(t *testing.T, c *zkclient.Client, path, data string) {
	t.Helper()
	if err := c.CreateIfMissing(path, []byte(data)); err != nil {
		t.Fatal(err)
	}
}

func mustSet(t *testing.T, c *zkclient.Client, path, data string) {
	t.Helper()
	if _, err := c.Set(path, []byte(data), -1); err != nil {
		t.Fatal(err)
	}
}

// startModel runs a model until the test ends and waits for its first read
// of the tree.
func startModel(t *testing.T, opts Options) *Model {
	t.Helper()
	if opts.PollInterval == 0 {
		opts.PollInterval = time.Hour
	}
	m := NewModel(opts)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		m.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return m
}

func waitLoaded(t *testing.T, m *Model) {
	t.Helper()
	wait.For(t, 20*time.Second, "the model's first read of the tree", func() bool {
		m.mu.RLock()
		defer m.mu.RUnlock()
		return m.loaded && m.rev > 0
	})
}

// waitEvent waits for a timeline event whose text contains text, and
// returns it.
func waitEvent(t *testing.T, m *Model, text string) Event {
	t.Helper()
	var found Event
	wait.For(t, 20*time.Second, "a timeline event "+text, func() bool {
		for _, e := range m.Events(0) {
			if strings.Contains(e.Text, text) {
				found = e
				return true
			}
		}
		return false
	})
	return found
}

const (
	stateLeader1 = `{"controller_epoch":1,"leader":1,"version":1,"leader_epoch":0,"isr":[1,2]}`
	stateLeader2 = `{"controller_epoch":1,"leader":2,"version":1,"leader_epoch":1,"isr":[2]}`
	assignment   = `{"version":3,"partitions":{"0":[1,2]},"adding_replicas":{},"removing_replicas":{}}`
)

// TestModelTimelineFromZnodeChanges: the model's first read is quiet, then
// every change to a watched znode becomes a timeline event with the
// version that changed, for one read each; an expired session reads the
// tree again and reports what changed while it had no watches.
func TestModelTimelineFromZnodeChanges(t *testing.T) {
	connect := zktest.NewChroot(t)
	w := session(t, connect)
	statePath := zkpaths.PartitionStatePath("orders", 0)
	mustCreate(t, w, zkpaths.TopicPath("orders"), assignment)
	mustCreate(t, w, statePath, stateLeader1)
	mustCreate(t, w, zkpaths.BrokerIDs, "")

	m := startModel(t, Options{ZooKeeper: connect, SessionTimeout: 4 * time.Second})
	waitLoaded(t, m)
	for _, e := range m.Events(0) {
		if e.Kind != KindZooKeeper {
			t.Fatalf("the first read made the event %q; it should be quiet", e.Text)
		}
	}
	m.mu.RLock()
	_, mirrored := m.nodes[statePath]
	m.mu.RUnlock()
	if !mirrored {
		t.Fatalf("%s is not in the mirror", statePath)
	}

	before := m.Requests()
	mustSet(t, w, statePath, stateLeader2)
	e := waitEvent(t, m, "orders-0: leader 1 → 2 (leader epoch 0 → 1")
	if e.Kind != KindLeader || e.Path != statePath || e.Version != 1 {
		t.Errorf("event %+v: want kind leader at %s version 1", e, statePath)
	}
	waitEvent(t, m, "orders-0: ISR shrunk [1,2] → [2]")
	if got := m.Requests() - before; got != 1 {
		t.Errorf("a changed state znode cost %d ZooKeeper requests, want 1 (the read that re-arms its watch)", got)
	}

	mustCreate(t, w, zkpaths.BrokerPath(9), broker)
	waitEvent(t, m, "broker 9 joined")
	if err := w.Delete(zkpaths.BrokerPath(9), -1); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, m, "broker 9 left")

	// An expired session loses its watches: what changes meanwhile is found
	// by reading the whole tree again.
	m.mu.RLock()
	c := m.client
	m.mu.RUnlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.ForceExpire(ctx); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, w, zkpaths.BrokerPath(7), broker)
	waitEvent(t, m, "new ZooKeeper session")
	waitEvent(t, m, "broker 7 joined")
	mustSet(t, w, statePath, stateLeader1)
	waitEvent(t, m, "orders-0: leader 2 → 1")
}

// TestModelShowsZooKeeperDown: a ZooKeeper that stops answering shows as
// disconnected with the last state read, and the model follows it again when
// it answers; one that was never reached shows as unreachable, not as an
// empty cluster.
func TestModelShowsZooKeeperDown(t *testing.T) {
	srv := zktest.Start(t, zktest.Options{})
	w := session(t, srv.Connect)
	mustCreate(t, w, zkpaths.BrokerIDs, "")
	mustCreate(t, w, zkpaths.BrokerPath(1), broker)
	m := startModel(t, Options{ZooKeeper: srv.Connect, SessionTimeout: 4 * time.Second})
	waitLoaded(t, m)
	s := NewServer(m, nil)

	if err := srv.Pause(); err != nil {
		t.Fatal(err)
	}
	wait.For(t, 20*time.Second, "the model to see ZooKeeper gone", func() bool {
		html, _, _ := s.render(sectionCluster)
		return strings.Contains(string(html), "ZooKeeper is disconnected") && strings.Contains(string(html), `data-broker="1"`)
	})
	if err := srv.Resume(); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, m, "reconnected to ZooKeeper")

	down := startModel(t, Options{ZooKeeper: "127.0.0.1:" + strconv.Itoa(testcluster.FreePort(t)), SessionTimeout: time.Second})
	ds := NewServer(down, nil)
	html, _, _ := ds.render(sectionCluster)
	if !strings.Contains(string(html), "Not connected to ZooKeeper yet") || strings.Contains(string(html), "<table") {
		t.Errorf("before any session the cluster view shows:\n%s", html)
	}
	wait.For(t, 10*time.Second, "the unreachable ZooKeeper to show as such", func() bool {
		html, _, _ := ds.render(sectionCluster)
		return strings.Contains(string(html), "Not connected to ZooKeeper yet (unreachable")
	})
}
