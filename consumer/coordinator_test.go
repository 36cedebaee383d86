package consumer

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/zkafka/zkafka/internal/testcluster"
	"github.com/zkafka/zkafka/internal/wait"
)

func groupConfig(c *testcluster.Cluster, group, topic string) Config {
	return Config{
		GroupID: group, Topics: []string{topic}, BootstrapServers: c.BootstrapAddrs(),
		AutoOffsetReset: "earliest", HeartbeatInterval: 100 * time.Millisecond,
		SessionTimeout: 3 * time.Second, RebalanceTimeout: 10 * time.Second,
	}
}

// recorder keeps a consumer's events.
type recorder struct {
	mu     sync.Mutex
	events []Event
}

func (r *recorder) add(ev Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, ev)
}

func (r *recorder) of(typ EventType) []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Event
	for _, ev := range r.events {
		if ev.Type == typ {
			out = append(out, ev)
		}
	}
	return out
}

// balanced waits until the consumers split the topic's partitions evenly
// and disjointly and none is mid-rebalance.
func balanced(t *testing.T, topic string, partitions int, consumers ...*Consumer) {
	t.Helper()
	wait.For(t, 20*time.Second, "a balanced group", func() bool {
		seen := map[int32]bool{}
		for _, c := range consumers {
			ps := c.Assignment()[topic]
			if len(ps) != partitions/len(consumers) {
				return false
			}
			for _, p := range ps {
				seen[p] = true
			}
			c.mu.Lock()
			paused := c.paused
			c.mu.Unlock()
			if paused {
				return false
			}
		}
		return len(seen) == partitions
	})
}

// pollInBackground keeps a consumer polling until the test ends or the
// consumer is closed: a member joins and rejoins only from Poll.
func pollInBackground(t *testing.T, c *Consumer) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			if _, err := c.Poll(ctx); errors.Is(err, ErrClosed) {
				return
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
}

// TestCoordinatorEagerAndCooperative grows a group 1→3 under each protocol.
// Eager: the first member pauses and revokes everything at each join.
// Cooperative: it never pauses and revokes only the partitions that move.
func TestCoordinatorEagerAndCooperative(t *testing.T) {
	c := startCluster(t)
	const partitions = 6
	for _, tc := range []struct {
		name     string
		strategy string
	}{{"eager", "range"}, {"cooperative", "cooperative-sticky"}} {
		t.Run(tc.name, func(t *testing.T) {
			topic, group := "t-"+tc.name, "g-"+tc.name
			createTopic(t, c, topic, partitions)
			produce(t, c, topic, partitions, 0, 20)
			produceInBackground(t, c, topic, partitions)
			var rec recorder
			cfg := groupConfig(c, group, topic)
			cfg.PartitionAssignmentStrategy = []string{tc.strategy}
			cfg1 := cfg
			cfg1.OnEvent = rec.add
			// The joiners heartbeat slowly, so the first member's
			// rebalances last long enough to show what it does meanwhile.
			cfg.HeartbeatInterval = 500 * time.Millisecond
			first := newConsumer(t, cfg1)
			pollInBackground(t, first)
			balanced(t, topic, partitions, first)
			before := slices.Clone(first.Assignment()[topic])
			cfg2 := cfg
			cfg2.SessionTimeout = time.Second // it will be killed
			second := newConsumer(t, cfg2)
			pollInBackground(t, second)
			balanced(t, topic, partitions, first, second)
			third := newConsumer(t, cfg)
			pollInBackground(t, third)
			balanced(t, topic, partitions, first, second, third)
			kept := first.Assignment()[topic]

			paused := rec.of(EventFetchingPaused)
			var revoked []int32
			for _, ev := range rec.of(EventPartitionsRevoked) {
				revoked = append(revoked, ev.Partitions[topic]...)
			}
			t.Logf("%s: first member had %v, kept %v, revoked %v, paused %d times, %d rebalances",
				tc.name, before, kept, revoked, len(paused), first.Stats().Rebalances)

			// The third leaves: the other two take its partitions over.
			if err := third.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			balanced(t, topic, partitions, first, second)
			after := first.Assignment()[topic]
			pausedAfter := len(rec.of(EventFetchingPaused))
			t.Logf("%s: after a leave the first member has %v, paused %d times in all", tc.name, after, pausedAfter)

			// The second is killed: no LeaveGroup; the coordinator notices
			// after its session timeout.
			kill(second)
			balanced(t, topic, partitions, first)
			t.Logf("%s: after a kill the first member has %v", tc.name, first.Assignment()[topic])

			if tc.name == "eager" {
				if len(paused) < 2 || pausedAfter <= len(paused) {
					t.Errorf("eager member paused %d times for 2 joins and %d with a leave", len(paused), pausedAfter)
				}
				for _, p := range kept {
					if !slices.Contains(revoked, p) {
						t.Errorf("eager member kept %d without revoking it first", p)
					}
				}
				return
			}
			if n := len(rec.of(EventFetchingPaused)); n != 0 {
				t.Errorf("cooperative member paused fetching %d times when members left or died", n)
			}
			for _, p := range kept {
				if !slices.Contains(after, p) {
					t.Errorf("cooperative member lost partition %d when another member left", p)
				}
			}
			if n := deliveriesDuringRebalance(&rec, topic, kept); n == 0 {
				t.Error("cooperative member delivered no records of its kept partitions while rebalancing")
			} else {
				t.Logf("cooperative member delivered records of kept partitions %d times while rebalancing", n)
			}
			if len(paused) != 0 {
				t.Errorf("cooperative member paused fetching %d times", len(paused))
			}
			for _, p := range kept {
				if slices.Contains(revoked, p) {
					t.Errorf("cooperative member revoked partition %d that it kept", p)
				}
			}
			if len(revoked) != partitions-len(kept) {
				t.Errorf("cooperative member revoked %v, want exactly the %d that moved", revoked, partitions-len(kept))
			}
		})
	}
}

