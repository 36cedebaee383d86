package storage

// Log compaction (Kafka's LogCleaner, one log at a time): for a log whose
// cleanup.policy includes "compact", every record of the cleanable section
// — the segments before the active one, wholly below the last stable
// offset — is kept only if it is the latest record of its key in that
// section, and a tombstone (null value) only until its segment is older
// than delete.retention.ms. Offsets never change.
//
// Batches are filtered as Kafka's MemoryRecords.filterTo does. A batch that
// keeps all its records is copied byte for byte; one that keeps some is
// rebuilt around them in its own codec, compressed or not, with its base
// and last offsets, producer id, epoch and base sequence, partition leader
// epoch and attributes, its timestamps those of the records kept; one that
// keeps none goes, unless it is the last batch of a producer the log still
// tracks (the last data batch, or the marker when the producer has none):
// then an empty batch with its header stays, as the producer's sequence
// and epoch must survive. Records inside compressed batches take part like
// any others.
//
// Transactions are followed as Kafka's CleanedTransactionMetadata does,
// from the aborted transactions the transaction indexes list: the data
// batches of an aborted transaction go without their records being
// looked at, and supersede nothing; committed ones take part like any
// others. A marker goes once no batch of its transaction is left and its
// segment is older than delete.retention.ms, so it takes a pass that
// removes the transaction's data and a later one to remove the marker. A
// segment's cleaned transaction index keeps only the aborted transactions
// whose data was still there.
//
// Each segment is rewritten to <base>.log.cleaned, flushed, and swapped in
// under the segment lock: the old index files are removed first, the
// cleaned file renamed over the .log, then the cleaned transaction index
// over the .txnindex, and the indexes rebuilt from the log. A crash at any
// point leaves a valid .log (old or cleaned) whose indexes are rebuilt on
// load, and load removes leftover .cleaned files; a crash between the two
// renames leaves the old transaction index, whose extra entries name
// transactions with no records left to skip.
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
// map in memory, which keeps the same records Kafka's passes keep.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/zkafka/zkafka/wire"
)

// CleanStats describes one cleaning pass.
type CleanStats struct {
	Segments          int   // segments rewritten
	RecordsRead       int   // data records in the cleanable section
	RecordsKept       int   // data records left
	TombstonesRemoved int   // tombstones dropped after delete.retention.ms
	AbortedRemoved    int   // records of aborted transactions dropped
	MarkersRemoved    int   // transaction markers dropped
	BytesBefore       int64 // cleanable section size before
	BytesAfter        int64 // and after
	CleanableEnd      int64 // first offset not cleaned (the active segment's base, at most)
	// TombstonesDue is when the oldest tombstone or transaction marker kept
	// only for delete.retention.ms becomes removable (zero when none was
	// kept). A marker kept because this pass found its transaction's data
	// is not counted: it may go at the next pass.
	TombstonesDue time.Time
}

// CleanableEnd returns where the cleanable section ends: the base offset of
// the first segment that is active or reaches past the last stable offset.
func (l *Log) CleanableEnd() int64 {
	stable := l.LastStableOffset()
	l.segMu.RLock()
	defer l.segMu.RUnlock()
	return l.segments[l.cleanableSegmentsLocked(l.Config(), stable, math.MaxInt64)].baseOffset
}

