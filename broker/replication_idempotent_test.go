package broker_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/internal/testcluster"
	"github.com/zkafka/zkafka/zkpaths"
)

// idempotentBatch is a v2 batch of an idempotent producer.
func idempotentBatch(pid int64, epoch int16, seq int32, values ...string) []byte {
	var records []byte
	for i, v := range values {
		r := kmsg.Record{OffsetDelta: int32(i), Value: []byte(v)}
		r.Length = int32(len(r.AppendTo(nil)) - 1)
		records = r.AppendTo(records)
	}
	now := time.Now().UnixMilli()
	b := kmsg.RecordBatch{
		Magic: 2, LastOffsetDelta: int32(len(values) - 1), FirstTimestamp: now, MaxTimestamp: now,
		ProducerID: pid, ProducerEpoch: epoch, FirstSequence: seq, NumRecords: int32(len(values)), Records: records,
	}
	raw := b.AppendTo(nil)
	binary.BigEndian.PutUint32(raw[8:], uint32(len(raw)-12))
	binary.BigEndian.PutUint32(raw[17:], crc32.Checksum(raw[21:], crc32.MakeTable(crc32.Castagnoli)))
	return raw
}

func produceBatch(t *testing.T, addr, topic string, batch []byte) (*kerr.Error, int64) {
	t.Helper()
	req := produceReq(topic, 0, batch)
	req.Acks = -1
	p := raw(t, addr, req, 7).(*kmsg.ProduceResponse).Topics[0].Partitions[0]
	var ke *kerr.Error
	errors.As(kerr.ErrorForCode(p.ErrorCode), &ke)
	return ke, p.BaseOffset
}

// TestIdempotentProduceAcrossLeaderChange gets a producer id from
// InitProducerId (from a block each broker claimed in
// /latest_producer_id_block when it started), then shows
// the producer state rules on the wire — a retried batch is not written twice
// and gets its original offset, a sequence gap is OUT_OF_ORDER_SEQUENCE_NUMBER
// — and that the state moves with leadership: after the leader stops, the
// new leader (which built the state from the batches it replicated)
// recognises the same retry.
func TestIdempotentProduceAcrossLeaderChange(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 3, Properties: replicationProps()})
	ctrl := c.WaitForController()
	createAssigned(t, c.Addr(ctrl), "idem", [][]int32{{1, 2, 3}}, nil)
	leader := c.WaitForLeader("idem", 0)

	// Each of the three brokers claimed a block as it started, before any producer asked.
	data, stat, err := c.ZooKeeper().Get(zkpaths.LatestProducerIDBlock)
	if err != nil {
		t.Fatal(err)
	}
	block, err := zkpaths.DecodeProducerIDBlock(data)
	if err != nil || stat.Version != 3 || block.BlockStart != 2000 || block.BlockEnd != 2999 {
		t.Fatalf("/latest_producer_id_block after three broker starts: %+v at version %d (%v), want [2000, 2999] at version 3", block, stat.Version, err)
	}
	init := raw(t, c.Addr(leader), kmsg.NewPtrInitProducerIDRequest(), 4).(*kmsg.InitProducerIDResponse)
	if init.ErrorCode != 0 || init.ProducerID < 0 || init.ProducerID > block.BlockEnd || init.ProducerEpoch != 0 {
		t.Fatalf("InitProducerId: %+v, want a producer id from the brokers' blocks [0, %d]", init, block.BlockEnd)
	}

	pid := init.ProducerID
	first := idempotentBatch(pid, 0, 0, "a", "b")
	second := idempotentBatch(pid, 0, 2, "c")
	for _, b := range [][]byte{first, second} {
		if err, _ := produceBatch(t, c.Addr(leader), "idem", b); err != nil {
			t.Fatal(err)
		}
	}
	if err, off := produceBatch(t, c.Addr(leader), "idem", first); err != nil || off != 0 {
		t.Fatalf("retry of the first batch: %v at %d, want no error at its original offset 0", err, off)
	}
	if err, _ := produceBatch(t, c.Addr(leader), "idem", idempotentBatch(pid, 0, 9, "gap")); !errors.Is(err, kerr.OutOfOrderSequenceNumber) {
		t.Fatalf("sequence gap: %v, want OUT_OF_ORDER_SEQUENCE_NUMBER", err)
	}

	c.StopBroker(leader)
	var next int32
	c.WaitFor("a new leader", func() bool {
		s, ok := c.PartitionState("idem", 0)
		next = s.Leader
		return ok && s.Leader >= 0 && s.Leader != leader
	})
	c.WaitForLeader("idem", 0)
	if err, off := produceBatch(t, c.Addr(next), "idem", second); err != nil || off != 2 {
		t.Fatalf("retry of the second batch on the new leader %d: %v at %d, want its original offset 2", next, err, off)
	}
	if err, off := produceBatch(t, c.Addr(next), "idem", idempotentBatch(pid, 0, 3, "d")); err != nil || off != 3 {
		t.Fatalf("next batch on the new leader: %v at %d, want offset 3", err, off)
	}

	// DescribeProducers shows the new leader's producer state.
	dreq := kmsg.NewPtrDescribeProducersRequest()
	dreq.Topics = []kmsg.DescribeProducersRequestTopic{{Topic: "idem", Partitions: []int32{0}}}
	dp := raw(t, c.Addr(next), dreq, 0).(*kmsg.DescribeProducersResponse).Topics[0].Partitions[0]
	if dp.ErrorCode != 0 || len(dp.ActiveProducers) != 1 {
		t.Fatalf("DescribeProducers: %v %+v", kerr.ErrorForCode(dp.ErrorCode), dp.ActiveProducers)
	}
	if ap := dp.ActiveProducers[0]; ap.ProducerID != pid || ap.ProducerEpoch != 0 || ap.LastSequence != 3 {
		t.Errorf("DescribeProducers: %+v, want producer %d epoch 0 last sequence 3", ap, pid)
	}
}

