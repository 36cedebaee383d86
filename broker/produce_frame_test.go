package broker_test

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/internal/testcluster"
	"github.com/zkafka/zkafka/wire"
)

// TestProduceFramesOnOneConnection: a connection reads each Produce frame
// into the one before it (the listener's spare frame). Produce requests of
// growing and shrinking sizes, with other requests between them, on one
// connection, must store exactly the records sent.
func TestProduceFramesOnOneConnection(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 1})
	ctx := ctxT(t, time.Minute)
	if _, err := adminOf(c).CreateTopic(ctx, 2, 1, nil, "frames"); err != nil {
		t.Fatal(err)
	}
	cl, err := wire.Dial(ctx, c.Addr(1), "frames")
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	sent := map[int32][][]byte{}
	produce := func(acks int16, sizes map[int32][]int) {
		t.Helper()
		req := kmsg.NewPtrProduceRequest()
		req.Acks, req.TimeoutMillis = acks, 10000
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = "frames"
		for p, values := range sizes {
			var records []wire.Record
			for i, n := range values {
				v := make([]byte, n)
				rand.Read(v)
				records = append(records, wire.Record{OffsetDelta: int32(i), Value: v})
				sent[p] = append(sent[p], v)
			}
			batch := wire.AppendBatch(nil, wire.BatchHeader{LastOffsetDelta: int32(len(values) - 1), ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, records)
			rt.Partitions = append(rt.Partitions, kmsg.ProduceRequestTopicPartition{Partition: p, Records: batch})
		}
		req.Topics = append(req.Topics, rt)
		resp, err := cl.RequestVersion(ctx, req, 8)
		if err != nil {
			t.Fatal(err)
		}
		for _, rt := range resp.(*kmsg.ProduceResponse).Topics {
			for _, rp := range rt.Partitions {
				if rp.ErrorCode != 0 {
					t.Fatalf("produce to frames-%d: error %d", rp.Partition, rp.ErrorCode)
				}
			}
		}
	}
	other := func(req kmsg.Request, v int16) {
		t.Helper()
		if _, err := cl.RequestVersion(ctx, req, v); err != nil {
			t.Fatal(err)
		}
	}
	produce(1, map[int32][]int{0: {30000, 20000}, 1: {10000}})
	produce(1, map[int32][]int{0: {100}})
	other(kmsg.NewPtrApiVersionsRequest(), 3)
	produce(-1, map[int32][]int{1: {40000, 5}, 0: {7}})
	produce(1, map[int32][]int{0: {2000}})
	md := kmsg.NewPtrMetadataRequest()
	md.Topics = []kmsg.MetadataRequestTopic{{Topic: kmsg.StringPtr("frames")}}
	other(md, 9)
	produce(1, map[int32][]int{0: {65000}, 1: {1}})
	produce(1, map[int32][]int{1: {300, 300, 300}})

	for p, want := range sent {
		consumer := c.Client(kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"frames": {p: kgo.NewOffset().AtStart()}}))
		var got [][]byte
		for len(got) < len(want) {
			fetches := consumer.PollFetches(ctx)
			if err := fetches.Err(); err != nil {
				t.Fatalf("consume frames-%d after %d records: %v", p, len(got), err)
			}
			fetches.EachRecord(func(r *kgo.Record) { got = append(got, r.Value) })
		}
		if len(got) != len(want) {
			t.Fatalf("frames-%d holds %d records, want %d", p, len(got), len(want))
		}
		for i := range want {
			if !bytes.Equal(got[i], want[i]) {
				t.Errorf("frames-%d record %d: %s, want the %d bytes sent", p, i, describe(got[i]), len(want[i]))
			}
		}
	}
}

func describe(b []byte) string {
	return fmt.Sprintf("%d bytes starting %x", len(b), b[:min(8, len(b))])
}
