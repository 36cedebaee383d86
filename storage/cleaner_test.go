package storage

import (
	"bytes"
	"cmp"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/wire"
)

// keyedBatch is a batch of records with keys and values, without a
// producer, uncompressed; a nil value is a tombstone.
func keyedBatch(ts int64, kv ...[]byte) []byte {
	return keyedBatchOf(plainHeader(ts, wire.CodecNone), kv...)
}

// keyedBatchOf is a batch of keyed records under h, which sets the codec,
// flags, producer fields and first timestamp: record i has offset delta i
// and timestamp h.FirstTimestamp+i.
func keyedBatchOf(h wire.BatchHeader, kv ...[]byte) []byte {
	var recs []wire.Record
	for i := 0; i+1 < len(kv); i += 2 {
		n := len(recs)
		recs = append(recs, wire.Record{TimestampDelta: int64(n), OffsetDelta: int32(n), Key: kv[i], Value: kv[i+1]})
	}
	h.LastOffsetDelta = int32(len(recs) - 1)
	h.MaxTimestamp = h.FirstTimestamp + int64(len(recs)-1)
	return wire.AppendBatch(nil, h, recs)
}

// kvs turns keys and values written as strings into keyedBatchOf's arguments.
func kvs(kv ...string) [][]byte {
	out := make([][]byte, len(kv))
	for i, s := range kv {
		out[i] = []byte(s)
	}
	return out
}

// plainHeader is the header of a batch without a producer.
func plainHeader(ts int64, codec wire.Codec) wire.BatchHeader {
	return wire.BatchHeader{PartitionLeaderEpoch: -1, Attributes: wire.Attributes(codec), FirstTimestamp: ts,
		ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}
}

// producerHeader is the header of a batch of producer pid (epoch 0) from
// sequence seq, transactional when txn.
func producerHeader(ts, pid int64, seq int32, txn bool) wire.BatchHeader {
	h := wire.BatchHeader{PartitionLeaderEpoch: -1, FirstTimestamp: ts, ProducerID: pid, BaseSequence: seq}
	if txn {
		h.Attributes = wire.AttrTransactional
	}
	return h
}

// logBatches reads every batch of the log, from its start to its end.
func logBatches(t *testing.T, l *Log) []decodedBatch {
	t.Helper()
	var out []decodedBatch
	for off := l.LogStartOffset(); off < l.LogEndOffset(); {
		data, err := l.Read(off, 1<<20, l.LogEndOffset(), true)
		if err != nil {
			t.Fatalf("Read(%d): %v", off, err)
		}
		batches := decodeBatches(t, data)
		if len(batches) == 0 {
			break
		}
		out = append(out, batches...)
		last := batches[len(batches)-1]
		off = last.FirstOffset + int64(last.LastOffsetDelta) + 1
	}
	return out
}

// keyedRecord is a record as "offset:key=value" (value "<nil>" for a
// tombstone).
func keyedRecord(b decodedBatch, r kmsg.Record) string {
	v := string(r.Value)
	if r.Value == nil {
		v = "<nil>"
	}
	return fmt.Sprintf("%d:%s=%s", b.FirstOffset+int64(r.OffsetDelta), r.Key, v)
}

// keyedRecords reads the whole log's records as keyedRecord writes them.
func keyedRecords(t *testing.T, l *Log) []string {
	t.Helper()
	var out []string
	for _, b := range logBatches(t, l) {
		for _, r := range b.records {
			out = append(out, keyedRecord(b, r))
		}
	}
	return out
}

// describeLog writes each batch of the log as its offsets, "txn" for a
// transactional data batch, the marker of a control batch ("control" when
// it has none), "empty" for a data batch without records, then its records.
func describeLog(t *testing.T, l *Log) []string {
	t.Helper()
	var out []string
	for _, b := range logBatches(t, l) {
		s := fmt.Sprint(b.FirstOffset)
		if b.LastOffsetDelta > 0 {
			s += fmt.Sprint("-", b.FirstOffset+int64(b.LastOffsetDelta))
		}
		if b.Attributes&wire.AttrControl != 0 {
			m, ok := batchMarker(t, b)
			if !ok {
				out = append(out, s+" control")
			} else {
				out = append(out, s+" "+m.String())
			}
			continue
		}
		if b.Attributes&wire.AttrTransactional != 0 {
			s += " txn"
		}
		if len(b.records) == 0 {
			s += " empty"
		}
		for _, r := range b.records {
			s += " " + keyedRecord(b, r)
		}
		out = append(out, s)
	}
	return out
}

