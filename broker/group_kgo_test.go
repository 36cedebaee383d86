package broker_test

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/zkafka/zkafka/internal/testcluster"
)

// groupProps make groups quick to test: no initial rebalance delay, few
// offsets partitions.
var groupProps = map[string]string{
	"group.initial.rebalance.delay.ms": "0",
	"offsets.topic.num.partitions":     "5",
}

// consumed records every record any member polled, by topic-partition and
// offset.
type consumed struct {
	mu   sync.Mutex
	seen map[string]map[int64]bool
}

func (c *consumed) add(r *kgo.Record) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := fmt.Sprintf("%s-%d", r.Topic, r.Partition)
	if c.seen[k] == nil {
		c.seen[k] = map[int64]bool{}
	}
	c.seen[k][r.Offset] = true
}

// missing counts the offsets below want[partition] nobody consumed.
func (c *consumed) missing(topic string, want map[int32]int64) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for p, end := range want {
		for o := range end {
			if !c.seen[fmt.Sprintf("%s-%d", topic, p)][o] {
				n++
			}
		}
	}
	return n
}

// groupMember is one kgo group consumer polling in its own goroutine; it
// tracks the partitions it owns through the rebalance callbacks.
type groupMember struct {
	name   string
	cl     *kgo.Client
	cancel context.CancelFunc
	done   chan struct{}

	mu    sync.Mutex
	owned map[int32]bool
}

func startMember(t *testing.T, c *testcluster.Cluster, name, group, topic string, seen *consumed, opts ...kgo.Opt) *groupMember {
	t.Helper()
	m := &groupMember{name: name, done: make(chan struct{}), owned: map[int32]bool{}}
	update := func(ps map[string][]int32, own bool) {
		m.mu.Lock()
		defer m.mu.Unlock()
		for _, p := range ps[topic] {
			if own {
				m.owned[p] = true
			} else {
				delete(m.owned, p)
			}
		}
	}
	base := []kgo.Opt{
		kgo.SeedBrokers(c.BootstrapAddrs()...),
		kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.AutoCommitInterval(100 * time.Millisecond),
		kgo.HeartbeatInterval(200 * time.Millisecond),
		kgo.SessionTimeout(6 * time.Second),
		kgo.ClientID(name),
		kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, ps map[string][]int32) { update(ps, true) }),
		kgo.OnPartitionsRevoked(func(_ context.Context, _ *kgo.Client, ps map[string][]int32) { update(ps, false) }),
		kgo.OnPartitionsLost(func(_ context.Context, _ *kgo.Client, ps map[string][]int32) { update(ps, false) }),
	}
	cl, err := kgo.NewClient(append(base, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	m.cl = cl
	ctx, cancel := context.WithCancel(context.Background())
	m.cancel = cancel
	go func() {
		defer close(m.done)
		for {
			fs := cl.PollFetches(ctx)
			if ctx.Err() != nil {
				return
			}
			fs.EachRecord(seen.add)
		}
	}()
	t.Cleanup(m.stop)
	return m
}

// stop leaves the group: the final autocommit, then LeaveGroup.
func (m *groupMember) stop() {
	select {
	case <-m.done:
		return
	default:
	}
	m.cancel()
	<-m.done
	m.cl.Close()
}

func (m *groupMember) partitions() []int32 {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []int32
	for p := range m.owned {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// owner is a group member as the tests see it: the partitions it owns.
type owner interface{ partitions() []int32 }

// waitExactlyOneOwner waits until the live members own every partition
// exactly once between them, each member at least one when there are
// enough partitions.
func waitExactlyOneOwner(t *testing.T, c *testcluster.Cluster, partitions int32, members ...owner) {
	t.Helper()
	c.WaitFor(fmt.Sprintf("each of %d partitions owned by exactly one of %d members", partitions, len(members)), func() bool {
		owners := map[int32]int{}
		for _, m := range members {
			ps := m.partitions()
			if len(ps) == 0 && int(partitions) >= len(members) {
				return false
			}
			for _, p := range ps {
				owners[p]++
			}
		}
		for p := range partitions {
			if owners[p] != 1 {
				return false
			}
		}
		return len(owners) == int(partitions)
	})
}

func endOffsets(t *testing.T, adm *kadm.Client, topic string) map[int32]int64 {
	t.Helper()
	ends, err := adm.ListEndOffsets(ctxT(t, 10*time.Second), topic)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) { out[o.Partition] = o.Offset })
	return out
}

// testGroupRebalances runs members joining and leaving a group with one
// balancer: after each change every partition has one owner, no record is
// skipped, and the committed offsets reach the end of every partition.
func testGroupRebalances(t *testing.T, balancer kgo.GroupBalancer) {
	c := testcluster.Start(t, testcluster.Options{Properties: groupProps})
	const topic, partitions = "orders", 6
	adm := kadm.NewClient(c.Client())
	if _, err := adm.CreateTopic(ctxT(t, 20*time.Second), partitions, 1, nil, topic); err != nil {
		t.Fatal(err)
	}
	for p := range int32(partitions) {
		c.WaitForLeader(topic, p)
	}
	producer := c.Client(kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	produce := func(n int) {
		for i := range n {
			if err := producer.ProduceSync(ctxT(t, 10*time.Second), kgo.StringRecord(fmt.Sprint(i))).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	seen := &consumed{seen: map[string]map[int64]bool{}}
	group := "rebalance-" + balancer.ProtocolName()
	opt := kgo.Balancers(balancer)

	produce(60)
	a := startMember(t, c, "a", group, topic, seen, opt)
	waitExactlyOneOwner(t, c, partitions, a)
	b := startMember(t, c, "b", group, topic, seen, opt)
	waitExactlyOneOwner(t, c, partitions, a, b)
	produce(60)
	d := startMember(t, c, "d", group, topic, seen, opt)
	waitExactlyOneOwner(t, c, partitions, a, b, d)
	produce(60)
	a.stop()
	waitExactlyOneOwner(t, c, partitions, b, d)
	produce(60)

	want := endOffsets(t, adm, topic)
	c.WaitFor("every record consumed", func() bool { return seen.missing(topic, want) == 0 })
	c.WaitFor("committed offsets at the end of every partition", func() bool {
		offs, err := adm.FetchOffsets(ctxT(t, 10*time.Second), group)
		if err != nil {
			return false
		}
		for p, end := range want {
			o, ok := offs.Lookup(topic, p)
			if !ok || o.At != end {
				return false
			}
		}
		return true
	})
	b.stop()
	d.stop()
	c.WaitFor("the group to be Empty", func() bool {
		described, err := adm.DescribeGroups(ctxT(t, 10*time.Second), group)
		return err == nil && described[group].State == "Empty"
	})
}

func TestGroupKgoEagerRange(t *testing.T) { testGroupRebalances(t, kgo.RangeBalancer()) }

func TestGroupKgoCooperativeSticky(t *testing.T) {
	testGroupRebalances(t, kgo.CooperativeStickyBalancer())
}

func TestGroupKgoRoundRobin(t *testing.T) { testGroupRebalances(t, kgo.RoundRobinBalancer()) }

func TestGroupKgoSticky(t *testing.T) { testGroupRebalances(t, kgo.StickyBalancer()) }
