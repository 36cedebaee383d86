package broker_test

import (
	"crypto/rand"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/broker"
	"github.com/zkafka/zkafka/internal/testcluster"
	"github.com/zkafka/zkafka/internal/wait"
)

// TestDeleteRecords runs DeleteRecords (kadm, as kafka-delete-records.sh
// does) on an RF 3 topic: the answer comes once every replica starts at the
// offset (the low watermark), consumers then start there and get
// OFFSET_OUT_OF_RANGE below it, -1 deletes up to the high watermark, and a
// stopped follower does not hold the low watermark back. Bad requests get
// Kafka 2.8's codes.
func TestDeleteRecords(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 3, Properties: map[string]string{"log.retention.check.interval.ms": "50"}})
	createTopicWithConfigs(t, c, "purged", 3, map[string]*string{"segment.bytes": kadm.StringPtr("1024")})
	createTopicWithConfigs(t, c, "compacted", 3, map[string]*string{"cleanup.policy": kadm.StringPtr("compact")})
	ctx := ctxT(t, time.Minute)
	cl := c.Client(kgo.DefaultProduceTopic("purged"))
	for range 30 {
		// About 270 bytes a batch, incompressible: three to a 1 KiB segment.
		value := make([]byte, 200)
		rand.Read(value)
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: value}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	adm := kadm.NewClient(cl)
	del := func(topic string, partition int32, offset int64) kadm.DeleteRecordsResponse {
		t.Helper()
		var os kadm.Offsets
		os.AddOffset(topic, partition, offset, -1)
		rs, err := adm.DeleteRecords(ctx, os)
		if err != nil {
			t.Fatalf("DeleteRecords %s-%d before %d: %v", topic, partition, offset, err)
		}
		r, ok := rs.Lookup(topic, partition)
		if !ok {
			t.Fatalf("no answer for %s-%d", topic, partition)
		}
		return r
	}
	logStarts := func() []int64 {
		var out []int64
		for id := int32(1); id <= 3; id++ {
			if l, ok := broker.LocalLog(c.Broker(id), "purged", 0); ok {
				out = append(out, l.LogStartOffset())
			}
		}
		return out
	}

	leader := c.WaitForLeader("purged", 0)
	leaderLog, _ := broker.LocalLog(c.Broker(leader), "purged", 0)
	segments := leaderLog.NumSegments()
	if segments < 5 {
		t.Fatalf("%d segments; the test needs several", segments)
	}
	if r := del("purged", 0, 10); r.Err != nil || r.LowWatermark != 10 {
		t.Fatalf("delete before 10: low watermark %d, %v; want 10", r.LowWatermark, r.Err)
	}
	for i, start := range logStarts() {
		if start != 10 {
			t.Errorf("replica %d starts at %d once DeleteRecords answered, want 10", i+1, start)
		}
	}
	start, err := adm.ListStartOffsets(ctx, "purged")
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := start.Lookup("purged", 0); o.Offset != 10 {
		t.Errorf("ListOffsets earliest %d, want 10", o.Offset)
	}
	if code := raw(t, c.Addr(leader), fetchReq("purged", 0, 5, 1), 11).(*kmsg.FetchResponse).Topics[0].Partitions[0].ErrorCode; code != kerr.OffsetOutOfRange.Code {
		t.Errorf("fetch at 5 after deleting before 10: code %d, want OFFSET_OUT_OF_RANGE", code)
	}
	// The retention pass deletes the segments wholly below the start.
	wait.For(t, 10*time.Second, "the segments below the log start offset deleted", func() bool {
		return leaderLog.NumSegments() < segments
	})

	adm.FindGroupCoordinators(ctx, "makes-the-offsets-topic")
	c.WaitForLeader("__consumer_offsets", 0)
	for _, tc := range []struct {
		topic  string
		offset int64
		want   error
	}{
		{"purged", 31, kerr.OffsetOutOfRange},
		{"purged", -2, kerr.OffsetOutOfRange},
		{"compacted", 0, kerr.PolicyViolation},
		{"__consumer_offsets", 0, kerr.InvalidTopicException},
	} {
		if r := del(tc.topic, 0, tc.offset); !errors.Is(r.Err, tc.want) {
			t.Errorf("delete %s before %d: %v, want %v", tc.topic, tc.offset, r.Err, tc.want)
		}
	}
	req := kmsg.NewPtrDeleteRecordsRequest()
	req.TimeoutMillis = 5000
	req.Topics = []kmsg.DeleteRecordsRequestTopic{{Topic: "nowhere", Partitions: []kmsg.DeleteRecordsRequestTopicPartition{{Partition: 0, Offset: 1}}}}
	if p := raw(t, c.Addr(1), req, 2).(*kmsg.DeleteRecordsResponse).Topics[0].Partitions[0]; p.ErrorCode != kerr.UnknownTopicOrPartition.Code || p.LowWatermark != -1 {
		t.Errorf("unknown topic: code %d, low watermark %d; want UNKNOWN_TOPIC_OR_PARTITION and -1", p.ErrorCode, p.LowWatermark)
	}

	// A stopped follower's replica does not count once the controller has told the leader it is gone.
	follower := int32(1)
	if follower == leader {
		follower = 2
	}
	c.StopBroker(follower)
	if r := del("purged", 0, -1); r.Err != nil || r.LowWatermark != 30 {
		t.Fatalf("delete before the high watermark with broker %d stopped: low watermark %d, %v; want 30", follower, r.LowWatermark, r.Err)
	}
}
