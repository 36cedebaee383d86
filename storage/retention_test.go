package storage

import (
	"errors"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// fillSegments appends batches of about 300 bytes, timestamped by ts(i), into 1 KiB segments.
func fillSegments(t *testing.T, l *Log, n int, ts func(i int) int64) {
	t.Helper()
	for i := range n {
		mustAppend(t, l, makeSizedBatch(ts(i), 300))
	}
	l.SetHighWatermark(l.LogEndOffset())
}

func retentionConfig() LogConfig {
	cfg := testConfig()
	cfg.SegmentBytes = 1024
	cfg.RetentionMs = -1
	return cfg
}

func TestRetentionBySize(t *testing.T) {
	cfg := retentionConfig()
	cfg.RetentionBytes = 2500
	dir := t.TempDir()
	l := openTestLog(t, dir, cfg)
	now := time.Now().UnixMilli()
	fillSegments(t, l, 20, func(int) int64 { return now })
	before := segmentBases(l)
	sizeBefore := l.Size()

	n, err := l.DeleteOldSegments(time.Now().UnixMilli())
	if err != nil {
		t.Fatal(err)
	}
	after := segmentBases(l)
	if n == 0 || n != len(before)-len(after) || !slices.Equal(after, before[n:]) {
		t.Fatalf("deleted %d: segments %v -> %v", n, before, after)
	}
	// Kafka deletes the oldest segments while the log stays at or above retention.bytes without them.
	if l.Size() < cfg.RetentionBytes || l.Size()-l.segments[0].size >= cfg.RetentionBytes {
		t.Fatalf("size %d -> %d with retention.bytes %d and first segment %d bytes", sizeBefore, l.Size(), cfg.RetentionBytes, l.segments[0].size)
	}
	if l.LogStartOffset() != after[0] {
		t.Fatalf("log start offset %d, want first segment base %d", l.LogStartOffset(), after[0])
	}
	for _, base := range before[:n] {
		if _, err := os.Stat(segmentPath(dir, base, logSuffix)); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("segment %d still on disk", base)
		}
	}
	_, err = l.Read(before[0], 1000, l.LogEndOffset(), true)
	wantKerr(t, err, kerr.OffsetOutOfRange)
	if n, _ := l.DeleteOldSegments(time.Now().UnixMilli()); n != 0 {
		t.Fatalf("second pass deleted %d more", n)
	}
}

// TestRetentionStopsAtTheHighWatermarkAndRollsWhenAllGo: retention never deletes a segment reaching
// past the high watermark; once every segment, the active one included, is due (retention.bytes 0
// here), Kafka rolls an empty segment at the log end and deletes the rest, and the log stays
// writable.
func TestRetentionStopsAtTheHighWatermarkAndRollsWhenAllGo(t *testing.T) {
	cfg := retentionConfig()
	cfg.RetentionBytes = 0
	l := openTestLog(t, t.TempDir(), cfg)
	fillSegments(t, l, 12, func(int) int64 { return time.Now().UnixMilli() })
	bases := segmentBases(l)

	l.SetHighWatermark(bases[2]) // the first two segments are wholly below the high watermark
	if n, err := l.DeleteOldSegments(time.Now().UnixMilli()); err != nil || n != 2 {
		t.Fatalf("deleted %d (%v), want 2", n, err)
	}
	leo := l.LogEndOffset()
	l.SetHighWatermark(leo)
	if n, err := l.DeleteOldSegments(time.Now().UnixMilli()); err != nil || n != len(bases)-2 {
		t.Fatalf("deleted %d (%v), want the other %d, the active one included", n, err, len(bases)-2)
	}
	if got := segmentBases(l); !slices.Equal(got, []int64{leo}) || l.LogStartOffset() != leo || l.LogEndOffset() != leo {
		t.Fatalf("segments %v, log start %d, end %d; want one empty segment at %d", got, l.LogStartOffset(), l.LogEndOffset(), leo)
	}
	mustAppend(t, l, makeBatch(1, "still writable"))
	// An empty active segment is never rolled away.
	l.SetHighWatermark(l.LogEndOffset())
	if _, err := l.DeleteOldSegments(time.Now().UnixMilli()); err != nil {
		t.Fatal(err)
	}
	if n, err := l.DeleteOldSegments(time.Now().UnixMilli()); err != nil || n != 0 {
		t.Fatalf("retention of an empty log deleted %d (%v)", n, err)
	}
}

