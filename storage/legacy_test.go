package storage

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/zkafka/zkafka/wire"
)

func legacyConfig(magic int8) LogConfig {
	cfg := testConfig()
	cfg.MessageFormat = magic
	return cfg
}

// storedMessages reads the whole log through wire's reader: each stored batch's magic and (shallow) base
// offset, and every record as "offset@timestamp:key=value".
func storedMessages(t *testing.T, l *Log) (magics []int8, bases []int64, recs []string) {
	t.Helper()
	for off := l.LogStartOffset(); off < l.LogEndOffset(); {
		data, err := l.Read(off, 1<<20, l.LogEndOffset(), true)
		if err != nil {
			t.Fatalf("Read(%d): %v", off, err)
		}
		if len(data) == 0 {
			t.Fatalf("Read(%d) returned nothing below LEO %d", off, l.LogEndOffset())
		}
		for b, err := range wire.Batches(data) {
			if err != nil {
				t.Fatalf("Read(%d): %v", off, err)
			}
			if err := b.VerifyCRC(); err != nil {
				t.Fatalf("Read(%d): %v", off, err)
			}
			magics, bases = append(magics, b.Magic), append(bases, b.BaseOffset)
			for r, err := range b.Records() {
				if err != nil {
					t.Fatal(err)
				}
				if o := b.RecordOffset(r); o >= off {
					recs = append(recs, fmt.Sprintf("%d@%d:%s=%s", o, b.RecordTimestamp(r), r.Key, r.Value))
				}
			}
			off = b.LastOffset() + 1
		}
	}
	return magics, bases, recs
}

// TestLegacyFormatAppend: a log whose message.format.version is 0.10 (magic 1) or 0.9 (magic 0) stores
// what producers send in that format with exact offsets (a compressed batch as one wrapper in its codec,
// an uncompressed one a message per record), keeps no leader-epoch cache, and reads and recovers the
// messages after a crash: every segment rescanned, v0 messages shorter than a v2 batch header included.
func TestLegacyFormatAppend(t *testing.T) {
	ts := time.Now().UnixMilli()
	for _, magic := range []int8{wire.MagicV0, wire.MagicV1} {
		for _, codec := range []wire.Codec{wire.CodecNone, wire.CodecGzip} {
			t.Run(fmt.Sprintf("v%d-%s", magic, codec), func(t *testing.T) {
				dir := t.TempDir()
				cfg := legacyConfig(magic)
				cfg.SegmentBytes = 300 // a few messages per segment
				l, err := Open(dir, cfg, 0, testLogger(t))
				if err != nil {
					t.Fatal(err)
				}
				if err := l.AssignLeaderEpoch(3); err != nil {
					t.Fatal(err)
				}
				var infos []AppendInfo
				for i := range 4 {
					infos = append(infos, mustAppend(t, l, keyedBatchOf(plainHeader(ts+int64(10*i), codec), kvs("a", "x", "b", "y", "c", "z")...)))
				}
				for i, info := range infos {
					if info.FirstOffset != int64(3*i) || info.LastOffset != int64(3*i+2) {
						t.Fatalf("append %d: offsets %d-%d, want %d-%d", i, info.FirstOffset, info.LastOffset, 3*i, 3*i+2)
					}
				}
				magics, bases, recs := storedMessages(t, l)
				var want []string
				wantBases := []int64{}
				for i := range 12 {
					at := ts + int64(10*(i/3)+i%3)
					if magic == wire.MagicV0 {
						at = -1
					}
					want = append(want, fmt.Sprintf("%d@%d:%s=%s", i, at, "abc"[i%3:i%3+1], "xyz"[i%3:i%3+1]))
					if codec == wire.CodecNone || i%3 == 2 {
						wantBases = append(wantBases, int64(i))
					}
				}
				if !slices.Equal(recs, want) || !slices.Equal(bases, wantBases) || slices.ContainsFunc(magics, func(m int8) bool { return m != magic }) {
					t.Fatalf("stored magics %v at %v, records %v; want magic %d at %v, %v", magics, bases, recs, magic, wantBases, want)
				}
				if l.NumSegments() < 2 {
					t.Fatalf("%d segments, want the appends to roll", l.NumSegments())
				}
				if _, ok := l.LatestEpoch(); ok {
					t.Fatalf("a v%d log has leader epochs %v", magic, l.LeaderEpochs())
				}
				if _, err := os.Stat(filepath.Join(dir, LeaderEpochCheckpointFile)); !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("a v%d log has a %s: %v", magic, LeaderEpochCheckpointFile, err)
				}
				if got, _ := l.Read(4, 1<<20, l.LogEndOffset(), true); len(got) == 0 {
					t.Fatal("a read from inside a wrapper found nothing")
				}

				// A crash: the copy of the files is reopened from recovery point 0.
				crashed := copyDir(t, dir)
				l.Close()
				r, err := Open(crashed, cfg, 0, testLogger(t))
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				if _, _, got := storedMessages(t, r); r.LogEndOffset() != 12 || !slices.Equal(got, want) {
					t.Fatalf("recovered LEO %d with %v, want 12 with %v", r.LogEndOffset(), got, want)
				}
				if magic == wire.MagicV1 {
					if off, at, ok := r.FetchOffsetByTimestamp(ts + 21); !ok || off != 7 || at != ts+21 {
						t.Fatalf("FetchOffsetByTimestamp(ts+21) = %d@%d %v, want 7@%d", off, at, ok, ts+21)
					}
				}
			})
		}
	}
}

