package storage

import (
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/zkafka/zkafka/wire"
)

// txnBatch is a transactional producer batch of n records.
func txnBatch(pid int64, epoch int16, seq int32, n int) []byte {
	recs := make([]wire.Record, n)
	for i := range recs {
		recs[i] = wire.Record{OffsetDelta: int32(i), Value: []byte(strings.Repeat("v", 40))}
	}
	h := wire.BatchHeader{
		PartitionLeaderEpoch: -1, Attributes: wire.AttrTransactional, LastOffsetDelta: int32(n - 1),
		FirstTimestamp: 1, MaxTimestamp: 1, ProducerID: pid, ProducerEpoch: epoch, BaseSequence: seq,
	}
	return wire.AppendBatch(nil, h, recs)
}

func marker(pid int64, epoch int16, commit bool, coordinatorEpoch int32) []byte {
	return wire.AppendEndTxnMarkerBatch(nil, pid, epoch, 2, wire.EndTxnMarker{Commit: commit, CoordinatorEpoch: coordinatorEpoch})
}

// txnLog writes three producers' transactions, some spanning segments: the
// index and LSO below are what Kafka computes for the same appends.
//
//	offset  0-1  p1 data (txn A)        offset  2-3  p2 data (txn B)
//	offset  4    p1 ABORT (A)           offset  5-6  p3 data (txn C)
//	offset  7    p2 COMMIT (B)          offset  8-9  p1 data (txn D)
//	offset 10    p3 ABORT (C)           (D stays open)
func txnLog(t *testing.T, l *Log) {
	t.Helper()
	steps := []struct {
		batch       []byte
		coordinator bool
	}{
		{txnBatch(1, 0, 0, 2), false}, {txnBatch(2, 0, 0, 2), false}, {marker(1, 0, false, 3), true},
		{txnBatch(3, 0, 0, 2), false}, {marker(2, 0, true, 3), true}, {txnBatch(1, 0, 2, 2), false},
		{marker(3, 0, false, 3), true},
	}
	for _, s := range steps {
		var err error
		if s.coordinator {
			_, err = l.AppendAsCoordinator(s.batch, 0)
		} else {
			_, err = l.AppendAsLeader(s.batch, 0)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

var wantAborted = []AbortedTxn{
	{ProducerID: 1, FirstOffset: 0, LastOffset: 4, LastStableOffset: 2},
	{ProducerID: 3, FirstOffset: 5, LastOffset: 10, LastStableOffset: 8},
}

func allAborted(l *Log) []AbortedTxn {
	idx := l.TransactionIndexes()
	var out []AbortedTxn
	for _, base := range slices.Sorted(maps.Keys(idx)) {
		out = append(out, idx[base]...)
	}
	return out
}

func TestLastStableOffsetAndAbortedTransactionIndex(t *testing.T) {
	l := openTestLog(t, t.TempDir(), testConfig())
	if _, err := l.AppendAsLeader(txnBatch(1, 0, 0, 2), 0); err != nil {
		t.Fatal(err)
	}
	l.SetHighWatermark(2)
	if lso := l.LastStableOffset(); lso != 0 {
		t.Fatalf("LSO with an open transaction at 0: %d", lso)
	}
	txnLogRest := func() {
		for _, s := range []struct {
			b     []byte
			coord bool
		}{{txnBatch(2, 0, 0, 2), false}, {marker(1, 0, false, 3), true}, {txnBatch(3, 0, 0, 2), false},
			{marker(2, 0, true, 3), true}, {txnBatch(1, 0, 2, 2), false}, {marker(3, 0, false, 3), true}} {
			var err error
			if s.coord {
				_, err = l.AppendAsCoordinator(s.b, 0)
			} else {
				_, err = l.AppendAsLeader(s.b, 0)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	txnLogRest()
	if got := allAborted(l); !reflect.DeepEqual(got, wantAborted) {
		t.Fatalf("aborted index %+v, want %+v", got, wantAborted)
	}
	// A closed transaction stays unstable until the high watermark passes its marker.
	for _, c := range []struct{ hw, lso int64 }{{4, 0}, {5, 2}, {7, 2}, {8, 5}, {11, 8}} {
		l.SetHighWatermark(c.hw)
		if lso := l.LastStableOffset(); lso != c.lso {
			t.Fatalf("high watermark %d: LSO %d, want %d", c.hw, lso, c.lso)
		}
	}
	if got := l.AbortedTransactions(3, 6); !reflect.DeepEqual(got, wantAborted) {
		t.Fatalf("aborted in [3, 6): %+v", got)
	}
	if got := l.AbortedTransactions(5, 8); !reflect.DeepEqual(got, wantAborted[1:]) {
		t.Fatalf("aborted in [5, 8): %+v", got)
	}
	if got := l.AbortedTransactions(0, 2); !reflect.DeepEqual(got, wantAborted[:1]) {
		t.Fatalf("aborted in [0, 2): %+v", got)
	}
	st := l.ProducerStates()
	if st[1].CurrentTxnFirstOffset != 8 || st[2].CurrentTxnFirstOffset != -1 || st[2].CoordinatorEpoch != 3 {
		t.Fatalf("producer state %+v", st)
	}
}

func TestTransactionalAppendErrors(t *testing.T) {
	l := openTestLog(t, t.TempDir(), testConfig())
	mustAppend(t, l, txnBatch(1, 1, 0, 1))
	_, err := l.AppendAsLeader(producerBatch(1, 1, 1, "plain"), 0)
	wantKerr(t, err, kerr.InvalidTxnState)
	_, err = l.AppendAsLeader(txnBatch(1, 0, 0, 1), 0)
	wantKerr(t, err, kerr.InvalidProducerEpoch)
	if _, err := l.AppendAsCoordinator(marker(1, 1, true, 5), 0); err != nil {
		t.Fatal(err)
	}
	_, err = l.AppendAsCoordinator(marker(1, 1, false, 4), 0)
	wantKerr(t, err, kerr.TransactionCoordinatorFenced)
	_, err = l.AppendAsCoordinator(marker(1, 0, false, 6), 0)
	wantKerr(t, err, kerr.InvalidProducerEpoch)
	_, err = l.AppendAsLeader(marker(1, 1, true, 6), 0)
	wantKerr(t, err, kerr.InvalidRecord)
	// A marker bumps the producer's epoch: the zombie's data is refused.
	if _, err := l.AppendAsCoordinator(marker(1, 2, false, 6), 0); err != nil {
		t.Fatal(err)
	}
	_, err = l.AppendAsLeader(txnBatch(1, 1, 1, 1), 0)
	wantKerr(t, err, kerr.InvalidProducerEpoch)
	if lso := l.LastStableOffset(); lso != l.HighWatermark() {
		t.Fatalf("LSO %d with no transaction open, high watermark %d", lso, l.HighWatermark())
	}
}

// readTxnIndexFiles returns the bytes of every .txnindex file of a log.
func readTxnIndexFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	names, _ := filepath.Glob(filepath.Join(dir, "*"+txnIndexSuffix))
	for _, n := range names {
		data, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(n)] = data
	}
	return out
}

// TestTransactionIndexRebuiltIdenticallyOnRecovery: a clean reopen trusts
// the indexes; a crash (no snapshot, indexes gone, everything recovered)
// rebuilds them and the LSO byte for byte, across segments; a follower
// replicating the leader's batches builds the same; truncation below a
// marker reopens its transaction.
func TestTransactionIndexRebuiltIdenticallyOnRecovery(t *testing.T) {
	cfg := testConfig()
	cfg.SegmentBytes = 400 // a segment holds about three batches
	dir := t.TempDir()
	l, err := Open(dir, cfg, 0, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	txnLog(t, l)
	l.SetHighWatermark(l.LogEndOffset())
	if got := allAborted(l); !reflect.DeepEqual(got, wantAborted) {
		t.Fatalf("aborted index %+v", got)
	}
	wantLSO := l.LastStableOffset()
	if l.NumSegments() < 3 {
		t.Fatalf("%d segments: the test needs transactions across segments", l.NumSegments())
	}
	all := []byte{}
	for off := int64(0); off < l.LogEndOffset(); {
		data, err := l.Read(off, 1<<20, l.LogEndOffset(), true)
		if err != nil || len(data) == 0 {
			t.Fatal(err)
		}
		all = append(all, data...)
		for b, err := range wire.Batches(data) {
			if err != nil {
				t.Fatal(err)
			}
			off = b.LastOffset() + 1
		}
	}
	files := readTxnIndexFiles(t, dir)
	if len(files) != 2 {
		t.Fatalf("txnindex files %v", slices.Collect(maps.Keys(files)))
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

	check := func(what string, l *Log) {
		t.Helper()
		l.SetHighWatermark(l.LogEndOffset())
		if got := allAborted(l); !reflect.DeepEqual(got, wantAborted) {
			t.Fatalf("%s: aborted index %+v", what, got)
		}
		if lso := l.LastStableOffset(); lso != wantLSO {
			t.Fatalf("%s: LSO %d, want %d", what, lso, wantLSO)
		}
	}
	clean, err := Open(dir, cfg, 1<<40, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	check("clean reopen", clean)
	clean.Close()

	snaps, _ := filepath.Glob(filepath.Join(dir, "*"+producerSnapshotSuffix))
	idx, _ := filepath.Glob(filepath.Join(dir, "*"+txnIndexSuffix))
	for _, f := range append(snaps, idx...) {
		os.Remove(f)
	}
	crashed, err := Open(dir, cfg, 0, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	check("recovery", crashed)
	if got := readTxnIndexFiles(t, dir); !reflect.DeepEqual(got, files) {
		t.Fatal("recovered .txnindex files differ from the ones written")
	}

	follower := openTestLog(t, t.TempDir(), cfg)
	for b, err := range wire.Batches(all) {
		if err != nil {
			t.Fatal(err)
		}
		if _, err := follower.AppendAsFollower(append([]byte(nil), b.Raw...)); err != nil {
			t.Fatal(err)
		}
	}
	check("follower", follower)

	// Truncating below C's abort marker reopens C: the LSO falls to its start and its entry goes.
	if err := crashed.Truncate(10); err != nil {
		t.Fatal(err)
	}
	if got := allAborted(crashed); !reflect.DeepEqual(got, wantAborted[:1]) {
		t.Fatalf("after truncation: aborted index %+v", got)
	}
	crashed.SetHighWatermark(crashed.LogEndOffset())
	if lso := crashed.LastStableOffset(); lso != 5 {
		t.Fatalf("after truncation: LSO %d, want 5", lso)
	}
	crashed.Close()
}
