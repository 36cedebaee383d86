package consumer

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap/zaptest"

	"github.com/zkafka/zkafka/internal/testcluster"
	"github.com/zkafka/zkafka/internal/zktest"
)

func TestMain(m *testing.M) { zktest.Main(m) }

// startCluster starts one broker whose groups rebalance without the initial
// delay and accept short sessions.
func startCluster(t *testing.T) *testcluster.Cluster {
	t.Helper()
	return testcluster.Start(t, testcluster.Options{Properties: map[string]string{
		"group.initial.rebalance.delay.ms": "0",
		"group.min.session.timeout.ms":     "500",
	}})
}

// createTopic creates a topic and waits for its leaders.
func createTopic(t *testing.T, c *testcluster.Cluster, topic string, partitions int32) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	adm := kadm.NewClient(c.Client())
	if resp, err := adm.CreateTopic(ctx, partitions, 1, nil, topic); err != nil || resp.Err != nil {
		t.Fatalf("create topic %s: %v %v", topic, err, resp.Err)
	}
	for p := range partitions {
		c.WaitForLeader(topic, p)
	}
}

// produce writes n records to each partition, values "<p>-<i>" counting
// from first.
func produce(t *testing.T, c *testcluster.Cluster, topic string, partitions int32, first, n int, opts ...kgo.Opt) {
	t.Helper()
	cl := c.Client(append([]kgo.Opt{kgo.RecordPartitioner(kgo.ManualPartitioner())}, opts...)...)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var recs []*kgo.Record
	for p := range partitions {
		for i := first; i < first+n; i++ {
			recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Value: fmt.Appendf(nil, "%d-%d", p, i)})
		}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
}

// newConsumer starts a consumer closed at cleanup.
func newConsumer(t *testing.T, cfg Config) *Consumer {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = zaptest.NewLogger(t).Named(t.Name())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := New(ctx, cfg)
	if err != nil {
		t.Fatalf("new consumer: %v", err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// pollN polls until n records arrived.
func pollN(t *testing.T, c *Consumer, n int) []Record {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out []Record
	for len(out) < n {
		recs, err := c.Poll(ctx)
		if err != nil {
			t.Fatalf("poll after %d of %d records: %v", len(out), n, err)
		}
		out = append(out, recs...)
	}
	return out
}
