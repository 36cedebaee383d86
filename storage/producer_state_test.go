package storage

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"maps"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/wire"
)

// producerBatch is a batch of an idempotent producer: its id, epoch and the
// sequence of its first record.
func producerBatch(pid int64, epoch int16, seq int32, values ...string) []byte {
	return producerBatchAt(1, pid, epoch, seq, values...)
}

// producerBatchAt is producerBatch with the timestamp ts (ms).
func producerBatchAt(ts, pid int64, epoch int16, seq int32, values ...string) []byte {
	var recs []byte
	for i, v := range values {
		recs = appendRecord(recs, kmsg.Record{OffsetDelta: int32(i), Value: []byte(v)})
	}
	n := int32(len(values))
	b := kmsg.RecordBatch{
		Length: int32(wire.MinBatchLength + len(recs)), PartitionLeaderEpoch: -1, Magic: 2,
		LastOffsetDelta: n - 1, FirstTimestamp: ts, MaxTimestamp: ts,
		ProducerID: pid, ProducerEpoch: epoch, FirstSequence: seq, NumRecords: n, Records: recs,
	}
	raw := b.AppendTo(nil)
	binary.BigEndian.PutUint32(raw[wire.PosCRC:], crc32.Checksum(raw[wire.PosAttributes:], crc32.MakeTable(crc32.Castagnoli)))
	return raw
}

func TestIdempotentProducerState(t *testing.T) {
	dir := t.TempDir()
	l := openTestLog(t, dir, testConfig())
	appendB := func(b []byte) (AppendInfo, error) { return l.AppendAsLeader(b, 0) }

	if info, err := appendB(producerBatch(7, 0, 0, "a", "b")); err != nil || info.FirstOffset != 0 {
		t.Fatalf("first batch: %+v %v", info, err)
	}
	if info, err := appendB(producerBatch(7, 0, 2, "c")); err != nil || info.FirstOffset != 2 {
		t.Fatalf("second batch: %+v %v", info, err)
	}
	// A retry of the first batch is not written again; the original offsets come back.
	if info, err := appendB(producerBatch(7, 0, 0, "a", "b")); err != nil || info.FirstOffset != 0 || info.LastOffset != 1 {
		t.Fatalf("duplicate: %+v %v", info, err)
	}
	if l.LogEndOffset() != 3 {
		t.Fatalf("LEO %d after a duplicate, want 3", l.LogEndOffset())
	}
	if _, err := appendB(producerBatch(7, 0, 5, "gap")); !errors.Is(err, kerr.OutOfOrderSequenceNumber) {
		t.Fatalf("sequence gap: %v, want OUT_OF_ORDER_SEQUENCE_NUMBER", err)
	}
	if _, err := appendB(producerBatch(7, 1, 3, "new epoch, not from 0")); !errors.Is(err, kerr.OutOfOrderSequenceNumber) {
		t.Fatalf("new epoch at sequence 3: %v, want OUT_OF_ORDER_SEQUENCE_NUMBER", err)
	}
	if _, err := appendB(producerBatch(7, 1, 0, "d")); err != nil {
		t.Fatalf("new epoch from 0: %v", err)
	}
	if _, err := appendB(producerBatch(7, 0, 3, "fenced")); !errors.Is(err, kerr.InvalidProducerEpoch) {
		t.Fatalf("old epoch: %v, want INVALID_PRODUCER_EPOCH", err)
	}
	// Kafka 2.8 accepts any sequence from a producer it knows nothing of.
	if _, err := appendB(producerBatch(8, 0, 40, "x")); err != nil {
		t.Fatalf("unknown producer: %v", err)
	}
	if l.LogEndOffset() != 5 {
		t.Fatalf("LEO %d, want 5", l.LogEndOffset())
	}
	want := l.ProducerStates()

	// Close writes a snapshot; a reopened log has the same state and still
	// recognises the retry.
	l.Close()
	l2 := openTestLog(t, dir, testConfig())
	if got := l2.ProducerStates(); !equalStates(got, want) {
		t.Fatalf("after reopen: %+v, want %+v", got, want)
	}
	if info, err := l2.AppendAsLeader(producerBatch(7, 1, 0, "d"), 0); err != nil || info.FirstOffset != 3 {
		t.Fatalf("duplicate after reopen: %+v %v", info, err)
	}

	// Truncation rebuilds the state from the log that is left.
	if err := l2.Truncate(3); err != nil {
		t.Fatal(err)
	}
	st := l2.ProducerStates()
	if e := st[7]; e.Epoch != 0 || len(e.Batches) != 2 || e.Batches[1].LastSeq != 2 {
		t.Fatalf("producer 7 after truncation: %+v", e)
	}
	if _, ok := st[8]; ok {
		t.Fatal("producer 8 survived the truncation of its only batch")
	}
}

