package consumer

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkafka/zkafka/internal/testcluster"
	"github.com/zkafka/zkafka/internal/wait"
	"github.com/zkafka/zkafka/internal/zkclient"
	"github.com/zkafka/zkafka/zkpaths"
)

func legacyConfig(c *testcluster.Cluster, group, topic string) Config {
	return Config{
		GroupID: group, Topics: []string{topic}, ZooKeeperConnect: c.ZK,
		AutoOffsetReset: "smallest", RebalanceBackoff: 100 * time.Millisecond,
	}
}

// owners reads /consumers/<g>/owners/<t>: partition → owner thread id.
func owners(t *testing.T, zkc *zkclient.Client, group, topic string, partitions int32) map[int32]string {
	t.Helper()
	out := map[int32]string{}
	for p := range partitions {
		data, _, err := zkc.Get(zkpaths.ConsumerOwnerPath(group, topic, p))
		if errors.Is(err, zk.ErrNoNode) {
			continue
		}
		if err != nil {
			t.Fatalf("read owner of %d: %v", p, err)
		}
		out[p] = string(data)
	}
	return out
}

// converged reports whether every partition has one owner znode, held by a
// thread of a live consumer, and each consumer's own view matches ZooKeeper.
func converged(t *testing.T, zkc *zkclient.Client, group, topic string, partitions int32, consumers []*Consumer) bool {
	own := owners(t, zkc, group, topic, partitions)
	if len(own) != int(partitions) {
		return false
	}
	for _, c := range consumers {
		var fromZK []int32
		for p, thread := range own {
			if strings.HasPrefix(thread, c.MemberID()+"-") {
				fromZK = append(fromZK, p)
			}
		}
		slices.Sort(fromZK)
		c.mu.Lock()
		paused := c.paused
		c.mu.Unlock()
		if paused || !slices.Equal(c.Assignment()[topic], fromZK) {
			return false
		}
	}
	threads, busy := 0, map[string]bool{}
	for _, c := range consumers {
		threads += c.cfg.Streams
	}
	for _, thread := range own {
		live := false
		for _, c := range consumers {
			live = live || strings.HasPrefix(thread, c.MemberID()+"-")
		}
		if !live {
			return false
		}
		busy[thread] = true
	}
	// A member whose first attempt failed owns nothing, as its view says,
	// until it retries: the group has settled only once every thread that
	// can have a partition has one (range and roundrobin give each one).
	return len(busy) == min(threads, int(partitions))
}

func totalWatches(consumers []*Consumer) int64 {
	var n int64
	for _, c := range consumers {
		n += c.Stats().ZKWatchNotifications
	}
	return n
}

