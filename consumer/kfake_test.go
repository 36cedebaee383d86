package consumer

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
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
	balanced(t, topic, partitions, first)
	second := newConsumer(t, cfg)
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
