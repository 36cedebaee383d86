package consumer

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/zkafka/zkafka/internal/testcluster"
	"github.com/zkafka/zkafka/internal/wait"
	"github.com/zkafka/zkafka/zkpaths"
)

func TestInvalidGroupAndTopicRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want error
	}{
		{"empty group", Config{Topics: []string{"t"}, BootstrapServers: []string{"127.0.0.1:1"}}, kerr.InvalidGroupID},
		{"bad topic", Config{GroupID: "g", Topics: []string{"no spaces"}, BootstrapServers: []string{"127.0.0.1:1"}}, kerr.InvalidTopicException},
		{"dot topic", Config{GroupID: "g", Topics: []string{".."}, ZooKeeperConnect: "127.0.0.1:1"}, kerr.InvalidTopicException},
		{"both modes", Config{GroupID: "g", Topics: []string{"t"}, ZooKeeperConnect: "127.0.0.1:1", BootstrapServers: []string{"127.0.0.1:1"}}, ErrInvalidConfig},
		{"legacy sticky", Config{GroupID: "g", Topics: []string{"t"}, ZooKeeperConnect: "127.0.0.1:1", PartitionAssignmentStrategy: []string{"sticky"}}, ErrInvalidConfig},
		{"bad reset", Config{GroupID: "g", Topics: []string{"t"}, ZooKeeperConnect: "127.0.0.1:1", AutoOffsetReset: "none-such"}, ErrInvalidConfig},
	} {
		_, err := New(context.Background(), tc.cfg)
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, err, tc.want)
		}
	}
}

// Unreachable ZooKeeper or brokers: New keeps trying until its context ends
// and then says what it could not reach.
func TestUnreachableZooKeeperAndBrokers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, err := New(ctx, Config{GroupID: "g", Topics: []string{"t"}, ZooKeeperConnect: "127.0.0.1:1"})
	if err == nil || !strings.Contains(err.Error(), "connect to ZooKeeper 127.0.0.1:1") {
		t.Errorf("unreachable ZooKeeper: %v", err)
	}
	ctx, cancel = context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, err = New(ctx, Config{GroupID: "g", Topics: []string{"t"}, BootstrapServers: []string{"127.0.0.1:1"}})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "no broker reachable") {
		t.Errorf("unreachable brokers: %v", err)
	}
}

// TestCompressedBatches consumes batches in every codec Kafka has.
func TestCompressedBatches(t *testing.T) {
	c := startCluster(t)
	codecs := map[string]kgo.CompressionCodec{
		"none": kgo.NoCompression(), "gzip": kgo.GzipCompression(), "snappy": kgo.SnappyCompression(),
		"lz4": kgo.Lz4Compression(), "zstd": kgo.ZstdCompression(),
	}
	for name, codec := range codecs {
		t.Run(name, func(t *testing.T) {
			topic := "codec-" + name
			createTopic(t, c, topic, 1)
			produce(t, c, topic, 1, 0, 50, kgo.ProducerBatchCompression(codec))
			cfg := groupConfig(c, "g-"+name, topic)
			got := pollN(t, newConsumer(t, cfg), 50)
			for i, r := range got {
				if r.Offset != int64(i) || string(r.Value) != "0-"+itoa(i) {
					t.Fatalf("record %d: offset %d value %q", i, r.Offset, r.Value)
				}
			}
		})
	}
}

// TestOffsetOutOfRangeResets starts a legacy consumer at a committed offset
// beyond the log: the broker answers OFFSET_OUT_OF_RANGE and the position is
// reset per auto.offset.reset (smallest).
func TestOffsetOutOfRangeResets(t *testing.T) {
	const topic, group = "oor", "oor-group"
	c := startCluster(t)
	createTopic(t, c, topic, 1)
	produce(t, c, topic, 1, 0, 5)
	if err := c.ZooKeeper().CreateIfMissing(zkpaths.ConsumerOffsetPath(group, topic, 0), zkpaths.EncodeConsumerOffset(1000)); err != nil {
		t.Fatal(err)
	}
	got := pollN(t, newConsumer(t, legacyConfig(c, group, topic)), 5)
	if got[0].Offset != 0 {
		t.Errorf("first record at offset %d, want 0", got[0].Offset)
	}
}

