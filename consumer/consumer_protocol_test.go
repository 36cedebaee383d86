package consumer

import (
	"context"
	"errors"
	"fmt"
	"maps"
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
	"github.com/zkafka/zkafka/kafka"
)

// startConsumerProtocolCluster starts one broker serving KIP-848's consumer
// protocol with short sessions and heartbeats.
func startConsumerProtocolCluster(t *testing.T) *testcluster.Cluster {
	t.Helper()
	return testcluster.Start(t, testcluster.Options{Properties: map[string]string{
		"group.initial.rebalance.delay.ms":         "0",
		"group.coordinator.rebalance.protocols":    "classic,consumer",
		"group.consumer.min.session.timeout.ms":    "1000",
		"group.consumer.session.timeout.ms":        "3000",
		"group.consumer.min.heartbeat.interval.ms": "100",
		"group.consumer.heartbeat.interval.ms":     "100",
	}})
}

func consumerProtocolConfig(c *testcluster.Cluster, group string, topics ...string) Config {
	return Config{
		GroupID: group, Topics: topics, BootstrapServers: c.BootstrapAddrs(), GroupProtocol: "consumer",
		AutoOffsetReset: "earliest", RebalanceTimeout: 10 * time.Second,
	}
}

// ownership follows, from the events of every member in the order they
// happen, which member owns each partition, and records any moment a
// partition had two owners.
type ownership struct {
	mu       sync.Mutex
	owner    map[kafka.TopicPartition]string
	twice    []string
	revoked  map[string][]kafka.TopicPartition
	assigned map[string][]kafka.TopicPartition
}

func newOwnership() *ownership {
	return &ownership{owner: map[kafka.TopicPartition]string{}, revoked: map[string][]kafka.TopicPartition{},
		assigned: map[string][]kafka.TopicPartition{}}
}

// member returns an OnEvent for the member named name.
func (o *ownership) member(name string) func(Event) {
	return func(ev Event) {
		o.mu.Lock()
		defer o.mu.Unlock()
		for topic, ps := range ev.Partitions {
			for _, p := range ps {
				tp := kafka.TopicPartition{Topic: topic, Partition: p}
				switch ev.Type {
				case EventPartitionsAssigned:
					if prev, ok := o.owner[tp]; ok {
						o.twice = append(o.twice, fmt.Sprintf("%s to %s while %s owned it", tp, name, prev))
					}
					o.owner[tp] = name
					o.assigned[name] = append(o.assigned[name], tp)
				case EventPartitionsRevoked, EventPartitionsLost:
					if o.owner[tp] == name {
						delete(o.owner, tp)
					}
					o.revoked[name] = append(o.revoked[name], tp)
				}
			}
		}
	}
}

// consumeAll polls c in the background, keeping every record by value,
// until the test ends or c is closed.
func consumeAll(t *testing.T, c *Consumer, seen *sync.Map) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			recs, err := c.Poll(ctx)
			if errors.Is(err, ErrClosed) {
				return
			}
			for _, r := range recs {
				seen.Store(string(r.Value), true)
			}
			cctx, ccancel := context.WithTimeout(ctx, 5*time.Second)
			_ = c.Commit(cctx)
			ccancel()
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
}

func count(m *sync.Map) int {
	n := 0
	m.Range(func(any, any) bool { n++; return true })
	return n
}