// TestCoordinatorStaticMemberRestart restarts a static member within its
// session timeout: it gets its partitions back and nobody rebalances.
func TestCoordinatorStaticMemberRestart(t *testing.T) {
	c := startCluster(t)
	const topic, group, partitions = "static", "static-group", 4
	createTopic(t, c, topic, partitions)
	cfg := groupConfig(c, group, topic)
	cfg.SessionTimeout = 10 * time.Second
	cfgA, cfgB := cfg, cfg
	cfgA.GroupInstanceID, cfgB.GroupInstanceID = "a", "b"
	a := newConsumer(t, cfgA)
	pollInBackground(t, a)
	b := newConsumer(t, cfgB)
	pollInBackground(t, b)
	balanced(t, topic, partitions, a, b)
	had := b.Assignment()[topic]
	rebalances := a.Stats().Rebalances

	if err := b.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	b2 := newConsumer(t, cfgB)
	pollInBackground(t, b2)
	balanced(t, topic, partitions, a, b2)
	if got := b2.Assignment()[topic]; !slices.Equal(got, had) {
		t.Errorf("restarted static member got %v, had %v", got, had)
	}
	// Let a heartbeat a few more times: a rebalance would show up there.
	beats := a.Stats().HeartbeatRequests
	wait.For(t, 10*time.Second, "more heartbeats", func() bool { return a.Stats().HeartbeatRequests >= beats+5 })
	if got := a.Stats().Rebalances; got != rebalances {
		t.Errorf("the other member rebalanced %d times during the restart", got-rebalances)
	}
}

