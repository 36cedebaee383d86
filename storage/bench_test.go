package storage

import (
	"bytes"
	"testing"
	"time"
)

// BenchmarkAppend appends 16 KiB batches as a leader; the MB/s column is append throughput to the page
// cache (appends do not fsync). Retention keeps the disk footprint bounded outside the timed part.
func BenchmarkAppend(b *testing.B) {
	cfg := DefaultLogConfig()
	cfg.SegmentBytes = 64 << 20
	cfg.RetentionBytes = 128 << 20
	cfg.RetentionMs = -1
	l, err := Open(b.TempDir(), cfg, 0, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	var recs []byte
	for i := range 16 {
		recs = appendRecord(recs, kmsgRecord(i, bytes.Repeat([]byte{byte('a' + i)}, 1000)))
	}
	batch := encodeBatch(recs, 16, 1, 16, 0)
	b.SetBytes(int64(len(batch)))
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := l.AppendAsLeader(batch, 1); err != nil {
			b.Fatal(err)
		}
		if i%4096 == 4095 {
			b.StopTimer()
			l.SetHighWatermark(l.LogEndOffset())
			if _, err := l.DeleteOldSegments(time.Now().UnixMilli()); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
	}
}
