package storage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"go.uber.org/zap"
)

// Suffixes of files that a Kafka log directory may hold mid-operation; none survives a restart.
const (
	deletedSuffix = ".deleted" // segments awaiting asynchronous deletion
	cleanedSuffix = ".cleaned" // log cleaner output
	swapSuffix    = ".swap"    // log cleaner output being swapped in
)

// Open loads (creating if needed) the partition log in dir. Segments wholly below recoveryPoint are
// trusted: their state comes from their indexes, which are rebuilt only when missing or corrupt. Every
// later segment is recovered: each batch is read and its length and CRC checked, the file is cut at the
// first torn or corrupt batch, any later segments are deleted, and the indexes are rebuilt. The LEO is
// then the last valid batch's last offset + 1. Pass 0 to recover everything.
func Open(dir string, cfg LogConfig, recoveryPoint int64, logger *zap.Logger) (*Log, error) {
	return openLog(dir, cfg, recoveryPoint, 0, logger)
}

// openLog is Open with the log start offset from the checkpoint; it rises to the first segment's base.
func openLog(dir string, cfg LogConfig, recoveryPoint, logStartOffset int64, logger *zap.Logger) (*Log, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("open log %s: %w", dir, err)
	}
	if logger == nil {
		logger = zap.NewNop()
	}
	l := &Log{
		dir:    dir,
		logger: logger.With(zap.String("partition", logName(dir)), zap.String("dir", filepath.Dir(dir))),
	}
	l.config.Store(&cfg)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, storageError("open log", err)
	}
	bases, err := l.listSegments()
	if err != nil {
		return nil, storageError("open log", err)
	}
	recovered, err := l.loadSegments(bases, cfg, recoveryPoint, max(logStartOffset, 0))
	if err != nil {
		for _, s := range l.segments {
			s.closeFiles()
		}
		return nil, storageError("open log", err)
	}
	// Epochs recorded for offsets that recovery cut away, or below the log start, are gone with them.
	if l.epochs, err = loadLeaderEpochCache(dir); err == nil && cfg.legacyFormat() {
		err = l.epochs.drop()
	} else if err == nil {
		err = l.epochs.truncateFromEnd(l.logEndOffset)
	}
	if err == nil {
		err = l.epochs.truncateFromStart(l.logStartOffset)
	}
	if err == nil {
		// The replay that rebuilds the producer state also rebuilds the transaction index of every
		// recovered segment, so it starts at or before the first of them.
		from, reindex := l.logEndOffset, map[int64]bool{}
		for _, s := range recovered {
			reindex[s.baseOffset] = true
			from = min(from, s.baseOffset)
		}
		err = l.rebuildProducerStateLocked(from, reindex)
	}
	if err != nil {
		for _, s := range l.segments {
			s.closeFiles()
		}
		return nil, storageError("open log", err)
	}
	return l, nil
}

// listSegments returns the base offsets of the directory's segments, removing leftovers of interrupted
// operations and index files without a segment, as Kafka does on load.
func (l *Log) listSegments() ([]int64, error) {
	entries, err := os.ReadDir(l.dir)
	if err != nil {
		return nil, err
	}
	logs := make(map[int64]bool)
	for _, e := range entries {
		if base, ok := segmentBase(e.Name(), logSuffix); ok && !e.IsDir() {
			logs[base] = true
		}
	}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() {
			continue
		}
		orphan := false
		for _, suffix := range []string{indexSuffix, timeIndexSuffix, txnIndexSuffix} {
			if base, ok := segmentBase(name, suffix); ok && !logs[base] {
				orphan = true
			}
		}
		leftover := strings.HasSuffix(name, deletedSuffix) || strings.HasSuffix(name, cleanedSuffix) || strings.HasSuffix(name, swapSuffix)
		if orphan || leftover {
			l.logger.Info("Removing leftover file", zap.String("file", name))
			if err := os.Remove(filepath.Join(l.dir, name)); err != nil {
				return nil, err
			}
		}
	}
	bases := make([]int64, 0, len(logs))
	for base := range logs {
		bases = append(bases, base)
	}
	slices.Sort(bases)
	return bases, nil
}

// segmentBase parses a segment file name: 20 decimal digits and the suffix.
func segmentBase(name, suffix string) (int64, bool) {
	digits, ok := strings.CutSuffix(name, suffix)
	if !ok || len(digits) != 20 {
		return 0, false
	}
	base, err := strconv.ParseInt(digits, 10, 64)
	return base, err == nil && base >= 0
}