// TestCoordinatorWithKgoMember puts one of our consumers and a kgo consumer
// in one group: they share the partitions through the ConsumerProtocol bytes.
func TestCoordinatorWithKgoMember(t *testing.T) {
	c := startCluster(t)
	const topic, group, partitions = "mixed", "mixed-group", 6
	createTopic(t, c, topic, partitions)
	ours := newConsumer(t, groupConfig(c, group, topic))
	pollInBackground(t, ours)
	var mu sync.Mutex
	theirs := map[int32]bool{}
	cl := c.Client(kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic), kgo.Balancers(kgo.RangeBalancer()),
		kgo.HeartbeatInterval(100*time.Millisecond),
		kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, a map[string][]int32) {
			mu.Lock()
			defer mu.Unlock()
			for _, p := range a[topic] {
				theirs[p] = true
			}
		}),
		kgo.OnPartitionsRevoked(func(_ context.Context, _ *kgo.Client, r map[string][]int32) {
			mu.Lock()
			defer mu.Unlock()
			for _, p := range r[topic] {
				delete(theirs, p)
			}
		}))
	go func() {
		for !cl.PollFetches(context.Background()).IsClientClosed() {
		}
	}()
	wait.For(t, 20*time.Second, "the split", func() bool {
		mu.Lock()
		defer mu.Unlock()
		mine := ours.Assignment()[topic]
		if len(mine) != 3 || len(theirs) != 3 {
			return false
		}
		for _, p := range mine {
			if theirs[p] {
				return false
			}
		}
		return true
	})
	// DescribeGroups shows both members with the assignments each holds.
	groups, err := kadm.NewClient(c.Client()).DescribeGroups(context.Background(), group)
	if err != nil {
		t.Fatal(err)
	}
	g := groups[group]
	if g.State != "Stable" || g.Protocol != "range" || g.ProtocolType != "consumer" || len(g.Members) != 2 {
		t.Fatalf("described group: state %s protocol %s/%s, %d members", g.State, g.ProtocolType, g.Protocol, len(g.Members))
	}
	for _, m := range g.Members {
		assigned, ok := m.Assigned.AsConsumer()
		if !ok || len(assigned.Topics) != 1 || len(assigned.Topics[0].Partitions) != 3 {
			t.Errorf("member %s assignment %+v", m.MemberID, m.Assigned)
		}
	}
}

// TestCoordinatorFencedCommit: a member that stopped heartbeating is
// removed; its commit then fails as Kafka's does.
func TestCoordinatorFencedCommit(t *testing.T) {
	c := startCluster(t)
	const topic, group = "fenced", "fenced-group"
	createTopic(t, c, topic, 1)
	produce(t, c, topic, 1, 0, 3)
	cfg := groupConfig(c, group, topic)
	cfg.DisableAutoCommit = true
	cfg.SessionTimeout = 600 * time.Millisecond
	cfg.HeartbeatInterval = time.Hour // never heartbeat
	cons := newConsumer(t, cfg)
	pollN(t, cons, 3)
	// A commit counts as a heartbeat: wait for the eviction without one.
	adm := kadm.NewClient(c.Client())
	wait.For(t, 10*time.Second, "the member's eviction", func() bool {
		groups, err := adm.DescribeGroups(context.Background(), group)
		return err == nil && groups[group].State == "Empty"
	})
	err := cons.Commit(context.Background())
	if !errors.Is(err, kerr.UnknownMemberID) || !strings.Contains(err.Error(), "The coordinator is not aware of this member") {
		t.Fatalf("commit after fencing: %v", err)
	}
}

// deliveriesDuringRebalance counts deliveries of kept partitions between a
// rebalance's start and its end.
func deliveriesDuringRebalance(rec *recorder, topic string, kept []int32) int {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	n, in := 0, false
	for _, ev := range rec.events {
		switch ev.Type {
		case EventRebalanceStarted:
			in = true
		case EventRebalanceDone, EventRebalanceFailed:
			in = false
		case EventRecordsDelivered:
			if !in {
				continue
			}
			for _, p := range ev.Partitions[topic] {
				if slices.Contains(kept, p) {
					n++
					break
				}
			}
		}
	}
	return n
}