// TestLegacyFormatRefuses: what the older formats cannot hold fails the append with Kafka's error and
// leaves the log as it was.
func TestLegacyFormatRefuses(t *testing.T) {
	ts := time.Now().UnixMilli()
	withHeader := wire.AppendBatch(nil, plainHeader(ts, wire.CodecNone), []wire.Record{{Value: []byte("v"), Headers: []wire.Header{{Key: "h"}}}})
	for _, tc := range []struct {
		name  string
		batch []byte
		want  *kerr.Error
	}{
		{"idempotent", keyedBatchOf(producerHeader(ts, 7, 0, false), kvs("k", "v")...), kerr.UnsupportedForMessageFormat},
		{"transactional", keyedBatchOf(producerHeader(ts, 7, 0, true), kvs("k", "v")...), kerr.UnsupportedForMessageFormat},
		{"headers", withHeader, kerr.UnsupportedForMessageFormat},
		{"zstd", keyedBatchOf(plainHeader(ts, wire.CodecZstd), kvs("k", "v")...), kerr.UnsupportedCompressionType},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := openTestLog(t, t.TempDir(), legacyConfig(wire.MagicV1))
			mustAppend(t, l, keyedBatch(ts, kvs("k", "v")...))
			_, err := l.AppendAsLeader(tc.batch, 0)
			wantKerr(t, err, tc.want)
			if l.LogEndOffset() != 1 {
				t.Fatalf("LEO %d after a refused append, want 1", l.LogEndOffset())
			}
		})
	}
	l := openTestLog(t, t.TempDir(), legacyConfig(wire.MagicV1))
	marker := wire.AppendEndTxnMarkerBatch(nil, 7, 0, ts, wire.EndTxnMarker{Commit: true})
	_, err := l.AppendAsCoordinator(marker, 0)
	wantKerr(t, err, kerr.UnsupportedForMessageFormat)
}