// TestFollowsLeaderMove stops a partition's leader mid-consumption: the
// consumer finds the new leader through Metadata and goes on.
func TestFollowsLeaderMove(t *testing.T) {
	const topic, group = "moving", "moving-group"
	c := testcluster.Start(t, testcluster.Options{Brokers: 2})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if resp, err := kadm.NewClient(c.Client()).CreateTopic(ctx, 1, 2, nil, topic); err != nil || resp.Err != nil {
		t.Fatalf("create topic: %v %v", err, resp.Err)
	}
	leader := c.WaitForLeader(topic, 0)
	produce(t, c, topic, 1, 0, 5, kgo.RequiredAcks(kgo.AllISRAcks()))
	cons := newConsumer(t, legacyConfig(c, group, topic))
	pollN(t, cons, 5)

	c.StopBroker(leader)
	wait.For(t, 20*time.Second, "a new leader", func() bool {
		s, ok := c.PartitionState(topic, 0)
		return ok && s.Leader >= 0 && s.Leader != leader
	})
	produce(t, c, topic, 1, 5, 5)
	got := pollN(t, cons, 5)
	if got[0].Offset != 5 || string(got[0].Value) != "0-5" {
		t.Errorf("after the move got offset %d value %q, want 5 and 0-5", got[0].Offset, got[0].Value)
	}
}

// TestLegacyRoundRobin converges a roundrobin group of three consumers
// with two streams (threads) each.
func TestLegacyRoundRobin(t *testing.T) {
	const topic, group, partitions = "rr", "rr-group", int32(7)
	c := startCluster(t)
	createTopic(t, c, topic, partitions)
	var consumers []*Consumer
	for range 3 {
		cfg := legacyConfig(c, group, topic)
		cfg.PartitionAssignmentStrategy = []string{"roundrobin"}
		cfg.Streams = 2
		consumers = append(consumers, newConsumer(t, cfg))
	}
	wait.For(t, 20*time.Second, "convergence", func() bool {
		return converged(t, c.ZooKeeper(), group, topic, partitions, consumers)
	})
	// Six threads share seven partitions: one thread has two.
	perThread := map[string]int{}
	for _, thread := range owners(t, c.ZooKeeper(), group, topic, partitions) {
		perThread[thread]++
	}
	if len(perThread) != 6 {
		t.Errorf("owners by thread: %v", perThread)
	}
}

// TestCommitOnCloseAfterCoordinatorMove stops the group's coordinator just
// before Close: Close's auto-commit waits for the coordinator to be found
// again, as Kafka's commitSync does, instead of failing on the old one.
func TestCommitOnCloseAfterCoordinatorMove(t *testing.T) {
	for _, protocol := range []string{protocolClassic, protocolConsumer} {
		t.Run(protocol, func(t *testing.T) {
			const topic, group = "committed", "moving-coordinator"
			c := testcluster.Start(t, testcluster.Options{Brokers: 2, Properties: map[string]string{
				"group.initial.rebalance.delay.ms":      "0",
				"group.coordinator.rebalance.protocols": "classic,consumer",
				"offsets.topic.replication.factor":      "2",
				"offsets.topic.num.partitions":          "1",
			}})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			adm := kadm.NewClient(c.Client())
			if resp, err := adm.CreateTopic(ctx, 1, 2, nil, topic); err != nil || resp.Err != nil {
				t.Fatalf("create topic: %v %v", err, resp.Err)
			}
			c.WaitForLeader(topic, 0)
			produce(t, c, topic, 1, 0, 5, kgo.RequiredAcks(kgo.AllISRAcks()))
			cfg := Config{GroupID: group, Topics: []string{topic}, BootstrapServers: c.BootstrapAddrs(), GroupProtocol: protocol,
				AutoOffsetReset: "earliest", AutoCommitInterval: time.Hour, RebalanceTimeout: 10 * time.Second}
			if protocol == protocolClassic {
				cfg.HeartbeatInterval, cfg.SessionTimeout = time.Second, 10*time.Second
			}
			cons := newConsumer(t, cfg)
			pollN(t, cons, 5)

			coordinator := c.WaitForLeader("__consumer_offsets", 0)
			c.StopBroker(coordinator)
			if err := cons.Close(ctx); err != nil {
				t.Fatalf("Close after the coordinator stopped: %v", err)
			}
			other := kadm.NewClient(c.Client())
			offsets, err := other.FetchOffsets(ctx, group)
			if err != nil {
				t.Fatal(err)
			}
			if o, ok := offsets.Lookup(topic, 0); !ok || o.Err != nil || o.At != 5 {
				t.Errorf("committed offset of %s-0 after Close: %+v (found %v), want 5", topic, o, ok)
			}
		})
	}
}
