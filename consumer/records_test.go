package consumer

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/zkafka/zkafka/wire"
)

// TestDecodeBatches reads a fetch response as the Java consumer does: records from the fetch position
// on, control batches skipped, LogAppendTime honoured, a partial batch at the end ignored.
func TestDecodeBatches(t *testing.T) {
	recs := []wire.Record{
		{OffsetDelta: 0, Key: []byte("a"), Value: []byte("1")},
		{OffsetDelta: 1, TimestampDelta: 7, Value: []byte("2"), Headers: []wire.Header{{Key: "h", Value: []byte("v")}}},
	}
	data := wire.AppendBatch(nil, wire.BatchHeader{BaseOffset: 10, PartitionLeaderEpoch: 4, LastOffsetDelta: 1,
		FirstTimestamp: 1000, MaxTimestamp: 1007, ProducerID: -1, BaseSequence: -1, Attributes: wire.Attributes(wire.CodecSnappy)}, recs)
	data = wire.AppendBatch(data, wire.BatchHeader{BaseOffset: 12, ProducerID: 5, Attributes: wire.AttrControl | wire.AttrTransactional},
		[]wire.Record{{Key: []byte{0, 0, 0, 1}, Value: []byte{0, 0, 0, 0, 0, 1}}})
	data = wire.AppendBatch(data, wire.BatchHeader{BaseOffset: 13, FirstTimestamp: 1, MaxTimestamp: 2000, ProducerID: -1,
		Attributes: wire.AttrLogAppendTime}, []wire.Record{{Value: []byte("3")}})
	whole := len(data)
	data = append(data, wire.AppendBatch(nil, wire.BatchHeader{BaseOffset: 14}, recs)[:30]...)

	got, next, err := decodeBatches("t", 2, data, 11, nil)
	if err != nil || next != 14 {
		t.Fatal(next, err)
	}
	want := []Record{
		{Topic: "t", Partition: 2, Offset: 11, LeaderEpoch: 4, Timestamp: time.UnixMilli(1007), Value: []byte("2"), Headers: []Header{{Key: "h", Value: []byte("v")}}},
		{Topic: "t", Partition: 2, Offset: 13, Timestamp: time.UnixMilli(2000), Value: []byte("3")},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("decoded %+v\nwant %+v", got, want)
	}

	unknown := append([]byte(nil), data[:whole]...)
	unknown[wire.PosMagic] = 3
	if _, _, err := decodeBatches("t", 2, unknown, 0, nil); !errors.Is(err, errCorruptBatch) {
		t.Fatalf("magic 3: %v", err)
	}

	// A legacy topic's messages: v0 without timestamps, then a v1 gzip wrapper whose first record is
	// below the position asked for.
	legacy := wire.AppendLegacy(nil, wire.MagicV0, wire.CodecNone, false, []wire.LegacyMessage{{Offset: 20, Timestamp: -1, Value: []byte("a")}})
	legacy = wire.AppendLegacy(legacy, wire.MagicV1, wire.CodecGzip, false, []wire.LegacyMessage{
		{Offset: 21, Timestamp: 500, Value: []byte("b")}, {Offset: 22, Timestamp: 501, Key: []byte("k"), Value: []byte("c")}})
	got, next, err = decodeBatches("t", 2, legacy, 20, nil)
	want = []Record{
		{Topic: "t", Partition: 2, Offset: 20, LeaderEpoch: -1, Timestamp: time.UnixMilli(-1), Value: []byte("a")},
		{Topic: "t", Partition: 2, Offset: 21, LeaderEpoch: -1, Timestamp: time.UnixMilli(500), Value: []byte("b")},
		{Topic: "t", Partition: 2, Offset: 22, LeaderEpoch: -1, Timestamp: time.UnixMilli(501), Key: []byte("k"), Value: []byte("c")},
	}
	if err != nil || next != 23 || !reflect.DeepEqual(got, want) {
		t.Fatalf("legacy messages: %+v, next %d, %v\nwant %+v", got, next, err, want)
	}
}

// TestDecodeBatchesReadCommitted skips aborted transactions as Kafka's
// consumer does: producer 7's transaction from offset 0 is aborted (its
// ABORT marker at 4), producer 8's committed; producer 7's next transaction
// (from 6) was not aborted. The position moves past the trailing marker.
func TestDecodeBatchesReadCommitted(t *testing.T) {
	txn := func(base, pid int64, values ...string) []byte {
		recs := make([]wire.Record, len(values))
		for i, v := range values {
			recs[i] = wire.Record{OffsetDelta: int32(i), Value: []byte(v)}
		}
		return wire.AppendBatch(nil, wire.BatchHeader{BaseOffset: base, LastOffsetDelta: int32(len(values) - 1),
			ProducerID: pid, Attributes: wire.AttrTransactional}, recs)
	}
	marker := func(base, pid int64, commit bool) []byte {
		b := wire.AppendEndTxnMarkerBatch(nil, pid, 0, 0, wire.EndTxnMarker{Commit: commit})
		wire.SetBaseOffset(b, base)
		return b
	}
	var data []byte
	data = append(data, txn(0, 7, "a0", "a1")...)
	data = append(data, txn(2, 8, "b0", "b1")...)
	data = append(data, marker(4, 7, false)...)
	data = append(data, marker(5, 8, true)...)
	data = append(data, txn(6, 7, "c0")...)
	data = append(data, marker(7, 7, true)...)
	values := func(recs []Record) []string {
		var out []string
		for _, r := range recs {
			out = append(out, string(r.Value))
		}
		return out
	}
	got, next, err := decodeBatches("t", 0, data, 0, []abortedTxn{{producerID: 7, firstOffset: 0}})
	if err != nil || next != 8 {
		t.Fatal(next, err)
	}
	if v := values(got); !reflect.DeepEqual(v, []string{"b0", "b1", "c0"}) {
		t.Fatalf("read_committed %v", v)
	}
	all, _, _ := decodeBatches("t", 0, data, 0, nil)
	if v := values(all); len(v) != 5 {
		t.Fatalf("read_uncommitted %v", v)
	}
}