func TestProducerStateRebuiltWithoutSnapshotAndOnFollower(t *testing.T) {
	leaderDir, followerDir := t.TempDir(), t.TempDir()
	leader := openTestLog(t, leaderDir, testConfig())
	for seq := int32(0); seq < 8; seq++ {
		if _, err := leader.AppendAsLeader(producerBatch(3, 2, seq, "v"), 5); err != nil {
			t.Fatal(err)
		}
	}
	data, err := leader.Read(0, 1<<20, leader.LogEndOffset(), true)
	if err != nil {
		t.Fatal(err)
	}
	follower := openTestLog(t, followerDir, testConfig())
	if _, err := follower.AppendAsFollower(data); err != nil {
		t.Fatal(err)
	}
	want := leader.ProducerStates()
	if len(want[3].Batches) != maxProducerBatches || want[3].Batches[0].FirstSeq != 3 {
		t.Fatalf("leader keeps %+v, want the last %d batches", want[3], maxProducerBatches)
	}
	if got := follower.ProducerStates(); !equalStates(got, want) {
		t.Fatalf("follower %+v, leader %+v", got, want)
	}
	// A crash leaves no snapshot: the state comes from replaying the log.
	follower.Close()
	removeSnapshots(t, followerDir)
	reopened := openTestLog(t, followerDir, testConfig())
	if got := reopened.ProducerStates(); !equalStates(got, want) {
		t.Fatalf("replayed %+v, want %+v", got, want)
	}
}

func removeSnapshots(t *testing.T, dir string) {
	offsets, err := listSnapshots(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, off := range offsets {
		if err := os.Remove(snapshotPath(dir, off)); err != nil {
			t.Fatal(err)
		}
	}
}

func equalStates(a, b map[int64]ProducerEntry) bool {
	if len(a) != len(b) {
		return false
	}
	for id, e := range a {
		o, ok := b[id]
		if !ok || o.Epoch != e.Epoch || !slices.Equal(o.Batches, e.Batches) {
			return false
		}
	}
	return true
}

// TestRemoveExpiredProducers forgets a producer idle for transactional.id.expiration.ms, keeps one
// that wrote within it and one whose transaction is still open however old, as Kafka 2.8's
// removeExpiredProducers does.
func TestRemoveExpiredProducers(t *testing.T) {
	l := openTestLog(t, t.TempDir(), testConfig())
	const hour = int64(time.Hour / time.Millisecond)
	now := 10 * hour
	for _, b := range [][]byte{producerBatchAt(1, 7, 0, 0, "idle"), producerBatchAt(now-1000, 9, 0, 0, "recent"), txnBatch(8, 0, 0, 1)} {
		if _, err := l.AppendAsLeader(b, 0); err != nil {
			t.Fatal(err)
		}
	}
	if n := l.RemoveExpiredProducers(now, time.Hour); n != 1 {
		t.Errorf("removed %d producers, want 1", n)
	}
	got := slices.Sorted(maps.Keys(l.ProducerStates()))
	if !slices.Equal(got, []int64{8, 9}) {
		t.Errorf("producers left %v, want [8 9]: the open transaction's and the recent one", got)
	}
	if n := l.RemoveExpiredProducers(now+2*hour, time.Hour); n != 1 || len(l.ProducerStates()) != 1 {
		t.Errorf("two hours later: removed %d, left %v; want the recent one gone, the open transaction kept", n, l.ProducerStates())
	}
}
