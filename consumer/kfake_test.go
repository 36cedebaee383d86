package consumer

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/goleak"
)

// TestCooperativeOnKfake runs a cooperative group on franz-go's kfake, a
// second, independent coordinator: the protocol is not tuned to ours.
func TestCooperativeOnKfake(t *testing.T) {
	const topic, partitions = "kfake-topic", 4
	fake, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(partitions, topic))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fake.Close)
	cfg := Config{
		GroupID: "kfake-group", Topics: []string{topic}, BootstrapServers: fake.ListenAddrs(),
		HeartbeatInterval: 100 * time.Millisecond, SessionTimeout: 6 * time.Second,
		PartitionAssignmentStrategy: []string{"cooperative-sticky"},
	}
	var rec recorder
	cfg1 := cfg
	cfg1.OnEvent = rec.add
	first := newConsumer(t, cfg1)
	pollInBackground(t, first)
	balanced(t, topic, partitions, first)
	second := newConsumer(t, cfg)
	pollInBackground(t, second)
	balanced(t, topic, partitions, first, second)
	if n := len(rec.of(EventFetchingPaused)); n != 0 {
		t.Errorf("cooperative member paused %d times", n)
	}
	if n := len(rec.of(EventPartitionsRevoked)); n != 1 {
		t.Errorf("%d revocations, want 1 (the two partitions that moved)", n)
	}
}

// TestCloseStopsEveryGoroutine: after Close nothing of the consumer runs,
// including its heartbeat, auto-commit and async commits.
func TestCloseStopsEveryGoroutine(t *testing.T) {
	fake, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "leaks"))
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	ignore := goleak.IgnoreCurrent()
	c, err := New(context.Background(), Config{
		GroupID: "leaks", Topics: []string{"leaks"}, BootstrapServers: fake.ListenAddrs(),
		HeartbeatInterval: 50 * time.Millisecond, AutoCommitInterval: 50 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	c.Poll(ctx) // runs fetches until the deadline: the topic is empty
	done := make(chan error, 1)
	c.CommitAsync(func(err error) { done <- err })
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := c.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	goleak.VerifyNone(t, ignore)
}

// TestMaxPollRecords: a Poll returns at most max.poll.records, and what a
// Poll left behind comes with the next ones, in order and once.
func TestMaxPollRecords(t *testing.T) {
	const topic = "backlog"
	fake, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, topic))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fake.Close)
	cl, err := kgo.NewClient(kgo.SeedBrokers(fake.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	const perPartition = 25
	for i := range 2 * perPartition {
		r := &kgo.Record{Topic: topic, Partition: int32(i % 2), Value: []byte("x")}
		if err := cl.ProduceSync(context.Background(), r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	c := newConsumer(t, Config{
		GroupID: "backlog-group", Topics: []string{topic}, BootstrapServers: fake.ListenAddrs(),
		AutoOffsetReset: "earliest", MaxPollRecords: 10,
	})
	next := map[int32]int64{}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for n := 0; n < 2*perPartition; {
		recs, err := c.Poll(ctx)
		if err != nil {
			t.Fatalf("poll after %d records: %v", n, err)
		}
		if len(recs) > 10 {
			t.Fatalf("a poll returned %d records, max.poll.records is 10", len(recs))
		}
		for _, r := range recs {
			if r.Offset != next[r.Partition] {
				t.Fatalf("partition %d: offset %d, want %d", r.Partition, r.Offset, next[r.Partition])
			}
			next[r.Partition]++
		}
		n += len(recs)
	}
}