// TestLegacyGroupGrowsShrinksAndExpires runs the 0.8.2 protocol with 1 to 8
// consumers joining, then some leaving and one losing its session.
func TestLegacyGroupGrowsShrinksAndExpires(t *testing.T) {
	const topic, group, partitions = "events", "g", int32(8)
	c := startCluster(t)
	createTopic(t, c, topic, partitions)
	zkc := c.ZooKeeper()
	waitConverged := func(what string, consumers []*Consumer) {
		t.Helper()
		wait.For(t, 20*time.Second, what, func() bool {
			return converged(t, zkc, group, topic, partitions, consumers)
		})
	}

	var consumers []*Consumer
	var increments []int64
	var (
		mu        sync.Mutex
		pauses    = map[int]int{} // consumer index → fetching-paused events
		conflicts int             // attempts failed on another consumer's owner znode
	)
	for i := range 8 {
		before := totalWatches(consumers)
		cfg := legacyConfig(c, group, topic)
		cfg.OnEvent = func(ev Event) {
			mu.Lock()
			defer mu.Unlock()
			switch {
			case ev.Type == EventFetchingPaused:
				pauses[i]++
			case ev.Type == EventRebalanceFailed && errors.Is(ev.Err, ErrOwnerConflict):
				conflicts++
			}
		}
		cons := newConsumer(t, cfg)
		consumers = append(consumers, cons)
		waitConverged("convergence with "+strconv.Itoa(i+1)+" consumers", consumers)
		// Every earlier consumer had its ids watch fired by this join.
		wait.For(t, 10*time.Second, "the herd's notifications", func() bool {
			return totalWatches(consumers)-before >= int64(i)
		})
		increments = append(increments, totalWatches(consumers)-before)
	}
	t.Logf("watch notifications per join (1..8 consumers): %v", increments)
	// The herd effect: a join notifies every member, so the cost of the k-th
	// join grows with k.
	if first, last := increments[1], increments[7]; last <= first {
		t.Errorf("the 8th join caused %d notifications, the 2nd %d: no herd effect", last, first)
	}
	// A rebalance stops everyone: the first consumer paused for each join.
	mu.Lock()
	t.Logf("fetching paused per consumer: %v; attempts failed on ownership conflicts: %d", pauses, conflicts)
	if pauses[0] < 8 {
		t.Errorf("the first consumer paused %d times for 8 joins", pauses[0])
	}
	mu.Unlock()
	ids, _, err := zkc.Children(zkpaths.ConsumerIDsPath(group))
	if err != nil || len(ids) != 8 {
		t.Fatalf("ids: %v %v", ids, err)
	}
	// Registrations are Kafka's JSON.
	data, _, err := zkc.Get(zkpaths.ConsumerIDPath(group, consumers[0].MemberID()))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(data), `{"version":1,"subscription":{"events":1},"pattern":"static","timestamp":"`) {
		t.Errorf("registration %s", data)
	}

	// Three leave.
	for range 3 {
		last := consumers[len(consumers)-1]
		if err := last.Close(context.Background()); err != nil {
			t.Fatalf("close: %v", err)
		}
		consumers = consumers[:len(consumers)-1]
		waitConverged("convergence after a leave", consumers)
	}

	// One loses its session: its znodes vanish, it re-registers under the
	// same id and the group converges again.
	victim := consumers[1]
	lost := make(chan Event, 16)
	events, stopSub := victim.Subscribe(64)
	defer stopSub()
	go func() {
		for ev := range events {
			if ev.Type == EventPartitionsLost {
				lost <- ev
			}
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := victim.group.(*zkGroup).zk.ForceExpire(ctx); err != nil {
		t.Fatalf("expire: %v", err)
	}
	select {
	case <-lost:
	case <-ctx.Done():
		t.Fatal("no partitions-lost event after the session expired")
	}
	waitConverged("convergence after a session expiry", consumers)
	if ok, _, _ := zkc.Exists(zkpaths.ConsumerIDPath(group, victim.MemberID())); !ok {
		t.Error("the expired consumer did not re-register")
	}
	for i, cons := range consumers {
		s := cons.Stats()
		t.Logf("consumer %d: %d watch notifications, %d ZooKeeper requests, %d rebalance attempts",
			i, s.ZKWatchNotifications, s.ZKRequests, s.Rebalances)
	}
}

// TestLegacyOffsetsResumeFromZooKeeper consumes, commits to ZooKeeper, and
// shows a new consumer of the group starting where the first stopped.
func TestLegacyOffsetsResumeFromZooKeeper(t *testing.T) {
	const topic, group, partitions = "orders", "resume", int32(4)
	c := startCluster(t)
	createTopic(t, c, topic, partitions)
	produce(t, c, topic, partitions, 0, 10)

	cfg := legacyConfig(c, group, topic)
	cfg.DisableAutoCommit = true
	first := newConsumer(t, cfg)
	got := pollN(t, first, 40)
	if len(got) != 40 {
		t.Fatalf("got %d records, want 40", len(got))
	}
	if err := first.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	for p := range partitions {
		data, _, err := c.ZooKeeper().Get(zkpaths.ConsumerOffsetPath(group, topic, p))
		if err != nil || string(data) != "10" {
			t.Fatalf("offset znode of %d: %q %v", p, data, err)
		}
	}
	if err := first.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	produce(t, c, topic, partitions, 10, 5)

	// "largest" would skip everything produced so far: the 20 records read
	// prove the committed offsets were used.
	cfg = legacyConfig(c, group, topic)
	cfg.AutoOffsetReset = "largest"
	second := newConsumer(t, cfg)
	got = pollN(t, second, 20)
	seen := map[string]bool{}
	for _, r := range got {
		if r.Offset < 10 {
			t.Errorf("record at offset %d of %d re-delivered", r.Offset, r.Partition)
		}
		seen[string(r.Value)] = true
	}
	if len(seen) != 20 {
		t.Errorf("got %d distinct records: %v", len(seen), slices.Sorted(maps.Keys(seen)))
	}
}

// TestLegacyClaimConflict: a partition still owned by someone else (a
// consumer that has not released it yet) fails every attempt; after
// rebalance.max.retries the consumer gives up owning nothing, and only the
// next membership change makes it try again.
func TestLegacyClaimConflict(t *testing.T) {
	const topic, group, partitions = "claimed", "claim-group", int32(2)
	c := startCluster(t)
	createTopic(t, c, topic, partitions)
	zkc := c.ZooKeeper()
	ghost := zkpaths.ConsumerOwnerPath(group, topic, 0)
	if err := zkc.CreateIfMissing(zkpaths.ConsumerOwnersTopicPath(group, topic), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := zkc.Create(ghost, []byte("ghost-0"), zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}

	var rec recorder
	cfg := legacyConfig(c, group, topic)
	cfg.OnEvent = rec.add
	first := newConsumer(t, cfg)
	wait.For(t, 10*time.Second, "the rebalance to give up", func() bool {
		for _, ev := range rec.of(EventRebalanceFailed) {
			if errors.Is(ev.Err, ErrRebalanceFailed) {
				return true
			}
		}
		return false
	})
	conflicts := 0
	for _, ev := range rec.of(EventRebalanceFailed) {
		if errors.Is(ev.Err, ErrOwnerConflict) {
			conflicts++
		}
	}
	if conflicts != 4 {
		t.Errorf("%d attempts failed on the conflict, want rebalance.max.retries = 4", conflicts)
	}
	if got := first.Assignment(); len(got) != 0 {
		t.Errorf("after giving up the consumer owns %v", got)
	}
	if own := owners(t, zkc, group, topic, partitions); len(own) != 1 {
		t.Errorf("owner znodes %v: the failed attempts' claims were not released", own)
	}

	// The ghost goes; nothing watches owner znodes, so only a join helps.
	if err := zkc.Delete(ghost, -1); err != nil {
		t.Fatal(err)
	}
	second := newConsumer(t, legacyConfig(c, group, topic))
	wait.For(t, 20*time.Second, "convergence", func() bool {
		return converged(t, zkc, group, topic, partitions, []*Consumer{first, second})
	})
}
