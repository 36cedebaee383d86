package broker_test

import (
	"bytes"
	"crypto/rand"
	mrand "math/rand/v2"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/broker"
	"github.com/zkafka/zkafka/internal/testcluster"
	"github.com/zkafka/zkafka/internal/wait"
)

// TestZeroCopyFetchMatchesTheCopyingPath answers the same Fetch requests from the same logs with the
// records read into memory and with them sent from the segment files by sendfile, and compares the
// frames byte for byte. The topic's 2 KiB segments hold a few batches of random sizes each, so reads
// start at every offset, stop at segment ends, and partition limits cut batches (which stay out whole);
// a transaction's aborted records give read_committed fetches their aborted list. Fetch v0–v3 need
// down-conversion and must not use files.
func TestZeroCopyFetchMatchesTheCopyingPath(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 1})
	ctx := ctxT(t, time.Minute)
	if _, err := adminOf(c).CreateTopic(ctx, 3, 1, map[string]*string{"segment.bytes": kadm.StringPtr("2048")}, "zc"); err != nil {
		t.Fatal(err)
	}
	rng := mrand.New(mrand.NewPCG(5, 6))
	cl := c.Client(kgo.DefaultProduceTopic("zc"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for i := range 60 {
		var rs []*kgo.Record
		for range 1 + rng.IntN(4) {
			value := make([]byte, rng.IntN(700))
			rand.Read(value)
			rs = append(rs, &kgo.Record{Value: value, Partition: int32(i % 3)})
		}
		if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	txn := c.Client(kgo.DefaultProduceTopic("zc"), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.TransactionalID("zc-txn"))
	if err := txn.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := txn.ProduceSync(ctx, &kgo.Record{Value: []byte("aborted")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if err := txn.EndTransaction(ctx, kgo.TryAbort); err != nil {
		t.Fatal(err)
	}
	cl.ProduceSync(ctx, &kgo.Record{Value: []byte("after")})

	s := c.Broker(1)
	l, _ := broker.LocalLog(s, "zc", 0)
	if l.NumSegments() < 5 {
		t.Fatalf("zc-0 has %d segments: the test needs several", l.NumSegments())
	}
	// EndTransaction returns once the abort is prepared; the coordinator
	// writes the marker after. Each fetch below is made twice and compared,
	// so the log must stop changing first.
	wait.For(t, time.Minute, "the abort marker in zc-0 and every record stable", func() bool {
		return l.LastStableOffset() == l.LogEndOffset() && l.HighWatermark() == l.LogEndOffset()
	})
	sawFiles := false
	for version := int16(0); version <= 12; version++ {
		for range 60 {
			req := kmsg.NewPtrFetchRequest()
			req.Version, req.ReplicaID, req.MaxBytes = version, -1, int32(rng.IntN(8000))
			req.IsolationLevel = int8(rng.IntN(2))
			rt := kmsg.NewFetchRequestTopic()
			rt.Topic = "zc"
			for p := range int32(3) {
				rp := kmsg.NewFetchRequestTopicPartition()
				rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes = p, rng.Int64N(l.LogEndOffset()+1), int32(rng.IntN(5000))
				rt.Partitions = append(rt.Partitions, rp)
			}
			req.Topics = append(req.Topics, rt)
			copying, zeroCopy, inFiles, err := broker.FetchBothWays(s, req)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(copying, zeroCopy) {
				t.Fatalf("Fetch v%d %+v: the zero-copy frame differs from the copying one\n copying %x\nzero-copy %x", version, req.Topics, copying, zeroCopy)
			}
			if version <= 3 && inFiles > 0 {
				t.Fatalf("Fetch v%d left %d partitions' records in files: they need down-conversion", version, inFiles)
			}
			sawFiles = sawFiles || inFiles > 0
		}
	}
	if !sawFiles {
		t.Fatal("no fetch left records in files: the zero-copy path was not exercised")
	}
}
