package controller

import (
	"sync"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/zkafka/zkafka/kafka"
	"github.com/zkafka/zkafka/zkpaths"
)

// countingReader is a read session on a fakeZK that counts its syncs and reads, checks that no
// read comes before a sync, and fails its syncs or reads when told to.
type countingReader struct {
	t                   *testing.T
	s                   *fakeSession
	failSync, failReads bool

	mu           sync.Mutex
	syncs, reads int
	closed       bool
}

func (r *countingReader) Sync(string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.syncs++
	if r.failSync {
		return zk.ErrConnectionClosed
	}
	return nil
}

func (r *countingReader) Get(p string) ([]byte, *zk.Stat, error) {
	r.mu.Lock()
	r.reads++
	if r.syncs == 0 {
		r.t.Errorf("read of %s before a sync", p)
	}
	fail := r.failReads
	r.mu.Unlock()
	if fail {
		return nil, nil, zk.ErrConnectionClosed
	}
	return r.s.Get(p)
}

func (r *countingReader) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	return nil
}

// TestReadPartitionStatesThroughReadSessions: a bulk read is spread over the controller's session
// and the read sessions that synced, a read a read session fails is done on the controller's own,
// the results stay in input order, and a small read uses the controller's session alone.
func TestReadPartitionStatesThroughReadSessions(t *testing.T) {
	z := newFakeZK()
	admin := z.session()
	var partitions []kafka.TopicPartition
	for _, p := range []string{"/brokers", "/brokers/topics", "/brokers/topics/t", "/brokers/topics/t/partitions"} {
		if _, err := admin.Create(p, nil, 0, nil); err != nil {
			t.Fatal(err)
		}
	}
	const n = 40
	for p := range int32(n) {
		tp := kafka.TopicPartition{Topic: "t", Partition: p}
		partitions = append(partitions, tp)
		if p == n-1 {
			continue // never brought online: no state znode
		}
		if _, err := admin.Create(zkpaths.PartitionPath("t", p), nil, 0, nil); err != nil {
			t.Fatal(err)
		}
		l := zkpaths.LeaderAndIsr{Leader: p%3 + 1, LeaderEpoch: p, ISR: []int32{p%3 + 1}, ControllerEpoch: 1}
		if _, err := admin.Create(zkpaths.PartitionStatePath("t", p), l.Encode(), 0, nil); err != nil {
			t.Fatal(err)
		}
	}
	c := newController(Config{BrokerID: 1}, kafka.SystemClock{}, 4)
	c.store = z.session()
	good := &countingReader{t: t, s: z.session()}
	failing := &countingReader{t: t, s: z.session(), failReads: true}
	unsynced := &countingReader{t: t, s: z.session(), failSync: true}
	c.readSessions = []readSession{good, failing, unsynced}

	check := func(reads []stateRead) {
		t.Helper()
		for i, r := range reads {
			p := partitions[i].Partition
			switch {
			case r.err != nil:
				t.Errorf("t-%d: %v", p, r.err)
			case p == n-1 && r.ok:
				t.Errorf("t-%d has no state znode, read %+v", p, r.state)
			case p < n-1 && (!r.ok || r.state.leader != p%3+1 || r.state.leaderEpoch != p):
				t.Errorf("t-%d read as %+v (ok %v)", p, r.state, r.ok)
			}
		}
	}
	c.bulkReadMin = n
	check(c.readPartitionStates(partitions))
	// One partition in three for each of the two synced read sessions (the third could not sync).
	if good.reads != n/3 || failing.reads != n/3 || unsynced.reads != 0 {
		t.Errorf("reads through the read sessions: %d, %d and %d (unsynced), want %d, %d and 0", good.reads, failing.reads, unsynced.reads, n/3, n/3)
	}

	c.bulkReadMin = n + 1
	before := good.reads + good.syncs
	check(c.readPartitionStates(partitions))
	if good.reads+good.syncs != before {
		t.Errorf("a read below bulkReadMin went through the read sessions")
	}

	c.closeReadSessions()
	if !good.closed || !failing.closed || !unsynced.closed || c.readSessions != nil {
		t.Errorf("read sessions left open at resignation")
	}
}