// TestConsumerProtocolScaleOut grows a consumer-protocol group 1→3 and
// shrinks it back: the first member never pauses, revokes exactly the
// partitions that move and keeps fetching the rest; no partition ever has
// two owners; every record is read; the commits read back.
func TestConsumerProtocolScaleOut(t *testing.T) {
	c := startConsumerProtocolCluster(t)
	const topic, group, partitions = "kip848", "kip848-group", 6
	createTopic(t, c, topic, partitions)
	produce(t, c, topic, partitions, 0, 50)
	own := newOwnership()
	var rec recorder
	var seen sync.Map
	cfg := consumerProtocolConfig(c, group, topic)
	cfg1 := cfg
	cfg1.OnEvent = func(ev Event) { rec.add(ev); own.member("first")(ev) }
	first := newConsumer(t, cfg1)
	consumeAll(t, first, &seen)
	balanced(t, topic, partitions, first)
	before := first.Assignment()[topic]

	var others []*Consumer
	for _, name := range []string{"second", "third"} {
		cfgN := cfg
		cfgN.OnEvent = own.member(name)
		m := newConsumer(t, cfgN)
		consumeAll(t, m, &seen)
		others = append(others, m)
		balanced(t, topic, partitions, append([]*Consumer{first}, others...)...)
	}
	kept := first.Assignment()[topic]
	if len(rec.of(EventFetchingPaused)) > 0 {
		t.Errorf("the first member paused fetching: %v", rec.of(EventFetchingPaused))
	}
	own.mu.Lock()
	revoked := own.revoked["first"]
	twice := slices.Clone(own.twice)
	own.mu.Unlock()
	var moved []int32
	for _, p := range before {
		if !slices.Contains(kept, p) {
			moved = append(moved, p)
		}
	}
	var revokedPs []int32
	for _, tp := range revoked {
		revokedPs = append(revokedPs, tp.Partition)
	}
	slices.Sort(revokedPs)
	if !slices.Equal(revokedPs, moved) {
		t.Errorf("the first member revoked %v; the partitions that moved away from %v (kept %v) are %v", revokedPs, before, kept, moved)
	}
	if len(twice) > 0 {
		t.Errorf("partitions owned twice: %v", twice)
	}
	for _, j := range rec.of(EventJoined) {
		if j.Generation <= 0 {
			t.Errorf("joined with member epoch %d", j.Generation)
		}
	}

	produce(t, c, topic, partitions, 50, 50)
	wait.For(t, 20*time.Second, "every record read", func() bool { return count(&seen) == partitions*100 })
	for _, m := range others {
		if err := m.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	balanced(t, topic, partitions, first)
	if err := first.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(own.twice) > 0 {
		t.Errorf("partitions owned twice: %v", own.twice)
	}
	adm := kadm.NewClient(c.Client())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	offsets, err := adm.FetchOffsets(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	for p := range int32(partitions) {
		o, ok := offsets.Lookup(topic, p)
		if !ok || o.At != 100 {
			t.Errorf("committed offset of %s-%d = %+v, want 100", topic, p, o)
		}
	}
}

// TestConsumerProtocolFencing: a member cut off for longer than the
// session timeout is fenced: its partitions go to the other member, it drops
// them as lost at its next Poll, joins again with a new epoch and gets its
// share back, and no record is skipped.
func TestConsumerProtocolFencing(t *testing.T) {
	c := startConsumerProtocolCluster(t)
	const topic, group, partitions = "fence", "fence-group", 4
	createTopic(t, c, topic, partitions)
	produceInBackground(t, c, topic, partitions)
	own := newOwnership()
	var rec recorder
	var seen sync.Map
	cfg := consumerProtocolConfig(c, group, topic)
	cfgA := cfg
	cfgA.OnEvent = own.member("a")
	a := newConsumer(t, cfgA)
	consumeAll(t, a, &seen)
	cfgB := cfg
	cfgB.OnEvent = func(ev Event) { rec.add(ev); own.member("b")(ev) }
	b := newConsumer(t, cfgB)
	consumeAll(t, b, &seen)
	balanced(t, topic, partitions, a, b)
	epochBefore := rec.of(EventJoined)[len(rec.of(EventJoined))-1].Generation

	b.CutNetwork(6 * time.Second) // twice the broker's 3 s session timeout
	wait.For(t, 20*time.Second, "b to lose its partitions", func() bool { return len(rec.of(EventPartitionsLost)) > 0 })
	balanced(t, topic, partitions, a, b)
	joins := rec.of(EventJoined)
	if last := joins[len(joins)-1].Generation; last <= epochBefore {
		t.Errorf("b rejoined with member epoch %d, not above %d", last, epochBefore)
	}
	// The coordinator gave b's partitions to a once b's session expired,
	// while b, cut off, still counted them as its own: exactly those are
	// what b dropped as lost.
	own.mu.Lock()
	defer own.mu.Unlock()
	var lost []string
	for _, ev := range rec.of(EventPartitionsLost) {
		for _, p := range ev.Partitions[topic] {
			lost = append(lost, kafka.TopicPartition{Topic: topic, Partition: p}.String())
		}
	}
	var twice []string
	for _, s := range own.twice {
		twice = append(twice, strings.Fields(s)[0])
	}
	slices.Sort(lost)
	slices.Sort(twice)
	if !slices.Equal(lost, twice) {
		t.Errorf("b lost %v; the partitions a got while b still held them: %v", lost, own.twice)
	}
}

// TestConsumerProtocolPollTimeout: a member that does not poll within
// max.poll.interval.ms leaves; its commit is then refused with
// UNKNOWN_MEMBER_ID, and its next Poll drops the partitions as lost and
// joins again.
func TestConsumerProtocolPollTimeout(t *testing.T) {
	c := startConsumerProtocolCluster(t)
	const topic, group, partitions = "slow", "slow-group", 2
	createTopic(t, c, topic, partitions)
	produce(t, c, topic, partitions, 0, 10)
	var rec recorder
	cfg := consumerProtocolConfig(c, group, topic)
	cfg.RebalanceTimeout, cfg.DisableAutoCommit, cfg.OnEvent = 1500*time.Millisecond, true, rec.add
	slow := newConsumer(t, cfg)
	pollN(t, slow, 5)
	member := slow.MemberID()
	adm := kadm.NewClient(c.Client())
	wait.For(t, 20*time.Second, "the member to leave", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		described, err := adm.DescribeConsumerGroups(ctx, group)
		if err != nil {
			return false
		}
		g := described[group]
		return g.Err == nil && len(g.Members) == 0 || errors.Is(g.Err, kerr.GroupIDNotFound)
	})
	err := slow.Commit(context.Background())
	if !errors.Is(err, kerr.UnknownMemberID) {
		t.Fatalf("commit after leaving: %v, want UNKNOWN_MEMBER_ID", err)
	}
	if len(rec.of(EventFetchingPaused)) != 1 {
		t.Errorf("fetching paused %d times after leaving, want once", len(rec.of(EventFetchingPaused)))
	}
	pollN(t, slow, 1)
	if len(rec.of(EventPartitionsLost)) == 0 || len(rec.of(EventFetchingResumed)) != 1 {
		t.Errorf("after leaving: %d partitions-lost events, fetching resumed %d times; want some, and once", len(rec.of(EventPartitionsLost)), len(rec.of(EventFetchingResumed)))
	}
	if slow.MemberID() != member {
		t.Errorf("member id changed from %s to %s; a member keeps its id", member, slow.MemberID())
	}
	wait.For(t, 20*time.Second, "the member to own its partitions again", func() bool {
		return len(slow.Assignment()[topic]) == partitions
	})
}

// TestConsumerProtocolStaticMember: a static member closed and started again
// within the session timeout gets its partitions back and the other member
// neither revokes nor gains anything.
func TestConsumerProtocolStaticMember(t *testing.T) {
	c := startConsumerProtocolCluster(t)
	const topic, group, partitions = "static", "static-group", 4
	createTopic(t, c, topic, partitions)
	own := newOwnership()
	cfg := consumerProtocolConfig(c, group, topic)
	cfgA := cfg
	cfgA.GroupInstanceID, cfgA.OnEvent = "a", own.member("a")
	a := newConsumer(t, cfgA)
	pollInBackground(t, a)
	cfgB := cfg
	cfgB.GroupInstanceID, cfgB.OnEvent = "b", own.member("b")
	b := newConsumer(t, cfgB)
	pollInBackground(t, b)
	balanced(t, topic, partitions, a, b)
	aHas, bHad := a.Assignment()[topic], b.Assignment()[topic]
	own.mu.Lock()
	aEvents := len(own.assigned["a"]) + len(own.revoked["a"])
	own.mu.Unlock()
	if err := b.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	b2 := newConsumer(t, cfgB)
	pollInBackground(t, b2)
	balanced(t, topic, partitions, a, b2)
	if got := b2.Assignment()[topic]; !slices.Equal(got, bHad) {
		t.Errorf("the restarted static member got %v, had %v", got, bHad)
	}
	own.mu.Lock()
	defer own.mu.Unlock()
	if got := len(own.assigned["a"]) + len(own.revoked["a"]); got != aEvents || !slices.Equal(a.Assignment()[topic], aHas) {
		t.Errorf("the other member's partitions moved during a static restart: %v → %v", aHas, a.Assignment()[topic])
	}
}

// TestConsumerProtocolWithKgo: a zkafka member and a franz-go member share
// one consumer-protocol group: they split the partitions, nothing is owned
// twice and every record is read once.
func TestConsumerProtocolWithKgo(t *testing.T) {
	c := startConsumerProtocolCluster(t)
	const topic, group, partitions = "mixed", "mixed-group", 6
	createTopic(t, c, topic, partitions)
	produce(t, c, topic, partitions, 0, 100)
	var seen sync.Map
	ours := newConsumer(t, consumerProtocolConfig(c, group, topic))
	consumeAll(t, ours, &seen)
	balanced(t, topic, partitions, ours)

	var kgoOwned sync.Map
	theirs := c.Client(kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic), kgo.ServerSideBalancer(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, m map[string][]int32) {
			for _, p := range m[topic] {
				kgoOwned.Store(p, true)
			}
		}),
		kgo.OnPartitionsRevoked(func(_ context.Context, _ *kgo.Client, m map[string][]int32) {
			for _, p := range m[topic] {
				kgoOwned.Delete(p)
			}
		}))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	var dup []string
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			theirs.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
				if _, loaded := seen.LoadOrStore(string(r.Value), true); loaded {
					dup = append(dup, string(r.Value))
				}
			})
			_ = theirs.CommitUncommittedOffsets(ctx)
		}
	}()
	t.Cleanup(func() { cancel(); <-done; theirs.Close() })
	wait.For(t, 20*time.Second, "the two members to split the topic", func() bool {
		mine := ours.Assignment()[topic]
		n := 0
		overlap := false
		kgoOwned.Range(func(p, _ any) bool {
			n++
			overlap = overlap || slices.Contains(mine, p.(int32))
			return true
		})
		return !overlap && n == partitions/2 && len(mine) == partitions/2
	})
	produce(t, c, topic, partitions, 100, 100)
	wait.For(t, 20*time.Second, "every record read", func() bool { return count(&seen) == partitions*200 })
	cancel()
	<-done
	if len(dup) > 0 {
		// Only records the zkafka member read before the kgo member joined
		// and had not committed yet may be read twice.
		for _, v := range dup {
			var p, i int
			fmt.Sscanf(v, "%d-%d", &p, &i)
			if i >= 100 {
				t.Errorf("record %s read twice after the group settled", v)
			}
		}
	}
}

