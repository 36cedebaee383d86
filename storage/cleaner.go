package storage

// Log compaction (Kafka's LogCleaner, one log at a time): for a log whose
// cleanup.policy includes "compact", every record of the cleanable section
// — the segments before the active one, wholly below the high watermark —
// is kept only if it is the latest record of its key in that section, and
// a tombstone (null value) only until its segment is older than
// delete.retention.ms. Offsets never change: a batch that loses records
// keeps its base and last offsets, a batch that loses all of them goes.
//
// Each segment is rewritten to <base>.log.cleaned, flushed, and swapped in
// under the segment lock: the old index files are removed first, the
// cleaned file renamed over the .log, and the indexes rebuilt from it. A
// crash at any point leaves a valid .log (old or cleaned) whose indexes are
// rebuilt on load, and load removes a leftover .cleaned file.
//
// Which logs are cleaned, and how far, is Kafka's: a pass ends where the
// cleanable section ends (and before the first segment with a record younger
// than min.compaction.lag.ms), and that offset is the log's first dirty
// offset, kept in each log dir's cleaner-offset-checkpoint. A log is due once
// its dirty bytes (from the first dirty offset to the end of the cleanable
// section) reach min.cleanable.dirty.ratio of its cleanable bytes, or its
// first dirty segment began longer than max.compaction.lag.ms ago
// (DirtyRatio). Unlike Kafka there is no offset map size limit: the whole
// cleanable section is deduplicated in one pass, with the key → latest offset
// map in memory, which keeps the same records Kafka's passes keep. Compressed
// batches are kept as they are (the group coordinator writes uncompressed
// ones); control batches too. Transactional batches are also kept whole and
// supersede nothing: Kafka removes aborted transactions' records and lets
// committed ones take part, which needs the transaction index at cleaning
// time; keeping them all leaves every reader (the group coordinator's
// load, read_committed consumers) to settle them by their markers as it
// does for the uncleaned log.

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"go.uber.org/zap"

	"github.com/zkafka/zkafka/wire"
)

// CleanStats describes one cleaning pass.
type CleanStats struct {
	Segments          int   // segments rewritten
	RecordsRead       int   // records in the cleanable section
	RecordsKept       int   // records left
	TombstonesRemoved int   // tombstones dropped after delete.retention.ms
	BytesBefore       int64 // cleanable section size before
	BytesAfter        int64 // and after
	CleanableEnd      int64 // first offset not cleaned (the active segment's base, at most)
	// TombstonesDue is when the oldest tombstone kept becomes removable
	// (zero when none was kept): cleaning again before then, with the same
	// CleanableEnd, changes nothing.
	TombstonesDue time.Time
}

// CleanableEnd returns where the cleanable section ends: the base offset of
// the first segment that is active or reaches past the high watermark.
func (l *Log) CleanableEnd() int64 {
	l.segMu.RLock()
	defer l.segMu.RUnlock()
	return l.segments[l.cleanableSegmentsLocked(l.Config(), math.MaxInt64)].baseOffset
}

// cleanableSegmentsLocked is how many segments a pass at nowMs may clean: those below the active
// segment and the high watermark, up to the first dirty one holding a record younger than
// min.compaction.lag.ms. The caller holds segMu.
func (l *Log) cleanableSegmentsLocked(cfg LogConfig, nowMs int64) int {
	hw := l.highWatermark
	n := 0
	for n < len(l.segments)-1 && l.segments[n+1].baseOffset <= hw {
		n++
	}
	if cfg.MinCompactionLagMs > 0 {
		for i, s := range l.segments[:n] {
			if s.nextOffset > l.firstDirtyOffset && s.largestTimestamp() > nowMs-cfg.MinCompactionLagMs {
				return i
			}
		}
	}
	return n
}

// DirtyRatio is the share of the log's cleanable bytes written since its last cleaning, and whether
// a pass is due: the ratio reached min.cleanable.dirty.ratio, or the first dirty segment began
// longer than max.compaction.lag.ms before now (Kafka's LogCleanerManager). A log that does not
// compact, or has nothing dirty to clean, is never due.
func (l *Log) DirtyRatio(now time.Time) (ratio float64, due bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	cfg := l.Config()
	if !cfg.compacts() {
		return 0, false
	}
	l.segMu.RLock()
	defer l.segMu.RUnlock()
	var clean, dirty int64
	firstDirty := int64(-1)
	for _, s := range l.segments[:l.cleanableSegmentsLocked(cfg, now.UnixMilli())] {
		if s.nextOffset <= l.firstDirtyOffset {
			clean += s.size
			continue
		}
		if firstDirty < 0 {
			firstDirty = s.rollingBasedTimestamp
			if firstDirty < 0 {
				firstDirty = s.largestTimestamp()
			}
		}
		dirty += s.size
	}
	if dirty == 0 {
		return 0, false
	}
	ratio = float64(dirty) / float64(clean+dirty)
	overdue := firstDirty >= 0 && now.UnixMilli()-firstDirty > cfg.MaxCompactionLagMs
	return ratio, ratio >= cfg.MinCleanableDirtyRatio || overdue
}

// FirstDirtyOffset is where the cleaner's last pass ended: below it the log is clean.
func (l *Log) FirstDirtyOffset() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.firstDirtyOffset
}

// setFirstDirtyOffset restores the offset from the cleaner checkpoint when the log is opened.
func (l *Log) setFirstDirtyOffset(o int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.firstDirtyOffset = o
}

// compacts reports whether the log cleaner applies.
func (c LogConfig) compacts() bool {
	return c.CleanupPolicy == "compact" || c.CleanupPolicy == "compact,delete" || c.CleanupPolicy == "delete,compact"
}

