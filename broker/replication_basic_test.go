package broker_test

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/zkafka/zkafka/internal/testcluster"
)

// TestFollowersReplicateAndAdvanceHighWatermark produces with acks=all to a
// replication-factor-3 topic: every acknowledged record is readable (the
// high watermark moved with the followers' fetches), and every replica ends
// with the leader's log end offset and high watermark.
func TestFollowersReplicateAndAdvanceHighWatermark(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 3, Properties: map[string]string{"replica.fetch.wait.max.ms": "100"}})
	adm := kadm.NewClient(c.Client())
	ctx := ctxT(t, 30*time.Second)
	if resp, err := adm.CreateTopic(ctx, 2, 3, nil, "replicated"); err != nil || resp.Err != nil {
		t.Fatalf("create topic: %v %v", err, resp.Err)
	}
	for p := range int32(2) {
		c.WaitForLeader("replicated", p)
	}
	producer := c.Client(kgo.DisableIdempotentWrite(), kgo.RequiredAcks(kgo.AllISRAcks()), kgo.DefaultProduceTopic("replicated"))
	sent := produceAll(t, producer, "replicated", 200)
	got := consumeAll(t, c, "replicated", 200)
	for p, recs := range sent {
		if len(got[p]) != len(recs) {
			t.Fatalf("partition %d: consumed %d, produced %d", p, len(got[p]), len(recs))
		}
		end := recs[len(recs)-1].Offset + 1
		leader := c.WaitForLeader("replicated", p)
		lp, ok := c.Broker(leader).ReplicaManager().Partition("replicated", p)
		if !ok {
			t.Fatalf("leader %d has no partition %d", leader, p)
		}
		if hw := lp.HighWatermark(); hw < end {
			t.Errorf("partition %d: leader high watermark %d below the acknowledged end %d", p, hw, end)
		}
		for id := int32(1); id <= 3; id++ {
			rp, ok := c.Broker(id).ReplicaManager().Partition("replicated", p)
			if !ok {
				t.Fatalf("broker %d has no replica of partition %d", id, p)
			}
			c.WaitFor("every replica to reach the leader's log end and high watermark", func() bool {
				return rp.Log().LogEndOffset() == end && rp.HighWatermark() == end
			})
			if id != leader {
				if leo, ok := lp.FollowerLEO(id); !ok || leo != end {
					t.Errorf("partition %d: leader sees follower %d at %d (known %v), want %d", p, id, leo, ok, end)
				}
			}
		}
	}
}