// TestConsumerProtocolRegex: a whitelist becomes the subscription's regex,
// which the coordinator resolves, topics created later included.
func TestConsumerProtocolRegex(t *testing.T) {
	c := startConsumerProtocolCluster(t)
	createTopic(t, c, "rx-a", 2)
	createTopic(t, c, "other", 2)
	cfg := consumerProtocolConfig(c, "rx-group")
	cfg.Topics, cfg.Whitelist = nil, "rx-.*"
	m := newConsumer(t, cfg)
	pollInBackground(t, m)
	wait.For(t, 20*time.Second, "rx-a assigned", func() bool { return len(m.Assignment()["rx-a"]) == 2 })
	createTopic(t, c, "rx-b", 3)
	wait.For(t, 20*time.Second, "rx-b assigned too", func() bool { return len(m.Assignment()["rx-b"]) == 3 })
	if got := slices.Sorted(maps.Keys(m.Assignment())); !slices.Equal(got, []string{"rx-a", "rx-b"}) {
		t.Errorf("assigned topics %v, want rx-a and rx-b", got)
	}
}

// TestConsumerProtocolConfig: group.protocol's rules, checked before any
// connection, and a cluster that does not serve the protocol.
func TestConsumerProtocolConfig(t *testing.T) {
	base := Config{GroupID: "g", Topics: []string{"t"}, BootstrapServers: []string{"127.0.0.1:1"}, GroupProtocol: "consumer"}
	for _, tc := range []struct {
		name string
		edit func(*Config)
	}{
		{"unknown protocol", func(c *Config) { c.GroupProtocol = "eager" }},
		{"assignment strategy", func(c *Config) { c.PartitionAssignmentStrategy = []string{"range"} }},
		{"session timeout", func(c *Config) { c.SessionTimeout = time.Second }},
		{"heartbeat interval", func(c *Config) { c.HeartbeatInterval = time.Second }},
		{"zookeeper", func(c *Config) { c.BootstrapServers, c.ZooKeeperConnect = nil, "127.0.0.1:2181" }},
		{"remote assignor with classic", func(c *Config) { c.GroupProtocol, c.GroupRemoteAssignor = "classic", "uniform" }},
		{"blacklist", func(c *Config) { c.Topics, c.Blacklist = nil, "x" }},
		{"whitelist with classic", func(c *Config) { c.Topics, c.Whitelist, c.GroupProtocol = nil, "x", "classic" }},
	} {
		cfg := base
		tc.edit(&cfg)
		if _, err := New(context.Background(), cfg); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%s: %v, want ErrInvalidConfig", tc.name, err)
		}
	}
	cfg, err := ConfigFromProperties(map[string]string{"group.id": "g", "bootstrap.servers": "h:1",
		"group.protocol": "CONSUMER", "group.remote.assignor": "range"})
	cfg.Topics = []string{"t"}
	if err != nil || cfg.validate() != nil || !cfg.consumerProtocol() || cfg.GroupRemoteAssignor != "range" {
		t.Errorf("properties: %+v %v", cfg, err)
	}

	classic := startCluster(t) // group.coordinator.rebalance.protocols=classic
	createTopic(t, classic, "t", 1)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = New(ctx, consumerProtocolConfig(classic, "g", "t"))
	if !errors.Is(err, ErrConsumerProtocolUnsupported) || !errors.Is(err, kerr.UnsupportedVersion) {
		t.Errorf("a classic-only cluster: %v, want UNSUPPORTED_VERSION", err)
	}
}

