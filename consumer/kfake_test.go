package consumer

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
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
