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
// of the named topics go to Poll at once (revoking what the assignment
// dropped), the rest when the id is named, and no target is handed twice.
func TestConsumerProtocolReconcilesNamedTopicsFirst(t *testing.T) {
	c := &Consumer{log: zap.NewNop(), assigned: map[kafka.TopicPartition]int64{}, committed: map[kafka.TopicPartition]int64{}, changed: make(chan struct{})}
	noBrokers := func(context.Context) ([]string, error) { return nil, errors.New("no brokers in this test") }
	c.cluster = newCluster("test", wire.Security{}, &c.stats, noBrokers, zap.NewNop())
	g := newConsumerProtocolGroup(c)
	c.group = g

	named, unnamed := [16]byte{1}, [16]byte{2}
	c.cluster.topicNames[named], c.cluster.topicIDs["named"] = "named", named
	c.assigned[kafka.TopicPartition{Topic: "dropped", Partition: 0}] = 7
	assignment := &kmsg.ConsumerGroupHeartbeatResponseAssignment{Topics: []kmsg.ConsumerGroupHeartbeatResponseAssignmentTopic{
		{TopicID: named, Partitions: []int32{0, 1}},
		{TopicID: unnamed, Partitions: []int32{0}},
	}}
	g.pending, g.resolved = assignment, -1

	take := func() map[kafka.TopicPartition]bool {
		g.mu.Lock()
		defer g.mu.Unlock()
		target := g.target
		g.target = nil
		return target
	}
	tps := func(tps ...kafka.TopicPartition) map[kafka.TopicPartition]bool {
		m := map[kafka.TopicPartition]bool{}
		for _, tp := range tps {
			m[tp] = true
		}
		return m
	}

	g.resolvePending(t.Context())
	if got, want := take(), tps(kafka.TopicPartition{Topic: "named", Partition: 0}, kafka.TopicPartition{Topic: "named", Partition: 1}); !maps.Equal(got, want) {
		t.Fatalf("with one topic id unnamed, Poll was handed %v, want the named topic's partitions %v", got, want)
	}
	if g.pending != assignment {
		t.Fatalf("the assignment no longer waits for its unnamed topic")
	}
	g.resolvePending(t.Context())
	if got := take(); got != nil {
		t.Errorf("a tick that named nothing new handed Poll %v again", got)
	}

	c.cluster.topicNames[unnamed], c.cluster.topicIDs["later"] = "later", unnamed
	g.resolvePending(t.Context())
	want := tps(kafka.TopicPartition{Topic: "named", Partition: 0}, kafka.TopicPartition{Topic: "named", Partition: 1}, kafka.TopicPartition{Topic: "later", Partition: 0})
	if got := take(); !maps.Equal(got, want) {
		t.Errorf("once every id is named, Poll was handed %v, want %v", got, want)
	}
	if g.pending != nil {
		t.Errorf("the assignment still waits after every id was named")
	}
}