// batchMarker is the transaction marker of a control batch, if it has one.
func batchMarker(t *testing.T, b decodedBatch) (wire.EndTxnMarker, bool) {
	t.Helper()
	if len(b.records) == 0 {
		return wire.EndTxnMarker{}, false
	}
	m, err := wire.ParseEndTxnMarker(wire.Record{Key: b.records[0].Key, Value: b.records[0].Value})
	if err != nil {
		t.Fatalf("control batch at %d: %v", b.FirstOffset, err)
	}
	return m, true
}

// readCommitted is what a read_committed consumer reads of the whole log,
// as keyedRecord writes it: records below the last stable offset, without
// control batches nor the transactions the log reports aborted, skipped as
// Kafka's consumer skips them.
func readCommitted(t *testing.T, l *Log) []string {
	t.Helper()
	lso := l.LastStableOffset()
	aborted := l.AbortedTransactions(l.LogStartOffset(), lso)
	slices.SortFunc(aborted, func(a, b AbortedTxn) int { return cmp.Compare(a.FirstOffset, b.FirstOffset) })
	abortedProducers := map[int64]bool{}
	var out []string
	for _, b := range logBatches(t, l) {
		if b.FirstOffset >= lso {
			break
		}
		for len(aborted) > 0 && aborted[0].FirstOffset <= b.FirstOffset+int64(b.LastOffsetDelta) {
			abortedProducers[aborted[0].ProducerID] = true
			aborted = aborted[1:]
		}
		if b.Attributes&wire.AttrControl != 0 {
			if m, ok := batchMarker(t, b); ok && !m.Commit {
				delete(abortedProducers, b.ProducerID)
			}
			continue
		}
		if b.Attributes&wire.AttrTransactional != 0 && abortedProducers[b.ProducerID] {
			continue
		}
		for _, r := range b.records {
			out = append(out, keyedRecord(b, r))
		}
	}
	return out
}