// cleanableSegmentsLocked is how many segments a pass at nowMs may clean: those below the active
// segment and the last stable offset stable (Kafka stops at the first unstable offset: a transaction
// still open may yet abort), up to the first dirty one holding a record younger than
// min.compaction.lag.ms. The caller holds segMu.
func (l *Log) cleanableSegmentsLocked(cfg LogConfig, stable, nowMs int64) int {
	n := 0
	for n < len(l.segments)-1 && l.segments[n+1].baseOffset <= stable {
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
	stable := l.LastStableOffset()
	l.segMu.RLock()
	defer l.segMu.RUnlock()
	var clean, dirty int64
	firstDirty := int64(-1)
	for _, s := range l.segments[:l.cleanableSegmentsLocked(cfg, stable, now.UnixMilli())] {
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
// the topic's delete.retention.ms and now the time tombstones and markers
// age against. A log that does not compact is left alone.
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
	stable := l.LastStableOffset()
	l.segMu.RLock()
	n := l.cleanableSegmentsLocked(cfg, stable, now.UnixMilli())
	l.segMu.RUnlock()
	st.CleanableEnd = l.segments[n].baseOffset
	if n == 0 {
		return st, nil
	}
	cleanable := l.segments[:n]
	aborted := l.AbortedTransactions(cleanable[0].baseOffset, st.CleanableEnd)

	// Pass 1: the latest offset of every key, outside aborted transactions.
	latest := map[string]int64{}
	txns := newCleanerTxns(aborted)
	for _, s := range cleanable {
		err := eachBatch(s, func(b wire.Batch) error {
			if b.Attributes.Control() {
				txns.onControl(b)
				return nil
			}
			if txns.onData(b.BatchHeader) {
				return nil
			}
			for r, err := range b.Records() {
				if err != nil {
					return err
				}
				latest[string(r.Key)] = b.RecordOffset(r)
			}
			return nil
		})
		if err != nil {
			return st, l.cleanFailed(err)
		}
	}

	// Pass 2: rewrite each segment with what survives.
	horizon := now.Add(-deleteRetention).UnixMilli()
	txns = newCleanerTxns(aborted)
	for i, s := range cleanable {
		// Kafka keeps both tombstones and markers while their segment is within delete.retention.ms.
		retainDeletes := s.largestTimestamp() >= horizon
		noteDue := func() {
			due := time.UnixMilli(s.largestTimestamp()).Add(deleteRetention)
			if st.TombstonesDue.IsZero() || due.Before(st.TombstonesDue) {
				st.TombstonesDue = due
			}
		}
		txns.kept = nil
		var out []byte
		changed := false
		err := eachBatch(s, func(b wire.Batch) error {
			start := len(out)
			// A batch left with no records still goes out empty when it holds its producer's state
			// (Kafka's BatchRetention.RETAIN_EMPTY).
			keepEmpty := l.producers.lastBatchOf(b.BatchHeader)
			switch {
			case b.Attributes.Control():
				switch removable := txns.onControl(b); {
				case !removable:
					out = append(out, b.Raw...)
				case retainDeletes:
					noteDue()
					out = append(out, b.Raw...)
				default:
					st.MarkersRemoved += int(b.RecordCount)
					if keepEmpty {
						out = appendEmptyBatch(out, b.BatchHeader)
					}
				}
			case txns.onData(b.BatchHeader):
				st.RecordsRead += int(b.RecordCount)
				st.AbortedRemoved += int(b.RecordCount)
				if keepEmpty {
					out = appendEmptyBatch(out, b.BatchHeader)
				}
			default:
				var keep []wire.Record
				read := 0
				for r, err := range b.Records() {
					if err != nil {
						return err
					}
					read++
					switch {
					case latest[string(r.Key)] != b.RecordOffset(r):
					case r.Value == nil && !retainDeletes:
						st.TombstonesRemoved++
					case r.Value == nil:
						noteDue()
						keep = append(keep, r)
					default:
						keep = append(keep, r)
					}
				}
				st.RecordsRead += read
				st.RecordsKept += len(keep)
				switch {
				case len(keep) > 0 && len(keep) == read:
					out = append(out, b.Raw...)
				case len(keep) > 0:
					out = appendRetained(out, b.BatchHeader, keep)
				case keepEmpty:
					out = appendEmptyBatch(out, b.BatchHeader)
				}
			}
			changed = changed || !bytes.Equal(out[start:], b.Raw)
			return nil
		})
		if err != nil {
			return st, l.cleanFailed(err)
		}
		st.BytesBefore += s.size
		st.BytesAfter += int64(len(out))
		if !changed && slices.Equal(txns.kept, s.txnIndex.entries) {
			continue
		}
		if err := l.swapCleaned(i, out, txns.kept, cfg); err != nil {
			return st, l.fail("clean", err)
		}
		st.Segments++
	}
	l.firstDirtyOffset = max(l.firstDirtyOffset, st.CleanableEnd)
	if st.Segments > 0 {
		l.logger.Info("Cleaned log", zap.Int("segments", st.Segments), zap.Int("records-read", st.RecordsRead),
			zap.Int("records-kept", st.RecordsKept), zap.Int("tombstones-removed", st.TombstonesRemoved),
			zap.Int("aborted-removed", st.AbortedRemoved), zap.Int("markers-removed", st.MarkersRemoved),
			zap.Int64("bytes-before", st.BytesBefore), zap.Int64("bytes-after", st.BytesAfter))
	}
	return st, nil
}

// cleanFailed is how a pass reports a failure: records that do not decode (a producer's compressed
// batch is stored without being opened) fail the pass only, as Kafka's cleaner gives up on the
// partition; anything else is an I/O failure, which takes the log offline.
func (l *Log) cleanFailed(err error) error {
	if errors.Is(err, wire.ErrCorruptRecords) {
		return fmt.Errorf("clean %s: %w", l.dir, err)
	}
	return l.fail("clean", err)
}

// appendRetained appends batch h rebuilt around the records it keeps, as Kafka's filterTo has
// MemoryRecordsBuilder write it: the header's offsets (the last offset delta included, which holds
// the producer's last sequence), producer fields, partition leader epoch, codec and flags stay; the
// first timestamp becomes the first kept record's and the max timestamp the largest kept one (the
// batch's own under LogAppendTime), with the records' deltas from the new first timestamp and
// their attributes written as zero.
//
// A compressed v0 or v1 wrapper is rebuilt in its own format and codec around the messages it keeps,
// each with its offset and timestamp.
func appendRetained(dst []byte, h wire.BatchHeader, keep []wire.Record) []byte {
	if h.Magic < wire.MagicV2 {
		msgs := make([]wire.LegacyMessage, len(keep))
		for i, r := range keep {
			msgs[i] = wire.LegacyMessage{Offset: h.RecordOffset(r), Timestamp: h.RecordTimestamp(r), Key: r.Key, Value: r.Value}
		}
		return wire.AppendLegacy(dst, h.Magic, h.Attributes.Codec(), h.Attributes.LogAppendTime(), msgs)
	}
	first, maxTs := h.RecordTimestamp(keep[0]), int64(-1)
	for i, r := range keep {
		ts := h.RecordTimestamp(r)
		maxTs = max(maxTs, ts)
		keep[i].Attributes, keep[i].TimestampDelta = 0, ts-first
	}
	if h.Attributes.LogAppendTime() {
		maxTs = h.MaxTimestamp
	}
	h.Attributes &= wire.AttrCodecMask | wire.AttrLogAppendTime | wire.AttrTransactional | wire.AttrControl
	h.FirstTimestamp, h.MaxTimestamp = first, maxTs
	return wire.AppendBatch(dst, h, keep)
}

// appendEmptyBatch appends batch h's header with no records, as Kafka's
// DefaultRecordBatch.writeEmptyHeader keeps a producer's last batch: uncompressed, no first
// timestamp, everything else as it was.
func appendEmptyBatch(dst []byte, h wire.BatchHeader) []byte {
	h.Attributes &= wire.AttrLogAppendTime | wire.AttrTransactional | wire.AttrControl
	h.FirstTimestamp = -1
	return wire.AppendBatch(dst, h, nil)
}

// eachBatch reads a segment's batches in order. The batch's bytes are valid only during fn.
func eachBatch(s *segment, fn func(b wire.Batch) error) error {
	sc := newBatchScanner(s.log, 0, s.size)
	for {
		pos, b, err := sc.next(false)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err == nil {
			err = fn(b)
		}
		if err != nil {
			return fmt.Errorf("segment %d at %d: %w", s.baseOffset, pos, err)
		}
	}
}

// swapCleaned replaces the files of segment i with cleaned data and its
// transaction index with txns, and puts the reopened segment, indexes
// rebuilt, in its place. The caller holds mu; readers are kept out (segMu)
// while the files change.
func (l *Log) swapCleaned(i int, data []byte, txns []AbortedTxn, cfg LogConfig) error {
	s := l.segments[i]
	cleaned := segmentPath(s.dir, s.baseOffset, logSuffix+cleanedSuffix)
	if err := writeSynced(cleaned, data); err != nil {
		return err
	}
	// The index file exists only once it has an entry.
	var index []byte
	for _, a := range txns {
		index = a.appendTo(index)
	}
	cleanedTxns := segmentPath(s.dir, s.baseOffset, txnIndexSuffix+cleanedSuffix)
	if len(index) > 0 {
		if err := writeSynced(cleanedTxns, index); err != nil {
			os.Remove(cleaned)
			return err
		}
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
	// Only now: the old index over the cleaned log names too many transactions, never too few.
	txnIndex := txnIndexPath(s.dir, s.baseOffset)
	if len(index) > 0 {
		if err := os.Rename(cleanedTxns, txnIndex); err != nil {
			return err
		}
	} else if err := os.Remove(txnIndex); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if err := syncPath(s.dir); err != nil {
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

// writeSynced writes a new file and flushes it; the file is removed if that fails.
func writeSynced(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if err = errors.Join(err, f.Close()); err != nil {
		os.Remove(path)
	}
	return err
}