// loadSegments opens the segments, trusting or recovering each (see Open), and sets the log's offsets. It
// returns the recovered segments, whose transaction indexes it emptied for the producer state's replay to
// rebuild.
func (l *Log) loadSegments(bases []int64, cfg LogConfig, recoveryPoint, logStartOffset int64) ([]*segment, error) {
	var recovered []*segment
	for i, base := range bases {
		s, rawIndex, rawTimeIndex, err := openSegment(l.dir, base)
		if err != nil {
			return nil, err
		}
		l.segments = append(l.segments, s)
		last := i == len(bases)-1
		trusted := !last && bases[i+1] <= recoveryPoint
		if trusted || last {
			loadErr := s.load(rawIndex, rawTimeIndex)
			if last && loadErr == nil && s.nextOffset <= recoveryPoint {
				trusted = true
			}
			if trusted && loadErr != nil {
				l.logger.Warn("Found a missing or corrupt index, rebuilding it", zap.Int64("segment", base), zap.Error(loadErr))
				truncated, reason, err := s.recover(cfg)
				if err != nil {
					return nil, err
				}
				recovered = append(recovered, s)
				if truncated > 0 {
					// Kafka's recoverSegment cuts only this segment; later, trusted segments stay.
					l.logger.Warn("Truncated invalid bytes at the end of segment", zap.Int64("segment", base),
						zap.Int64("truncated-bytes", truncated), zap.Error(reason))
				}
			}
		}
		if trusted {
			continue
		}
		l.logger.Info("Recovering unflushed segment", zap.Int64("segment", base))
		truncated, reason, err := s.recover(cfg)
		if err != nil {
			return nil, err
		}
		recovered = append(recovered, s)
		if truncated > 0 {
			l.logger.Warn("Truncated invalid bytes at the end of segment", zap.Int64("segment", base),
				zap.Int64("truncated-bytes", truncated), zap.Error(reason))
			for _, later := range bases[i+1:] {
				l.logger.Warn("Deleting segment after the truncation point", zap.Int64("segment", later))
				if err := removeSegmentFiles(l.dir, later); err != nil {
					return nil, err
				}
			}
			break
		}
	}

	if len(l.segments) == 0 {
		s, err := createSegment(l.dir, logStartOffset, cfg.MaxIndexSize)
		if err != nil {
			return nil, err
		}
		l.segments = append(l.segments, s)
	}
	for _, s := range l.segments[:len(l.segments)-1] {
		if err := s.seal(); err != nil {
			return nil, err
		}
	}
	active := l.active()
	if err := active.preallocateIndexes(cfg.MaxIndexSize); err != nil {
		return nil, err
	}
	l.logEndOffset = active.nextOffset
	l.logStartOffset = max(logStartOffset, l.segments[0].baseOffset)
	if l.logStartOffset > l.logEndOffset {
		// The checkpointed start is past the data (everything was deleted, say by DeleteRecords):
		// Kafka drops the segments and starts afresh at the checkpointed offset.
		l.logger.Warn("Log start offset is past the log end offset, restarting the log there",
			zap.Int64("log-start-offset", l.logStartOffset), zap.Int64("log-end-offset", l.logEndOffset))
		for _, s := range l.segments {
			if err := s.remove(); err != nil {
				return nil, err
			}
		}
		s, err := createSegment(l.dir, l.logStartOffset, cfg.MaxIndexSize)
		l.segments, recovered = nil, nil
		if err != nil {
			return nil, err
		}
		l.segments = []*segment{s}
		l.logEndOffset = l.logStartOffset
	}
	// Recovered data may still sit only in the page cache of a crashed process; syncing it lets the
	// recovery point move to the LEO, as Kafka's does after recovery. With nothing recovered there is
	// nothing to sync: the segments below the recovery point were synced when it moved there, and a
	// new log's empty files hold nothing a crash could lose (creating thousands of partitions spent
	// more time in this directory fsync than in anything else).
	for _, s := range recovered {
		if err := s.flush(); err != nil {
			return nil, err
		}
	}
	if len(recovered) > 0 {
		if err := syncPath(l.dir); err != nil {
			return nil, err
		}
	}
	l.recoveryPoint = l.logEndOffset
	l.highWatermark = l.logStartOffset
	for _, s := range recovered {
		if err := s.txnIndex.reset(); err != nil {
			return nil, err
		}
	}
	l.logger.Info("Loaded log", zap.Int("segments", len(l.segments)), zap.Int64("log-start-offset", l.logStartOffset),
		zap.Int64("log-end-offset", l.logEndOffset))
	return recovered, nil
}

func removeSegmentFiles(dir string, base int64) error {
	var err error
	for _, suffix := range []string{logSuffix, indexSuffix, timeIndexSuffix, txnIndexSuffix} {
		if rmErr := os.Remove(segmentPath(dir, base, suffix)); rmErr != nil && !errors.Is(rmErr, os.ErrNotExist) {
			err = errors.Join(err, rmErr)
		}
	}
	return err
}