// TestDefaultIdempotentProducers runs kgo's default producer (idempotent,
// acks=all) and librdkafka's with enable.idempotence=true against a
// replicated topic: each record lands once, in order.
func TestDefaultIdempotentProducers(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 3, Properties: replicationProps()})
	adm := kadm.NewClient(c.Client())
	ctx := ctxT(t, 30*time.Second)
	if resp, err := adm.CreateTopic(ctx, 3, 3, map[string]*string{"min.insync.replicas": kmsgStr("2")}, "idem-clients"); err != nil || resp.Err != nil {
		t.Fatalf("create topic: %v %v", err, resp.Err)
	}
	for p := range int32(3) {
		c.WaitForLeader("idem-clients", p)
	}
	producer := c.Client(kgo.DefaultProduceTopic("idem-clients"))
	sent := produceAll(t, producer, "idem-clients", 300)
	got := consumeAll(t, c, "idem-clients", 300)
	for p, recs := range sent {
		if len(got[p]) != len(recs) {
			t.Fatalf("partition %d: consumed %d, produced %d", p, len(got[p]), len(recs))
		}
		for i, r := range recs {
			if g := got[p][i]; g.Offset != r.Offset || string(g.Value) != string(r.Value) {
				t.Fatalf("partition %d record %d: got %d %q, want %d %q", p, i, g.Offset, g.Value, r.Offset, r.Value)
			}
			if r.ProducerID < 0 {
				t.Fatalf("kgo produced without a producer id: %+v", r)
			}
		}
	}

	bootstrap := strings.Join(c.BootstrapAddrs(), ",")
	var lines []string
	for i := range 20 {
		lines = append(lines, fmt.Sprintf("v%d", i))
	}
	kcat(t, strings.Join(lines, "\n")+"\n", "-b", bootstrap, "-t", "idem-kcat", "-P", "-p", "0", "-X", "enable.idempotence=true")
	c.WaitForLeader("idem-kcat", 0)
	out := kcat(t, "", "-b", bootstrap, "-t", "idem-kcat", "-C", "-o", "beginning", "-e", "-f", "%s@%o\n")
	var want strings.Builder
	for i, l := range lines {
		fmt.Fprintf(&want, "%s@%d\n", l, i)
	}
	if !strings.Contains(out, want.String()) {
		t.Fatalf("kcat read:\n%s\nwant:\n%s", out, want.String())
	}
}