// TestConsumerProtocolStaleEpochCommit: a commit sent at an epoch the member
// has since left (a heartbeat answered while it was on its way) is refused
// with STALE_MEMBER_EPOCH and sent again at the member's epoch.
func TestConsumerProtocolStaleEpochCommit(t *testing.T) {
	c := startConsumerProtocolCluster(t)
	const topic, group = "stale", "stale-group"
	createTopic(t, c, topic, 2)
	produce(t, c, topic, 2, 0, 10)
	cfg := consumerProtocolConfig(c, group, topic)
	cfg.DisableAutoCommit = true
	m := newConsumer(t, cfg)
	pollN(t, m, 20)
	g := m.group.(*consumerProtocolGroup)
	g.mu.Lock()
	epoch := g.epoch
	g.mu.Unlock()
	offsets := map[kafka.TopicPartition]int64{{Topic: topic, Partition: 0}: 10, {Topic: topic, Partition: 1}: 10}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := g.commitOffsets(ctx, m.MemberID(), epoch-1, nil, offsets, commitVersion); !errors.Is(err, kerr.StaleMemberEpoch) {
		t.Fatalf("a commit at epoch %d, the member being at %d: %v, want STALE_MEMBER_EPOCH", epoch-1, epoch, err)
	}
	if err := g.commitAt(ctx, epoch-1, offsets); err != nil {
		t.Fatalf("commit at a stale epoch, sent again: %v", err)
	}
	fetched, err := kadm.NewClient(c.Client()).FetchOffsets(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := fetched.Lookup(topic, 1); o.At != 10 {
		t.Errorf("committed offset %d, want 10", o.At)
	}
}

// TestConsumerProtocolFatalAndLeave: once the group refuses the member for
// good, Poll drops the partitions as lost and returns the error; and Close
// leaves the group even while the member has no connection to the
// coordinator (its heartbeat loop was finding it again).
func TestConsumerProtocolFatalAndLeave(t *testing.T) {
	c := startConsumerProtocolCluster(t)
	const topic = "fatal"
	createTopic(t, c, topic, 2)
	produce(t, c, topic, 2, 0, 5)
	adm := kadm.NewClient(c.Client())
	members := func(group string) int {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		described, err := adm.DescribeConsumerGroups(ctx, group)
		if err != nil {
			return -1
		}
		return len(described[group].Members)
	}

	var rec recorder
	cfg := consumerProtocolConfig(c, "fatal-group", topic)
	cfg.OnEvent = rec.add
	m := newConsumer(t, cfg)
	pollN(t, m, 10)
	g := m.group.(*consumerProtocolGroup)
	g.mu.Lock()
	g.fatal = fmt.Errorf("consumer group heartbeat: %w", kerr.GroupAuthorizationFailed)
	g.mu.Unlock()
	if _, err := m.Poll(context.Background()); !errors.Is(err, kerr.GroupAuthorizationFailed) {
		t.Errorf("Poll after a fatal refusal: %v, want GROUP_AUTHORIZATION_FAILED", err)
	}
	if len(m.Assignment()) != 0 || len(rec.of(EventPartitionsLost)) != 1 {
		t.Errorf("after a fatal refusal: own %v, %d partitions-lost events; want nothing and one", m.Assignment(), len(rec.of(EventPartitionsLost)))
	}

	lcfg := consumerProtocolConfig(c, "leave-group", topic)
	lcfg.DisableAutoCommit = true // a commit needs the coordinator's address, gone here
	l := newConsumer(t, lcfg)
	pollN(t, l, 10)
	l.group.(*consumerProtocolGroup).closeConns()
	if err := l.Close(context.Background()); err != nil {
		t.Fatalf("close without a coordinator connection: %v", err)
	}
	// Well before the 3 s session timeout would remove it.
	if n := members("leave-group"); n != 0 {
		t.Errorf("%d members after the only one closed, want 0", n)
	}
}