func TestRetentionByTime(t *testing.T) {
	cfg := retentionConfig()
	cfg.RetentionMs = time.Hour.Milliseconds()
	l := openTestLog(t, t.TempDir(), cfg)
	old := time.Now().Add(-2 * time.Hour).UnixMilli()
	recent := time.Now().UnixMilli()
	fillSegments(t, l, 20, func(i int) int64 {
		if i < 10 {
			return old
		}
		return recent
	})
	var want []int64
	for _, s := range l.segments {
		if s.maxTimestamp == recent {
			want = append(want, s.baseOffset)
		}
	}
	n, err := l.DeleteOldSegments(time.Now().UnixMilli())
	if err != nil {
		t.Fatal(err)
	}
	if got := segmentBases(l); n == 0 || !slices.Equal(got, want) {
		t.Fatalf("segments %v after deleting %d, want those holding recent data %v", got, n, want)
	}

	// retention.ms -1 keeps everything, however old.
	cfg.RetentionMs = -1
	l2 := openTestLog(t, t.TempDir(), cfg)
	fillSegments(t, l2, 20, func(int) int64 { return old })
	if n, _ := l2.DeleteOldSegments(time.Now().UnixMilli()); n != 0 {
		t.Fatalf("retention.ms -1 deleted %d segments", n)
	}
}

func TestRetentionSkippedForCompactedTopics(t *testing.T) {
	cfg := retentionConfig()
	cfg.RetentionBytes = 0
	l := openTestLog(t, t.TempDir(), cfg)
	// Filled while the policy is delete: a compacted log takes keyed records only.
	fillSegments(t, l, 12, func(int) int64 { return 1 })
	cfg.CleanupPolicy = "compact"
	if err := l.SetConfig(cfg); err != nil {
		t.Fatal(err)
	}
	if n, _ := l.DeleteOldSegments(time.Now().UnixMilli()); n != 0 {
		t.Fatalf("compacted log lost %d segments to retention", n)
	}
}

func TestRetentionBelowLogStartOffset(t *testing.T) {
	l := openTestLog(t, t.TempDir(), retentionConfig())
	fillSegments(t, l, 12, func(int) int64 { return time.Now().UnixMilli() })
	bases := segmentBases(l)
	if err := l.MaybeIncrementLogStartOffset(bases[2]+1, ClientRecordDeletion); err != nil {
		t.Fatal(err)
	}
	if n, err := l.DeleteOldSegments(time.Now().UnixMilli()); err != nil || n != 2 {
		t.Fatalf("deleted %d (%v), want the 2 segments below the log start offset", n, err)
	}
	if l.LogStartOffset() != bases[2]+1 {
		t.Fatalf("log start offset moved to %d", l.LogStartOffset())
	}
}

// TestRetentionByTimeExpiresAnIdleTopic: when the producer stopped long ago, retention.ms takes the
// active segment too (after a roll), as Kafka's does; nothing readable is left.
func TestRetentionByTimeExpiresAnIdleTopic(t *testing.T) {
	cfg := retentionConfig()
	cfg.RetentionMs = time.Hour.Milliseconds()
	l := openTestLog(t, t.TempDir(), cfg)
	old := time.Now().Add(-2 * time.Hour).UnixMilli()
	fillSegments(t, l, 5, func(int) int64 { return old })
	leo := l.LogEndOffset()
	l.SetHighWatermark(leo)
	if _, err := l.DeleteOldSegments(time.Now().UnixMilli()); err != nil {
		t.Fatal(err)
	}
	if got := segmentBases(l); !slices.Equal(got, []int64{leo}) || l.LogStartOffset() != leo {
		t.Fatalf("segments %v, log start %d; want one empty segment at %d", got, l.LogStartOffset(), leo)
	}
}