// loadState is the key → value state a reader builds from the whole log
// when it settles transactions by their markers, as the group coordinator
// loads __consumer_offsets: a transaction's records apply at its COMMIT, go
// at its ABORT and wait while it is open; a tombstone removes its key.
func loadState(t *testing.T, l *Log) map[string]string {
	t.Helper()
	state := map[string]string{}
	apply := func(recs []kmsg.Record) {
		for _, r := range recs {
			if r.Value == nil {
				delete(state, string(r.Key))
			} else {
				state[string(r.Key)] = string(r.Value)
			}
		}
	}
	pending := map[int64][]kmsg.Record{}
	for _, b := range logBatches(t, l) {
		switch {
		case b.Attributes&wire.AttrControl != 0:
			if m, ok := batchMarker(t, b); ok && m.Commit {
				apply(pending[b.ProducerID])
			}
			delete(pending, b.ProducerID)
		case b.Attributes&wire.AttrTransactional != 0:
			pending[b.ProducerID] = append(pending[b.ProducerID], b.records...)
		default:
			apply(b.records)
		}
	}
	return state
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
	// newest record (the batch's third); the cleanable section ends where
	// it did.
	if want := time.UnixMilli(ts + 2).Add(time.Hour); !st.TombstonesDue.Equal(want) || l.CleanableEnd() != st.CleanableEnd {
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

// oneBatchPerSegment is a compacted log's config whose segments hold one
// of the tests' batches each (76 to 150 bytes): the last append is the
// active segment and everything before it may be cleaned.
func oneBatchPerSegment() LogConfig {
	cfg := testConfig()
	cfg.SegmentBytes = 150
	cfg.CleanupPolicy = "compact"
	return cfg
}

// coordinatorAppend appends as the transaction coordinator has a leader
// write its markers.
func coordinatorAppend(t *testing.T, l *Log, batch []byte) {
	t.Helper()
	if _, err := l.AppendAsCoordinator(batch, 0); err != nil {
		t.Fatal(err)
	}
}

// TestCleanerRecompressesCompressedBatches: the records of compressed
// batches take part in deduplication; a batch that loses some is rewritten
// in its codec around the ones kept, with its offsets and timestamps those
// of Kafka's filterTo, and one that keeps them all stays byte for byte.
func TestCleanerRecompressesCompressedBatches(t *testing.T) {
	for _, codec := range []wire.Codec{wire.CodecGzip, wire.CodecSnappy, wire.CodecLZ4, wire.CodecZstd} {
		t.Run(codec.String(), func(t *testing.T) {
			l := openTestLog(t, t.TempDir(), oneBatchPerSegment())
			ts := time.Now().UnixMilli()
			mustAppend(t, l, keyedBatchOf(plainHeader(ts, codec), kvs("k0", "a0", "k1", "a1", "k2", "a2", "k3", "a3")...))
			mustAppend(t, l, keyedBatchOf(plainHeader(ts, codec), kvs("k4", "b4", "k5", "b5")...))
			mustAppend(t, l, keyedBatchOf(plainHeader(ts, wire.CodecNone), kvs("k0", "c0", "k3", "c3")...))
			mustAppend(t, l, keyedBatchOf(plainHeader(ts, wire.CodecNone), kvs("z", "1", "y", "1")...))
			l.SetHighWatermark(l.LogEndOffset())
			if l.NumSegments() != 4 {
				t.Fatalf("%d segments, want one per batch", l.NumSegments())
			}
			whole := storedBatch(t, l, 4)

			st, err := l.Clean(time.Hour, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			want := []string{"1:k1=a1", "2:k2=a2", "4:k4=b4", "5:k5=b5", "6:k0=c0", "7:k3=c3", "8:z=1", "9:y=1"}
			if got := keyedRecords(t, l); !slices.Equal(got, want) || st.RecordsRead != 8 || st.RecordsKept != 6 {
				t.Fatalf("after cleaning: %v (stats %+v), want %v", got, st, want)
			}
			b := logBatches(t, l)[0]
			if b.Attributes != int16(codec) {
				t.Fatalf("rewritten batch has attributes %#x, want codec %s", b.Attributes, codec)
			}
			if b.FirstOffset != 0 || b.LastOffsetDelta != 3 || b.NumRecords != 2 || b.FirstTimestamp != ts+1 || b.MaxTimestamp != ts+2 {
				t.Fatalf("rewritten batch: base %d, last offset delta %d, %d records, timestamps %d-%d; want 0, 3, 2, %d-%d",
					b.FirstOffset, b.LastOffsetDelta, b.NumRecords, b.FirstTimestamp, b.MaxTimestamp, ts+1, ts+2)
			}
			if got := storedBatch(t, l, 4); !bytes.Equal(got, whole) {
				t.Fatal("a compressed batch that kept all its records was rewritten")
			}
		})
	}
}

// storedBatch is the bytes of the batch holding offset, as the log stores it.
func storedBatch(t *testing.T, l *Log, offset int64) []byte {
	t.Helper()
	data, err := l.Read(offset, 1<<20, l.LogEndOffset(), true)
	if err != nil {
		t.Fatal(err)
	}
	b, err := wire.ReadBatch(data)
	if err != nil {
		t.Fatal(err)
	}
	return b.Raw
}

// transactionsLog writes the log TestCleanerTransactions cleans, one batch
// per segment, markers at ts:
//
//	0-1   k=v0 j=j0            2-3   p1 txn k,j (aborted)   4  p1 ABORT
//	5-6   p2 txn k, m          7     p2 COMMIT
//	8-9   p3 txn x, y          10    p3 COMMIT
//	11-12 m=m11 x=x11          13-14 y=y13 z=z13
//	15-16 p1 txn k=open, n     17-18 p2 txn (open)       19-20 p3 txn (open)
//
// The open transactions hold the last stable offset at 15, and they are
// each producer's last batch, so no earlier one is kept for its producer.
func transactionsLog(t *testing.T, l *Log, ts int64) {
	t.Helper()
	txn := func(pid int64, seq int32, kv ...string) []byte {
		return keyedBatchOf(producerHeader(ts, pid, seq, true), kvs(kv...)...)
	}
	end := func(pid int64, commit bool) []byte {
		return wire.AppendEndTxnMarkerBatch(nil, pid, 0, ts, wire.EndTxnMarker{Commit: commit})
	}
	mustAppend(t, l, keyedBatchOf(plainHeader(ts, wire.CodecNone), kvs("k", "v0", "j", "j0")...))
	mustAppend(t, l, txn(1, 0, "k", "aborted", "j", "aborted"))
	coordinatorAppend(t, l, end(1, false))
	mustAppend(t, l, txn(2, 0, "k", "committed", "m", "m2"))
	coordinatorAppend(t, l, end(2, true))
	mustAppend(t, l, txn(3, 0, "x", "p3", "y", "p3"))
	coordinatorAppend(t, l, end(3, true))
	mustAppend(t, l, keyedBatchOf(plainHeader(ts, wire.CodecNone), kvs("m", "m11", "x", "x11")...))
	mustAppend(t, l, keyedBatchOf(plainHeader(ts, wire.CodecNone), kvs("y", "y13", "z", "z13")...))
	mustAppend(t, l, txn(1, 2, "k", "open", "n", "n"))
	mustAppend(t, l, txn(2, 2, "a", "open", "b", "open"))
	mustAppend(t, l, txn(3, 2, "c", "open", "d", "open"))
	l.SetHighWatermark(l.LogEndOffset())
	if l.NumSegments() != 12 || l.LastStableOffset() != 15 {
		t.Fatalf("%d segments, last stable offset %d; want one batch per segment and 15", l.NumSegments(), l.LastStableOffset())
	}
}

// TestCleanerTransactions: the records of an aborted transaction go and
// supersede nothing, committed ones are deduplicated like any others, the
// cleaner stops at the last stable offset, and a marker goes once its
// transaction has no batch left and its segment is older than
// delete.retention.ms; an aborted transaction leaves the index once its
// data is gone.
// A read_committed consumer and a reader that settles transactions by their
// markers see the same data throughout.
func TestCleanerTransactions(t *testing.T) {
	dir := t.TempDir()
	cfg := oneBatchPerSegment()
	l := openTestLog(t, dir, cfg)
	now := time.Now()
	transactionsLog(t, l, now.UnixMilli())
	wantState := map[string]string{"k": "committed", "j": "j0", "m": "m11", "x": "x11", "y": "y13", "z": "z13"}
	if got := loadState(t, l); !maps.Equal(got, wantState) {
		t.Fatalf("loaded before cleaning: %v, want %v", got, wantState)
	}
	wantAborted := map[int64][]AbortedTxn{4: {{ProducerID: 1, FirstOffset: 2, LastOffset: 4, LastStableOffset: 5}}}
	if got := l.TransactionIndexes(); !reflect.DeepEqual(got, wantAborted) {
		t.Fatalf("transaction indexes %v, want %v", got, wantAborted)
	}
	open := []string{"15-16 txn 15:k=open 16:n=n", "17-18 txn 17:a=open 18:b=open", "19-20 txn 19:c=open 20:d=open"}
	check := func(pass string, want []string) {
		t.Helper()
		if got := describeLog(t, l); !slices.Equal(got, want) {
			t.Fatalf("%s:\n%q\nwant\n%q", pass, got, want)
		}
		wantCommitted := []string{"1:j=j0", "5:k=committed", "11:m=m11", "12:x=x11", "13:y=y13", "14:z=z13"}
		if got := readCommitted(t, l); !slices.Equal(got, wantCommitted) {
			t.Fatalf("%s, read_committed: %v, want %v", pass, got, wantCommitted)
		}
		if got := loadState(t, l); !maps.Equal(got, wantState) {
			t.Fatalf("%s, loaded: %v, want %v", pass, got, wantState)
		}
	}

	// The aborted records go, and k=v0 gives way to the committed k; p3's
	// records are all superseded. The markers stay while their
	// transactions' batches were there at the start of the pass.
	st, err := l.Clean(time.Hour, now)
	if err != nil {
		t.Fatal(err)
	}
	check("first pass", append([]string{"0-1 1:j=j0", "4 ABORT", "5-6 txn 5:k=committed", "7 COMMIT", "10 COMMIT",
		"11-12 11:m=m11 12:x=x11", "13-14 13:y=y13 14:z=z13"}, open...))
	if st.AbortedRemoved != 2 || st.MarkersRemoved != 0 || st.CleanableEnd != 15 {
		t.Fatalf("first pass: %+v", st)
	}
	if got := l.TransactionIndexes(); !reflect.DeepEqual(got, wantAborted) {
		t.Fatalf("first pass: transaction indexes %v, want %v", got, wantAborted)
	}
	cleaned := describeLog(t, l)

	// Within delete.retention.ms the markers left without data stay, but
	// the aborted transaction leaves the index: it has nothing to skip.
	st, err = l.Clean(time.Hour, now)
	if err != nil {
		t.Fatal(err)
	}
	check("second pass", cleaned)
	if want := now.Truncate(time.Millisecond).Add(time.Hour); st.MarkersRemoved != 0 || !st.TombstonesDue.Equal(want) {
		t.Fatalf("second pass: %+v; want the markers kept, due at %v", st, want)
	}
	if got := l.TransactionIndexes(); len(got) != 0 {
		t.Fatalf("second pass: transaction indexes %v", got)
	}

	// Past it they go; p2's COMMIT stays, its transaction has a record left.
	st, err = l.Clean(time.Hour, now.Add(2*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	want := append([]string{"0-1 1:j=j0", "5-6 txn 5:k=committed", "7 COMMIT", "11-12 11:m=m11 12:x=x11", "13-14 13:y=y13 14:z=z13"}, open...)
	check("past delete.retention.ms", want)
	if st.MarkersRemoved != 2 {
		t.Fatalf("past delete.retention.ms: %+v", st)
	}

	// The cleaned log and its indexes reopen as they were.
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = openTestLog(t, dir, cfg)
	l.SetHighWatermark(l.LogEndOffset())
	check("reopened", want)
	if len(l.TransactionIndexes()) != 0 {
		t.Fatalf("reopened: transaction indexes %v", l.TransactionIndexes())
	}
}

// TestCleanerKeepsProducersLastBatch: a batch left with no records stays,
// empty, when it is its producer's last one (Kafka's RETAIN_EMPTY), so the
// producer state replayed from the cleaned log is the one before; and an
// aborted transaction kept that way keeps its marker and its index entry.
// A producer whose last entry is a marker of a newer epoch keeps that
// marker, emptied once its transaction's data is gone, until it writes
// again.
//
//	0-1 p5 (gzip) a, b        2-3 p6 txn c, d      4 p6 ABORT
//	5-6 p7 txn g, h           7   p7 ABORT (epoch 1, a timed out transaction)
//	8-9 a=2 b=2               10-11 e, f (active)
func TestCleanerKeepsProducersLastBatch(t *testing.T) {
	dir := t.TempDir()
	cfg := oneBatchPerSegment()
	// The batches up to offset 9 share a segment, so that its rewrite
	// carries its transaction index over.
	big := cfg
	big.SegmentBytes = testConfig().SegmentBytes
	l := openTestLog(t, dir, big)
	now := time.Now()
	ts := now.UnixMilli()
	idempotent := producerHeader(ts, 5, 0, false)
	idempotent.Attributes = wire.Attributes(wire.CodecGzip)
	mustAppend(t, l, keyedBatchOf(idempotent, kvs("a", "1", "b", "1")...))
	mustAppend(t, l, keyedBatchOf(producerHeader(ts, 6, 0, true), kvs("c", "x", "d", "x")...))
	coordinatorAppend(t, l, wire.AppendEndTxnMarkerBatch(nil, 6, 0, ts, wire.EndTxnMarker{}))
	mustAppend(t, l, keyedBatchOf(producerHeader(ts, 7, 0, true), kvs("g", "x", "h", "x")...))
	coordinatorAppend(t, l, wire.AppendEndTxnMarkerBatch(nil, 7, 1, ts, wire.EndTxnMarker{}))
	mustAppend(t, l, keyedBatchOf(plainHeader(ts, wire.CodecNone), kvs("a", "2", "b", "2")...))
	if err := l.SetConfig(cfg); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, l, keyedBatchOf(plainHeader(ts, wire.CodecNone), kvs("e", "1", "f", "1")...))
	l.SetHighWatermark(l.LogEndOffset())
	if l.NumSegments() != 2 {
		t.Fatalf("%d segments, want 2", l.NumSegments())
	}
	wantAborted := map[int64][]AbortedTxn{0: {
		{ProducerID: 6, FirstOffset: 2, LastOffset: 4, LastStableOffset: 5},
		{ProducerID: 7, FirstOffset: 5, LastOffset: 7, LastStableOffset: 8},
	}}
	states := l.ProducerStates()
	wantState := map[string]string{"a": "2", "b": "2", "e": "1", "f": "1"}
	wantCommitted := []string{"8:a=2", "9:b=2", "10:e=1", "11:f=1"}
	later := now.Add(2 * time.Hour)

	if _, err := l.Clean(time.Hour, later); err != nil {
		t.Fatal(err)
	}
	want := []string{"0-1 empty", "2-3 txn empty", "4 ABORT", "7 ABORT", "8-9 8:a=2 9:b=2", "10-11 10:e=1 11:f=1"}
	if got := describeLog(t, l); !slices.Equal(got, want) {
		t.Fatalf("first pass:\n%q\nwant\n%q", got, want)
	}
	if got := l.TransactionIndexes(); !reflect.DeepEqual(got, wantAborted) {
		t.Fatalf("first pass: transaction indexes %v, want %v", got, wantAborted)
	}
	// The empty batches keep their headers as Kafka's writeEmptyHeader
	// writes them: uncompressed, no first timestamp.
	batches := logBatches(t, l)
	for i, attrs := range []int16{0, wire.AttrTransactional} {
		b := batches[i]
		if b.Attributes != attrs || b.LastOffsetDelta != 1 || b.FirstTimestamp != -1 || b.MaxTimestamp != ts+1 ||
			b.ProducerID != int64(5+i) || b.ProducerEpoch != 0 || b.FirstSequence != 0 || b.NumRecords != 0 {
			t.Fatalf("empty batch %d: %+v", i, b.RecordBatch)
		}
	}

	// The next pass empties p7's marker, its data gone: the marker is all
	// that holds p7's epoch.
	if _, err := l.Clean(time.Hour, later); err != nil {
		t.Fatal(err)
	}
	want[3] = "7 control"
	if got := describeLog(t, l); !slices.Equal(got, want) {
		t.Fatalf("second pass:\n%q\nwant\n%q", got, want)
	}
	wantAborted[0] = wantAborted[0][:1]
	if got := l.TransactionIndexes(); !reflect.DeepEqual(got, wantAborted) {
		t.Fatalf("second pass: transaction indexes %v, want %v", got, wantAborted)
	}
	if got := readCommitted(t, l); !slices.Equal(got, wantCommitted) {
		t.Fatalf("read_committed: %v, want %v", got, wantCommitted)
	}
	if got := loadState(t, l); !maps.Equal(got, wantState) {
		t.Fatalf("loaded: %v, want %v", got, wantState)
	}
	if st, err := l.Clean(time.Hour, later); err != nil || st.Segments != 0 {
		t.Fatalf("a third pass rewrote %d segments (%v)", st.Segments, err)
	}

	// Once p7 writes again, its emptied marker holds nothing and goes.
	p7 := producerHeader(ts, 7, 0, false)
	p7.ProducerEpoch = 1
	mustAppend(t, l, keyedBatchOf(p7, kvs("g", "y", "h", "y")...))
	l.SetHighWatermark(l.LogEndOffset())
	if _, err := l.Clean(time.Hour, later); err != nil {
		t.Fatal(err)
	}
	want = append(slices.Delete(want, 3, 4), "12-13 12:g=y 13:h=y")
	if got := describeLog(t, l); !slices.Equal(got, want) {
		t.Fatalf("after p7 wrote again:\n%q\nwant\n%q", got, want)
	}

	// Replayed from the cleaned log, p5 and p6 are as they were. An empty
	// marker carries no epoch to replay, in Kafka too, so p7 is left out.
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	removeSnapshots(t, dir)
	l = openTestLog(t, dir, cfg)
	replayed := l.ProducerStates()
	delete(states, 7)
	delete(replayed, 7)
	if !equalStates(replayed, states) {
		t.Fatalf("replayed producer state %+v, want %+v", replayed, states)
	}
	if got := l.TransactionIndexes(); !reflect.DeepEqual(got, wantAborted) {
		t.Fatalf("reopened: transaction indexes %v, want %v", got, wantAborted)
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