// TestLegacyFormatReplicatedAndSwitched: a follower stores a legacy leader's messages byte for byte;
// a log switched from v2 to 0.10 drops its leader-epoch cache and appends v1 after its v2 batches, and
// every batch of the mixed log reads back; switched back, it appends v2 and takes epochs again.
func TestLegacyFormatReplicatedAndSwitched(t *testing.T) {
	ts := time.Now().UnixMilli()
	leader := openTestLog(t, t.TempDir(), legacyConfig(wire.MagicV1))
	mustAppend(t, leader, keyedBatchOf(plainHeader(ts, wire.CodecSnappy), kvs("a", "1", "b", "2")...))
	mustAppend(t, leader, keyedBatch(ts, kvs("c", "3")...))
	data, err := leader.Read(0, 1<<20, leader.LogEndOffset(), true)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	follower := openTestLog(t, dir, testConfig())
	if _, err := follower.AppendAsFollower(data); err != nil {
		t.Fatal(err)
	}
	got, err := follower.Read(0, 1<<20, follower.LogEndOffset(), true)
	if err != nil || !bytes.Equal(got, data) || follower.LogEndOffset() != 3 {
		t.Fatalf("follower holds %x (LEO %d, %v), want the leader's %x", got, follower.LogEndOffset(), err, data)
	}

	mustAppend(t, follower, keyedBatch(ts, kvs("d", "4")...)) // v2, leader epoch 7
	if _, ok := follower.LatestEpoch(); !ok {
		t.Fatal("a v2 append left no leader epoch")
	}
	if err := follower.SetConfig(legacyConfig(wire.MagicV1)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, LeaderEpochCheckpointFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("switched to 0.10, the log keeps its %s: %v", LeaderEpochCheckpointFile, err)
	}
	mustAppend(t, follower, keyedBatch(ts, kvs("e", "5")...))
	if err := follower.SetConfig(testConfig()); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, follower, keyedBatch(ts, kvs("f", "6")...))
	magics, _, recs := storedMessages(t, follower)
	if !slices.Equal(magics, []int8{1, 1, 2, 1, 2}) || len(recs) != 6 || recs[5] != fmt.Sprintf("5@%d:f=6", ts) {
		t.Fatalf("mixed log: magics %v, records %v", magics, recs)
	}
	if e, ok := follower.LatestEpoch(); !ok || e != 7 {
		t.Fatalf("back on v2, latest epoch %d %v, want 7", e, ok)
	}
}

// TestCleanerLegacyFormat: compaction of a v1 log keeps the latest message of each key; a wrapper that
// loses messages is rewritten as a v1 wrapper in its codec around those it keeps, with their offsets.
func TestCleanerLegacyFormat(t *testing.T) {
	cfg := oneBatchPerSegment()
	cfg.MessageFormat = wire.MagicV1
	l := openTestLog(t, t.TempDir(), cfg)
	ts := time.Now().UnixMilli()
	mustAppend(t, l, keyedBatchOf(plainHeader(ts, wire.CodecGzip), kvs("k0", "a0", "k1", "a1", "k2", "a2", "k3", "a3")...))
	mustAppend(t, l, keyedBatch(ts, kvs("k0", "c0")...))
	mustAppend(t, l, keyedBatch(ts, kvs("k3", "c3")...))
	big := strings.Repeat("x", 100) // rolls the active segment, so that the others are cleanable
	mustAppend(t, l, keyedBatch(ts, kvs("z", big)...))
	l.SetHighWatermark(l.LogEndOffset())
	if _, err := l.Clean(time.Hour, time.Now()); err != nil {
		t.Fatal(err)
	}
	magics, bases, recs := storedMessages(t, l)
	want := []string{
		fmt.Sprintf("1@%d:k1=a1", ts+1), fmt.Sprintf("2@%d:k2=a2", ts+2),
		fmt.Sprintf("4@%d:k0=c0", ts), fmt.Sprintf("5@%d:k3=c3", ts), fmt.Sprintf("6@%d:z=%s", ts, big),
	}
	if !slices.Equal(recs, want) || !slices.Equal(magics, []int8{1, 1, 1, 1}) || !slices.Equal(bases, []int64{2, 4, 5, 6}) {
		t.Fatalf("after cleaning: magics %v at %v, records %v; want v1 at [2 4 5 6], %v", magics, bases, recs, want)
	}
	b, err := wire.ReadBatch(storedBatch(t, l, 1))
	if err != nil || b.Attributes.Codec() != wire.CodecGzip {
		t.Fatalf("rewritten wrapper: %+v, %v; want gzip", b.BatchHeader, err)
	}
}
