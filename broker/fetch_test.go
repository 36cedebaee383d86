package broker_test

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/broker"
	"github.com/zkafka/zkafka/internal/testcluster"
	"github.com/zkafka/zkafka/wire"
)

func fetchReq(topic string, offset int64, maxWait, minBytes int32) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID, req.MaxWaitMillis, req.MinBytes, req.MaxBytes = -1, maxWait, minBytes, 1<<20
	p := kmsg.NewFetchRequestTopicPartition()
	p.FetchOffset, p.PartitionMaxBytes = offset, 1<<20
	req.Topics = []kmsg.FetchRequestTopic{{Topic: topic, Partitions: []kmsg.FetchRequestTopicPartition{p}}}
	return req
}

func TestFetchWaitsForMinBytes(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 1})
	addr := c.Addr(1)
	if code := createTopicRaw(t, addr, "waiting", 1); code != 0 {
		t.Fatal(kerr.ErrorForCode(code))
	}
	c.WaitForLeader("waiting", 0)

	// Nothing to read and a short max.wait: an empty answer, no error.
	empty := raw(t, addr, fetchReq("waiting", 0, 200, 1), 11).(*kmsg.FetchResponse)
	if p := empty.Topics[0].Partitions[0]; p.ErrorCode != 0 || len(p.RecordBatches) != 0 || p.HighWatermark != 0 {
		t.Fatalf("empty fetch: %+v", p)
	}

	// A long max.wait is cut short by an append.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cl, err := wire.Dial(ctx, addr, "waiter")
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	result := make(chan *kmsg.FetchResponse, 1)
	go func() {
		resp, err := cl.RequestVersion(ctx, fetchReq("waiting", 0, 60000, 1), 11)
		if err != nil {
			t.Error(err)
			result <- nil
			return
		}
		result <- resp.(*kmsg.FetchResponse)
	}()
	if code, _ := produceCode(t, c, addr, produceReq("waiting", 0, recordBatch([]byte("wake up")))); code != 0 {
		t.Fatal(kerr.ErrorForCode(code))
	}
	select {
	case resp := <-result:
		if resp == nil {
			return
		}
		p := resp.Topics[0].Partitions[0]
		if p.ErrorCode != 0 || len(p.RecordBatches) == 0 || p.HighWatermark != 1 {
			t.Fatalf("woken fetch: %+v", p)
		}
	case <-ctx.Done():
		t.Fatal("fetch was not woken by the append")
	}
	// Both waits, the timed-out one and the woken one, unregistered from the
	// partition before they answered.
	if n := broker.Waiters(c.Broker(1), "waiting", 0); n != 0 {
		t.Fatalf("%d waiters left on the partition after the fetches answered", n)
	}

	// Out of range offsets are reported, not served.
	oor := raw(t, addr, fetchReq("waiting", 5, 0, 1), 11).(*kmsg.FetchResponse)
	if code := oor.Topics[0].Partitions[0].ErrorCode; code != kerr.OffsetOutOfRange.Code {
		t.Fatalf("fetch past the end: code %d, want OFFSET_OUT_OF_RANGE", code)
	}
}

func TestListOffsets(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 1})
	addr := c.Addr(1)
	if code := createTopicRaw(t, addr, "offsets", 1); code != 0 {
		t.Fatal(kerr.ErrorForCode(code))
	}
	c.WaitForLeader("offsets", 0)
	before := time.Now().UnixMilli()
	for range 3 {
		if code, _ := produceCode(t, c, addr, produceReq("offsets", 0, recordBatch([]byte("x"), []byte("y")))); code != 0 {
			t.Fatal(kerr.ErrorForCode(code))
		}
	}
	list := func(ts int64, v int16) kmsg.ListOffsetsResponseTopicPartition {
		req := kmsg.NewPtrListOffsetsRequest()
		req.ReplicaID = -1
		p := kmsg.NewListOffsetsRequestTopicPartition()
		p.Timestamp, p.MaxNumOffsets = ts, 1
		req.Topics = []kmsg.ListOffsetsRequestTopic{{Topic: "offsets", Partitions: []kmsg.ListOffsetsRequestTopicPartition{p}}}
		return raw(t, addr, req, v).(*kmsg.ListOffsetsResponse).Topics[0].Partitions[0]
	}
	if p := list(-1, 5); p.ErrorCode != 0 || p.Offset != 6 || p.LeaderEpoch != 0 {
		t.Errorf("latest: %+v", p)
	}
	if p := list(-2, 5); p.ErrorCode != 0 || p.Offset != 0 {
		t.Errorf("earliest: %+v", p)
	}
	if p := list(before, 5); p.ErrorCode != 0 || p.Offset != 0 {
		t.Errorf("by timestamp %d: %+v", before, p)
	}
	if p := list(time.Now().Add(time.Hour).UnixMilli(), 5); p.ErrorCode != 0 || p.Offset != -1 {
		t.Errorf("timestamp in the future: %+v", p)
	}
	if p := list(-1, 0); p.ErrorCode != 0 || len(p.OldStyleOffsets) != 1 || p.OldStyleOffsets[0] != 6 {
		t.Errorf("v0 latest: %+v", p)
	}
}

// TestFetchFromUnknownReplicaGetsNothing: only assigned replicas may fetch as
// followers (up to the log end); any other replica id gets no records.
func TestFetchFromUnknownReplicaGetsNothing(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 1})
	addr := c.Addr(1)
	if code := createTopicRaw(t, addr, "replicas-only", 1); code != 0 {
		t.Fatal(kerr.ErrorForCode(code))
	}
	c.WaitForLeader("replicas-only", 0)
	if code, _ := produceCode(t, c, addr, produceReq("replicas-only", 0, recordBatch([]byte("x")))); code != 0 {
		t.Fatal(kerr.ErrorForCode(code))
	}
	consumer := raw(t, addr, fetchReq("replicas-only", 0, 0, 1), 11).(*kmsg.FetchResponse).Topics[0].Partitions[0]
	if consumer.ErrorCode != 0 || len(consumer.RecordBatches) == 0 {
		t.Fatalf("consumer fetch: %+v", consumer)
	}
	stranger := fetchReq("replicas-only", 0, 0, 1)
	stranger.ReplicaID = 99
	p := raw(t, addr, stranger, 11).(*kmsg.FetchResponse).Topics[0].Partitions[0]
	if p.ErrorCode != 0 || len(p.RecordBatches) != 0 || p.HighWatermark != 1 {
		t.Fatalf("fetch as replica 99: %+v", p)
	}
}
