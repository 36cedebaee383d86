package consumer

import (
	"context"
	"errors"
	"maps"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/kafka"
	"github.com/zkafka/zkafka/wire"
)

// An assignment naming a topic id Metadata does not know yet: the partitions
// of the named topics go to Poll at once, which revokes what the assignment
// dropped while the rebalance stays open; the rest go once the id is named;
// no target is handed twice.
func TestConsumerProtocolReconcilesNamedTopicsFirst(t *testing.T) {
	cfg := Config{DisableAutoCommit: true} // no coordinator here to commit to
	c := &Consumer{cfg: cfg, log: zap.NewNop(), assigned: map[kafka.TopicPartition]int64{}, committed: map[kafka.TopicPartition]int64{}, changed: make(chan struct{})}
	noBrokers := func(context.Context) ([]string, error) { return nil, errors.New("no brokers in this test") }
	c.cluster = newCluster("test", wire.Security{}, &c.stats, noBrokers, zap.NewNop())
	g := newConsumerProtocolGroup(c)
	c.group = g

	named, unnamed := [16]byte{1}, [16]byte{2}
	kept, dropped := kafka.TopicPartition{Topic: "named", Partition: 0}, kafka.TopicPartition{Topic: "dropped", Partition: 0}
	c.cluster.topicNames[named], c.cluster.topicIDs["named"] = "named", named
	c.assigned[kept], c.assigned[dropped] = 3, 7
	assignment := &kmsg.ConsumerGroupHeartbeatResponseAssignment{Topics: []kmsg.ConsumerGroupHeartbeatResponseAssignmentTopic{
		{TopicID: named, Partitions: []int32{0}},
		{TopicID: unnamed, Partitions: []int32{0}},
	}}
	g.pending = assignment

	target := func() map[kafka.TopicPartition]bool {
		g.mu.Lock()
		defer g.mu.Unlock()
		return g.target
	}
	g.resolvePending(t.Context())
	if got, want := target(), map[kafka.TopicPartition]bool{kept: true}; !maps.Equal(got, want) {
		t.Fatalf("with one topic id unnamed, Poll was handed %v, want the named topic's partitions %v", got, want)
	}
	if err := g.poll(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := c.owned(); len(got) != 1 || got[0] != kept {
		t.Errorf("after Poll the member owns %v, want only %v (%v revoked)", got, kept, dropped)
	}
	g.mu.Lock()
	rebalancing, waiting := g.rebalancing, g.pending == assignment
	g.mu.Unlock()
	if !rebalancing || !waiting {
		t.Errorf("after the partial reconciliation: rebalancing %v, assignment waiting %v; want both", rebalancing, waiting)
	}

	g.resolvePending(t.Context())
	if got := target(); got != nil {
		t.Errorf("a tick that named nothing new handed Poll %v again", got)
	}

	c.cluster.topicNames[unnamed], c.cluster.topicIDs["later"] = "later", unnamed
	g.resolvePending(t.Context())
	want := map[kafka.TopicPartition]bool{kept: true, {Topic: "later", Partition: 0}: true}
	if got := target(); !maps.Equal(got, want) {
		t.Errorf("once every id is named, Poll was handed %v, want %v", got, want)
	}
	if g.pending != nil {
		t.Errorf("the assignment still waits after every id was named")
	}
}
