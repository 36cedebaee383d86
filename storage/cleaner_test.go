package storage

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/wire"
)

// keyedBatch is a batch of records with keys and values; a nil value is a
// tombstone.
func keyedBatch(ts int64, kv ...[]byte) []byte {
	var recs []byte
	for i := 0; i+1 < len(kv); i += 2 {
		recs = appendRecord(recs, kmsg.Record{OffsetDelta: int32(i / 2), Key: kv[i], Value: kv[i+1]})
	}
	return encodeBatch(recs, int32(len(kv)/2), ts, ts, 0)
}

// keyedRecords reads the whole log as "offset:key=value" (value "<nil>" for
// a tombstone).
func keyedRecords(t *testing.T, l *Log) []string {
	t.Helper()
	var out []string
	for off := l.LogStartOffset(); off < l.LogEndOffset(); {
		data, err := l.Read(off, 1<<20, l.LogEndOffset(), true)
		if err != nil {
			t.Fatalf("Read(%d): %v", off, err)
		}
		batches := decodeBatches(t, data)
		if len(batches) == 0 {
			break
		}
		for _, b := range batches {
			for _, r := range b.records {
				v := string(r.Value)
				if r.Value == nil {
					v = "<nil>"
				}
				out = append(out, fmt.Sprintf("%d:%s=%s", b.FirstOffset+int64(r.OffsetDelta), r.Key, v))
			}
			off = b.FirstOffset + int64(b.LastOffsetDelta) + 1
		}
	}
	return out
}

