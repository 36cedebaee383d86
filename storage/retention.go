package storage

import (
	"errors"
	"slices"

	"go.uber.org/zap"
)

// DeleteOldSegments applies retention as Kafka's Log.deleteOldSegments does at the broker's wall-clock
// time nowMs and returns how many segments it deleted. In order: segments whose largest timestamp is
// older than RetentionMs at nowMs; the oldest segments while the log is more than RetentionBytes over;
// segments wholly below the log start offset. Time and size apply only when CleanupPolicy includes
// "delete". A segment is deleted only when every offset in it is below the high watermark; when time
// or size would delete every segment, the active one included, a new empty segment is rolled first.
// The log start offset rises to the first remaining segment. Kafka renames deleted segments to
// `.deleted` and removes them a minute later (file.delete.delay.ms) so that in-flight reads finish;
// here readers hold the segment lock or a descriptor of their own (FileRecords), so the files are
// removed at once.
func (l *Log) DeleteOldSegments(nowMs int64) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.writable(); err != nil {
		return 0, err
	}
	cfg := l.Config()
	var deleted int
	if cfg.Deletes() && cfg.RetentionMs >= 0 {
		n, err := l.deleteSegmentsLocked("retention.ms", true, func(s *segment) bool {
			return nowMs-s.largestTimestamp() > cfg.RetentionMs
		})
		deleted += n
		if err != nil {
			return deleted, err
		}
	}
	if cfg.Deletes() && cfg.RetentionBytes >= 0 {
		var size int64
		for _, s := range l.segments {
			size += s.size
		}
		excess := size - cfg.RetentionBytes
		n, err := l.deleteSegmentsLocked("retention.bytes", true, func(s *segment) bool {
			if excess-s.size < 0 {
				return false
			}
			excess -= s.size
			return true
		})
		deleted += n
		if err != nil {
			return deleted, err
		}
	}
	start := l.LogStartOffset()
	n, err := l.deleteSegmentsLocked("log-start-offset", false, func(s *segment) bool {
		return s.nextOffset <= start
	})
	return deleted + n, err
}

// deleteSegmentsLocked deletes the longest prefix of segments that satisfy deletable, stopping at the
// first segment reaching past the high watermark (Kafka's deletableSegments). With activeToo the
// active segment goes as well when it is not empty, wholly below the high watermark and deletable:
// a new empty segment is rolled first, as Kafka's deleteSegments does, so an idle topic's last
// records expire too. The caller holds mu.
func (l *Log) deleteSegmentsLocked(reason string, activeToo bool, deletable func(*segment) bool) (int, error) {
	hw := l.HighWatermark()
	n := 0
	for n < len(l.segments)-1 && l.segments[n+1].baseOffset <= hw && deletable(l.segments[n]) {
		n++
	}
	if last := l.segments[len(l.segments)-1]; activeToo && n == len(l.segments)-1 && last.size > 0 && hw >= l.logEndOffset && deletable(last) {
		if _, err := l.roll(l.logEndOffset, l.Config()); err != nil {
			return 0, err
		}
		n++
	}
	if n == 0 {
		return 0, nil
	}
	l.segMu.Lock()
	doomed := l.segments[:n]
	l.segments = slices.Clone(l.segments[n:])
	l.logStartOffset = max(l.logStartOffset, l.segments[0].baseOffset)
	l.recoveryPoint = max(l.recoveryPoint, l.segments[0].baseOffset)
	start := l.logStartOffset
	l.segMu.Unlock()
	if err := l.epochs.truncateFromStart(start); err != nil {
		return 0, storageError("truncate the leader-epoch cache of "+l.dir, err)
	}

	// No reader can hold the doomed segments: readers keep segMu shared while they read.
	var err error
	for _, s := range doomed {
		l.logger.Info("Deleting segment", zap.String("reason", reason), zap.Int64("segment", s.baseOffset),
			zap.Int64("size", s.size), zap.Int64("largest-timestamp", s.maxTimestamp))
		err = errors.Join(err, s.remove())
	}
	if err != nil {
		return n, storageError("delete segments of "+l.dir, err)
	}
	return n, nil
}