// produceInBackground writes a record to every partition every 10 ms until
// the test ends.
func produceInBackground(t *testing.T, c *testcluster.Cluster, topic string, partitions int32) {
	cl := c.Client(kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(0))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			for p := range partitions {
				cl.Produce(ctx, &kgo.Record{Topic: topic, Partition: p, Value: []byte("x")}, nil)
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
}

// TestCoordinatorLeaderSeesNewPartitions: partitions added to a topic reach
// the group through the leader's metadata check and a rebalance.
func TestCoordinatorLeaderSeesNewPartitions(t *testing.T) {
	c := startCluster(t)
	const topic, group = "growing", "growing-group"
	createTopic(t, c, topic, 2)
	cfg := groupConfig(c, group, topic)
	cfg.MetadataMaxAge = 100 * time.Millisecond
	leader := newConsumer(t, cfg)
	pollInBackground(t, leader)
	cfg.MetadataMaxAge = 0
	other := newConsumer(t, cfg)
	pollInBackground(t, other)
	balanced(t, topic, 2, leader, other)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := kadm.NewClient(c.Client()).CreatePartitions(ctx, 2, topic); err != nil {
		t.Fatal(err)
	}
	balanced(t, topic, 4, leader, other)
}

// TestCoordinatorFencedInstance: a second consumer with the same
// group.instance.id takes the place over; the first stops rather than
// fencing the newcomer back, and its next Poll drops its partitions as lost
// and returns FENCED_INSTANCE_ID.
func TestCoordinatorFencedInstance(t *testing.T) {
	c := startCluster(t)
	const topic, group = "twins", "twins-group"
	createTopic(t, c, topic, 2)
	cfg := groupConfig(c, group, topic)
	cfg.GroupInstanceID = "twin"
	var rec recorder
	cfg1 := cfg
	cfg1.OnEvent = rec.add
	first := newConsumer(t, cfg1)
	balanced(t, topic, 2, first)
	second := newConsumer(t, cfg)
	wait.For(t, 10*time.Second, "the first twin to be fenced", func() bool {
		for _, ev := range rec.of(EventRebalanceFailed) {
			if errors.Is(ev.Err, kerr.FencedInstanceID) {
				return true
			}
		}
		return false
	})
	if _, err := first.Poll(context.Background()); !errors.Is(err, kerr.FencedInstanceID) {
		t.Errorf("Poll of the fenced twin: %v, want FENCED_INSTANCE_ID", err)
	}
	if len(rec.of(EventPartitionsLost)) != 1 || len(first.Assignment()) != 0 {
		t.Errorf("fenced twin still owns %v", first.Assignment())
	}
	if got := second.Assignment()[topic]; len(got) != 2 {
		t.Errorf("new twin owns %v", got)
	}
}

// kill stops a consumer the way kill -9 would: its goroutines and
// connections end, and nobody tells the coordinator.
func kill(c *Consumer) {
	c.mu.Lock()
	c.closed = true
	c.notifyLocked()
	c.mu.Unlock()
	c.cancel()
	c.wg.Wait()
	if g, ok := c.group.(*coordinatorGroup); ok {
		g.closeConns()
	}
	c.cluster.close()
}

// TestCoordinatorNetworkCut: a member cut off for less than the session
// timeout comes back with no rebalance; cut off for longer, it is removed,
// loses its partitions and joins again.
func TestCoordinatorNetworkCut(t *testing.T) {
	c := startCluster(t)
	const topic, group, partitions = "blip", "blip-group", 4
	createTopic(t, c, topic, partitions)
	cfg := groupConfig(c, group, topic)
	cfg.SessionTimeout = 2 * time.Second
	a := newConsumer(t, cfg)
	pollInBackground(t, a)
	var rec recorder
	cfgB := cfg
	cfgB.OnEvent = rec.add
	b := newConsumer(t, cfgB)
	pollInBackground(t, b)
	balanced(t, topic, partitions, a, b)
	rebalances := a.Stats().Rebalances

	beats := b.Stats().HeartbeatRequests
	b.CutNetwork(cfg.SessionTimeout / 2)
	wait.For(t, 10*time.Second, "heartbeats after the short cut", func() bool {
		return b.Stats().HeartbeatRequests >= beats+5
	})
	if got := a.Stats().Rebalances; got != rebalances || len(rec.of(EventPartitionsLost)) != 0 {
		t.Errorf("a cut shorter than the session timeout: %d rebalances, %d losses; want none", got-rebalances, len(rec.of(EventPartitionsLost)))
	}

	b.CutNetwork(cfg.SessionTimeout + time.Second)
	wait.For(t, 20*time.Second, "the cut member to lose its partitions", func() bool {
		return len(rec.of(EventPartitionsLost)) == 1
	})
	balanced(t, topic, partitions, a, b)
	if a.Stats().Rebalances == rebalances {
		t.Error("a cut longer than the session timeout caused no rebalance")
	}
}