// Clean compacts the log once (see the file comment); deleteRetention is
// the topic's delete.retention.ms and now the time tombstones age against.
// A log that does not compact is left alone.
func (l *Log) Clean(deleteRetention time.Duration, now time.Time) (CleanStats, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var st CleanStats
	if err := l.writable(); err != nil {
		return st, err
	}
	cfg := l.Config()
	if !cfg.compacts() {
		return st, nil
	}
	l.segMu.RLock()
	n := l.cleanableSegmentsLocked(cfg, now.UnixMilli())
	l.segMu.RUnlock()
	st.CleanableEnd = l.segments[n].baseOffset
	if n == 0 {
		return st, nil
	}
	cleanable := l.segments[:n]

	// Pass 1: the latest offset of every key.
	latest := map[string]int64{}
	for _, s := range cleanable {
		err := eachBatch(s, func(b wire.Batch, recs []wire.Record) error {
			for _, r := range recs {
				latest[string(r.Key)] = b.RecordOffset(r)
			}
			return nil
		})
		if err != nil {
			return st, l.fail("clean", err)
		}
	}

	// Pass 2: rewrite each segment with what survives.
	horizon := now.Add(-deleteRetention).UnixMilli()
	for i, s := range cleanable {
		dropTombstones := s.largestTimestamp() < horizon
		var out []byte
		err := eachBatch(s, func(b wire.Batch, recs []wire.Record) error {
			if recs == nil {
				out = append(out, b.Raw...) // compressed, control or transactional: kept whole
				return nil
			}
			var keep []wire.Record
			for _, r := range recs {
				st.RecordsRead++
				switch {
				case latest[string(r.Key)] != b.RecordOffset(r):
				case r.Value == nil && dropTombstones:
					st.TombstonesRemoved++
				case r.Value == nil:
					due := time.UnixMilli(s.largestTimestamp()).Add(deleteRetention)
					if st.TombstonesDue.IsZero() || due.Before(st.TombstonesDue) {
						st.TombstonesDue = due
					}
					keep = append(keep, r)
				default:
					keep = append(keep, r)
				}
			}
			st.RecordsKept += len(keep)
			switch len(keep) {
			case len(recs):
				out = append(out, b.Raw...)
			case 0:
			default:
				// The header is kept (base offset, last offset delta, timestamps, producer fields); the
				// record count, length and CRC are recomputed.
				out = wire.AppendBatch(out, b.BatchHeader, keep)
			}
			return nil
		})
		if err != nil {
			return st, l.fail("clean", err)
		}
		st.BytesBefore += s.size
		st.BytesAfter += int64(len(out))
		if int64(len(out)) == s.size {
			continue
		}
		if err := l.swapCleaned(i, out, cfg); err != nil {
			return st, l.fail("clean", err)
		}
		st.Segments++
	}
	l.firstDirtyOffset = max(l.firstDirtyOffset, st.CleanableEnd)
	if st.Segments > 0 {
		l.logger.Info("Cleaned log", zap.Int("segments", st.Segments), zap.Int("records-read", st.RecordsRead),
			zap.Int("records-kept", st.RecordsKept), zap.Int("tombstones-removed", st.TombstonesRemoved),
			zap.Int64("bytes-before", st.BytesBefore), zap.Int64("bytes-after", st.BytesAfter))
	}
	return st, nil
}

// eachBatch reads a segment's batches in order; recs is nil for a batch whose records are not cleaned
// (compressed, control or transactional). The batch's bytes are valid only during fn.
func eachBatch(s *segment, fn func(b wire.Batch, recs []wire.Record) error) error {
	sc := newBatchScanner(s.log, 0, s.size)
	for {
		pos, b, err := sc.next(false)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("segment %d at %d: %w", s.baseOffset, pos, err)
		}
		if b.Attributes.Codec() != wire.CodecNone || b.Attributes.Control() || b.Attributes.Transactional() {
			if err := fn(b, nil); err != nil {
				return err
			}
			continue
		}
		recs := make([]wire.Record, 0, max(b.RecordCount, 0))
		for r, err := range b.Records() {
			if err != nil {
				return fmt.Errorf("segment %d at %d: %w", s.baseOffset, pos, err)
			}
			recs = append(recs, r)
		}
		if err := fn(b, recs); err != nil {
			return err
		}
	}
}

// swapCleaned replaces the file of segment i with cleaned data and puts the
// reopened segment, indexes rebuilt, in its place. The caller holds mu;
// readers are kept out (segMu) while the files change.
func (l *Log) swapCleaned(i int, data []byte, cfg LogConfig) error {
	s := l.segments[i]
	cleaned := segmentPath(s.dir, s.baseOffset, logSuffix+cleanedSuffix)
	f, err := os.OpenFile(cleaned, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if err = errors.Join(err, f.Close()); err != nil {
		os.Remove(cleaned)
		return err
	}
	l.segMu.Lock()
	defer l.segMu.Unlock()
	if err := s.closeFiles(); err != nil {
		return err
	}
	for _, suffix := range []string{indexSuffix, timeIndexSuffix} {
		if err := os.Remove(segmentPath(s.dir, s.baseOffset, suffix)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	if err := os.Rename(cleaned, segmentPath(s.dir, s.baseOffset, logSuffix)); err != nil {
		return err
	}
	if err := syncDir(s.dir); err != nil {
		return err
	}
	ns, _, _, err := openSegment(s.dir, s.baseOffset)
	if err != nil {
		return err
	}
	if _, reason, err := ns.recover(cfg); err != nil || reason != nil {
		ns.closeFiles()
		return errors.Join(err, reason)
	}
	if err := ns.seal(); err != nil {
		ns.closeFiles()
		return err
	}
	ns.created = s.created
	l.segments[i] = ns
	return nil
}