func TestCleanerKeepsTheLatestRecordOfEachKey(t *testing.T) {
	cfg := testConfig()
	cfg.SegmentBytes = 150 // about two batches
	cfg.CleanupPolicy = "compact"
	dir := t.TempDir()
	l := openTestLog(t, dir, cfg)
	ts := time.Now().UnixMilli()
	b := func(s string) []byte { return []byte(s) }
	// Offsets 0-2, 3-5, 6-8, 9-11: three keys updated four times, k1
	// deleted last; then an active segment with k3.
	mustAppend(t, l, keyedBatch(ts, b("k0"), b("a0"), b("k1"), b("a1"), b("k2"), b("a2")))
	mustAppend(t, l, keyedBatch(ts, b("k0"), b("b0"), b("k1"), b("b1"), b("k2"), b("b2")))
	mustAppend(t, l, keyedBatch(ts, b("k0"), b("c0"), b("k1"), b("c1"), b("k2"), b("c2")))
	mustAppend(t, l, keyedBatch(ts, b("k0"), b("d0"), b("k1"), nil, b("k2"), b("d2")))
	for range 3 {
		mustAppend(t, l, keyedBatch(ts, b("k3"), b("x")))
	}
	if l.NumSegments() < 3 {
		t.Fatalf("%d segments; the test needs several", l.NumSegments())
	}
	hw := l.LogEndOffset()
	l.SetHighWatermark(hw)
	before := keyedRecords(t, l)

	st, err := l.Clean(time.Hour, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	after := keyedRecords(t, l)
	// Only the cleanable section (below the active segment) is deduplicated:
	// its last k3 may have a later copy in the active segment.
	wantPrefix := []string{"9:k0=d0", "10:k1=<nil>", "11:k2=d2"}
	if !slices.Equal(after[:3], wantPrefix) {
		t.Fatalf("after cleaning:\n%v\nwant it to start with %v (before: %v)", after, wantPrefix, before)
	}
	if st.Segments == 0 || st.TombstonesRemoved != 0 || l.LogEndOffset() != hw {
		t.Fatalf("stats %+v, LEO %d (was %d)", st, l.LogEndOffset(), hw)
	}
	// The kept tombstone becomes removable an hour after its segment's
	// newest record; the cleanable section ends where it did.
	if want := time.UnixMilli(ts).Add(time.Hour); !st.TombstonesDue.Equal(want) || l.CleanableEnd() != st.CleanableEnd {
		t.Fatalf("tombstones due %v (want %v), cleanable end %d (stats %d)", st.TombstonesDue, want, l.CleanableEnd(), st.CleanableEnd)
	}
	// A read at a cleaned-away offset returns the next record kept.
	data, err := l.Read(4, 1<<20, hw, true)
	if err != nil || offsetsOf(t, data)[0] != 9 {
		t.Fatalf("Read(4) after cleaning: %v %v", offsetsOf(t, data), err)
	}

	// Past delete.retention.ms the tombstone goes too.
	st, err = l.Clean(time.Hour, time.Now().Add(2*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	after = keyedRecords(t, l)
	if st.TombstonesRemoved != 1 || slices.Contains(after, "10:k1=<nil>") {
		t.Fatalf("tombstone not removed after delete.retention.ms: %+v %v", st, after)
	}

	// The cleaned log reopens with the same content, indexes rebuilt.
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l2 := openTestLog(t, dir, cfg)
	l2.SetHighWatermark(l2.LogEndOffset())
	if got := keyedRecords(t, l2); !slices.Equal(got, after) || l2.LogEndOffset() != hw {
		t.Fatalf("after reopening: %v (LEO %d), want %v (LEO %d)", got, l2.LogEndOffset(), after, hw)
	}
}

func TestCleanerLeavesDeleteLogsAndUnreplicatedData(t *testing.T) {
	cfg := testConfig()
	cfg.SegmentBytes = 400
	l := openTestLog(t, t.TempDir(), cfg)
	ts := time.Now().UnixMilli()
	for range 6 {
		mustAppend(t, l, keyedBatch(ts, []byte("k"), []byte("v")))
	}
	l.SetHighWatermark(l.LogEndOffset())
	if st, err := l.Clean(0, time.Now()); err != nil || st.Segments != 0 {
		t.Fatalf("a delete-policy log was cleaned: %+v %v", st, err)
	}
	cfg.CleanupPolicy = "compact"
	l2 := openTestLog(t, t.TempDir(), cfg)
	for range 6 {
		mustAppend(t, l2, keyedBatch(ts, []byte("k"), []byte("v")))
	}
	// The high watermark at 0: nothing is cleanable.
	if st, err := l2.Clean(0, time.Now()); err != nil || st.Segments != 0 {
		t.Fatalf("records above the high watermark were cleaned: %+v %v", st, err)
	}
}

// TestCleanerKeepsTransactionalBatches: a transactional record, committed
// or aborted, neither goes nor removes the earlier record of its key, so
// readers settle it by its marker.
func TestCleanerKeepsTransactionalBatches(t *testing.T) {
	cfg := testConfig()
	cfg.SegmentBytes = 150
	cfg.CleanupPolicy = "compact"
	l := openTestLog(t, t.TempDir(), cfg)
	ts := time.Now().UnixMilli()
	mustAppend(t, l, keyedBatch(ts, []byte("k"), []byte("plain")))
	txn := wire.AppendBatch(nil, wire.BatchHeader{
		PartitionLeaderEpoch: -1, Attributes: wire.AttrTransactional, FirstTimestamp: ts, MaxTimestamp: ts,
		ProducerID: 7, BaseSequence: 0,
	}, []wire.Record{{Key: []byte("k"), Value: []byte("aborted")}})
	mustAppend(t, l, txn)
	if _, err := l.AppendAsCoordinator(marker(7, 0, false, 0), 0); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		mustAppend(t, l, keyedBatch(ts, []byte("other"), []byte("x")))
	}
	l.SetHighWatermark(l.LogEndOffset())
	if _, err := l.Clean(time.Hour, time.Now()); err != nil {
		t.Fatal(err)
	}
	got := keyedRecords(t, l)
	if !slices.Contains(got, "0:k=plain") || !slices.Contains(got, "1:k=aborted") {
		t.Fatalf("after cleaning: %v", got)
	}
}

// TestCleanerDirtyRatio: a compacted log is due for cleaning once its dirty bytes reach
// min.cleanable.dirty.ratio of its cleanable bytes, or its oldest dirty segment
// max.compaction.lag.ms; a pass ends the dirty section at its cleanable end; segments younger than
// min.compaction.lag.ms stay out; the first dirty offset survives a restart in the dir's
// cleaner-offset-checkpoint, as Kafka's LogCleanerManager keeps it.
func TestCleanerDirtyRatio(t *testing.T) {
	cfg := testConfig()
	cfg.SegmentBytes = 150 // about two batches
	cfg.CleanupPolicy = "compact"
	cfg.MinCleanableDirtyRatio = 0.9
	dir := t.TempDir()
	m := newTestManager(t, []string{dir}, cfg)
	l, err := m.GetOrCreate("c", 0, cfg)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	old := now.Add(-time.Hour).UnixMilli()
	b := func(s string) []byte { return []byte(s) }
	write := func(ts int64, n int) {
		for i := range n {
			mustAppend(t, l, keyedBatch(ts, b(fmt.Sprint("k", i%2)), b(fmt.Sprint("v", i))))
		}
		l.SetHighWatermark(l.LogEndOffset())
	}
	write(old, 8)
	if ratio, due := l.DirtyRatio(now); ratio != 1 || !due {
		t.Fatalf("never cleaned: ratio %.2f, due %v; want 1 and due", ratio, due)
	}
	st, err := l.Clean(time.Hour, now)
	if err != nil {
		t.Fatal(err)
	}
	if got := l.FirstDirtyOffset(); got != st.CleanableEnd || got == 0 {
		t.Fatalf("first dirty offset %d after a pass ending at %d", got, st.CleanableEnd)
	}
	if _, due := l.DirtyRatio(now); due {
		t.Fatal("due again right after a pass, with nothing written")
	}

	// A little more: dirty, but far below 90% of the cleanable bytes.
	write(old, 2)
	mustAppend(t, l, keyedBatch(old, b("k9"), b("roll")))
	l.SetHighWatermark(l.LogEndOffset())
	ratio, due := l.DirtyRatio(now)
	if ratio <= 0 || ratio >= 0.9 || due {
		t.Fatalf("a little dirty: ratio %.2f, due %v; want between 0 and 0.9, not due", ratio, due)
	}
	// The same log with a max.compaction.lag.ms its oldest dirty record exceeds is due anyway.
	lagged := cfg
	lagged.MaxCompactionLagMs = time.Minute.Milliseconds()
	if err := l.SetConfig(lagged); err != nil {
		t.Fatal(err)
	}
	if _, due := l.DirtyRatio(now); !due {
		t.Fatal("dirty for an hour with max.compaction.lag.ms one minute: not due")
	}
	// With min.compaction.lag.ms longer than the records' age nothing is cleanable.
	young := cfg
	young.MinCleanableDirtyRatio, young.MinCompactionLagMs = 0, 2*time.Hour.Milliseconds()
	if err := l.SetConfig(young); err != nil {
		t.Fatal(err)
	}
	if ratio, due := l.DirtyRatio(now); ratio != 0 || due {
		t.Fatalf("records younger than min.compaction.lag.ms: ratio %.2f, due %v; want nothing cleanable", ratio, due)
	}

	first := l.FirstDirtyOffset()
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	m2 := newTestManager(t, []string{dir}, cfg)
	l2, ok := m2.Get("c", 0)
	if !ok || l2.FirstDirtyOffset() != first {
		t.Fatalf("after a restart: first dirty offset %d, want %d from %s", l2.FirstDirtyOffset(), first, CleanerOffsetCheckpointFile)
	}
}
