package broker_test

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/internal/testcluster"
)

// TestFollowersReplicateAndAdvanceHighWatermark produces with acks=all to a
// replication-factor-3 topic (two fetchers per leader on every follower): every acknowledged record is readable (the
// high watermark moved with the followers' fetches), and every replica ends
// with the leader's log end offset and high watermark.
func TestFollowersReplicateAndAdvanceHighWatermark(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 3, Properties: map[string]string{
		"replica.fetch.wait.max.ms": "100",
		"num.replica.fetchers":      "2",
	}})
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
			// ListOffsets: Kafka's debugging replica id (-2) reads any
			// replica's log end offset; consumers (-1) get the leader's
			// high watermark and only from the leader.
			if off, code := latestOffset(t, c.Addr(id), "replicated", p, -2); code != 0 || off != end {
				t.Errorf("partition %d: ListOffsets(-2) on broker %d: %d, %v; want %d", p, id, off, kerr.ErrorForCode(code), end)
			}
			off, code := latestOffset(t, c.Addr(id), "replicated", p, -1)
			switch {
			case id == leader && (code != 0 || off != end):
				t.Errorf("partition %d: ListOffsets on the leader: %d, %v; want %d", p, off, kerr.ErrorForCode(code), end)
			case id != leader && code != kerr.NotLeaderForPartition.Code:
				t.Errorf("partition %d: ListOffsets on follower %d: %v, want NOT_LEADER_OR_FOLLOWER", p, id, kerr.ErrorForCode(code))
			}
		}
	}
}

func latestOffset(t *testing.T, addr, topic string, partition, replicaID int32) (int64, int16) {
	t.Helper()
	req := kmsg.NewPtrListOffsetsRequest()
	req.ReplicaID = replicaID
	lp := kmsg.NewListOffsetsRequestTopicPartition()
	lp.Partition, lp.Timestamp = partition, -1
	req.Topics = []kmsg.ListOffsetsRequestTopic{{Topic: topic, Partitions: []kmsg.ListOffsetsRequestTopicPartition{lp}}}
	rp := raw(t, addr, req, 4).(*kmsg.ListOffsetsResponse).Topics[0].Partitions[0]
	return rp.Offset, rp.ErrorCode
}
