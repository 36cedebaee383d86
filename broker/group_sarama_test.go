package broker_test

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/zkafka/zkafka/internal/testcluster"
)

// saramaMember is one sarama consumer group member consuming in its own
// goroutine; its owned partitions are the claims of its current session.
type saramaMember struct {
	cg     sarama.ConsumerGroup
	cancel context.CancelFunc
	done   chan struct{}
	topic  string
	seen   *consumed

	mu    sync.Mutex
	owned []int32
}

func (m *saramaMember) Setup(s sarama.ConsumerGroupSession) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.owned = append([]int32(nil), s.Claims()[m.topic]...)
	sort.Slice(m.owned, func(i, j int) bool { return m.owned[i] < m.owned[j] })
	return nil
}

func (m *saramaMember) Cleanup(sarama.ConsumerGroupSession) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.owned = nil
	return nil
}

func (m *saramaMember) ConsumeClaim(s sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	for msg := range claim.Messages() {
		m.seen.add(&kgo.Record{Topic: msg.Topic, Partition: msg.Partition, Offset: msg.Offset})
		s.MarkMessage(msg, "")
	}
	return nil
}

func (m *saramaMember) partitions() []int32 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]int32(nil), m.owned...)
}

func (m *saramaMember) stop() {
	select {
	case <-m.done:
		return
	default:
	}
	m.cancel()
	<-m.done
	m.cg.Close()
}

func startSaramaMember(t *testing.T, c *testcluster.Cluster, group, topic string, seen *consumed) *saramaMember {
	t.Helper()
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V2_8_0_0
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	cfg.Consumer.Offsets.AutoCommit.Interval = 100 * time.Millisecond
	cfg.Consumer.Group.Heartbeat.Interval = 200 * time.Millisecond
	cfg.Consumer.Group.Rebalance.GroupStrategies = []sarama.BalanceStrategy{sarama.NewBalanceStrategyRange()}
	cg, err := sarama.NewConsumerGroup(c.BootstrapAddrs(), group, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &saramaMember{cg: cg, cancel: cancel, done: make(chan struct{}), topic: topic, seen: seen}
	go func() {
		defer close(m.done)
		for ctx.Err() == nil {
			if err := cg.Consume(ctx, []string{topic}, m); err != nil && ctx.Err() == nil {
				t.Logf("sarama Consume: %v", err)
			}
		}
	}()
	t.Cleanup(m.stop)
	return m
}

// sarama's consumer group (range) joins, rebalances as members come and go,
// consumes every record and commits up to the end of each partition.
func TestGroupSarama(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Properties: groupProps})
	const topic, group, partitions = "sarama-topic", "sarama-group", 4
	createGroupTopic(t, c, topic, partitions)
	producer := c.Client(kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	produce := func(n int) {
		for i := range n {
			if err := producer.ProduceSync(ctxT(t, 10*time.Second), kgo.StringRecord(fmt.Sprint(i))).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	seen := &consumed{seen: map[string]map[int64]bool{}}
	produce(40)
	a := startSaramaMember(t, c, group, topic, seen)
	waitExactlyOneOwner(t, c, partitions, a)
	b := startSaramaMember(t, c, group, topic, seen)
	waitExactlyOneOwner(t, c, partitions, a, b)
	produce(40)
	a.stop()
	waitExactlyOneOwner(t, c, partitions, b)
	produce(40)

	adm := kadm.NewClient(c.Client())
	want := endOffsets(t, adm, topic)
	c.WaitFor("every record consumed", func() bool { return seen.missing(topic, want) == 0 })
	c.WaitFor("committed offsets at the end of every partition", func() bool {
		offs, err := adm.FetchOffsets(ctxT(t, 10*time.Second), group)
		if err != nil {
			return false
		}
		for p, end := range want {
			if o, ok := offs.Lookup(topic, p); !ok || o.At != end {
				return false
			}
		}
		return true
	})
}
