package storage

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/wire"
)

// Special timestamps of ListOffsets that FetchOffsetByTimestamp understands.
const (
	LatestTimestamp   int64 = -1 // the log end offset
	EarliestTimestamp int64 = -2 // the log start offset
)

// AppendInfo describes a completed append, in the terms of Kafka's LogAppendInfo and the produce response.
type AppendInfo struct {
	FirstOffset          int64 // offset of the first record; -1 when the append held no batches
	LastOffset           int64 // offset of the last record; -1 when the append held no batches
	MaxTimestamp         int64 // largest batch max timestamp, -1 if none
	OffsetOfMaxTimestamp int64 // last offset of the batch holding MaxTimestamp, -1 if none
	LogAppendTime        int64 // always -1: topics use CreateTime, which the produce response reports as -1
	LogStartOffset       int64 // the log start offset after the append
	ValidBytes           int   // bytes appended
}

// Log is one partition's log: a directory of segments, each a `.log` file with `.index` and `.timeindex`.
// Appends are serialized; reads run concurrently with appends and see whole batches up to the log end
// offset they observe. All methods are safe for concurrent use.
//
// Lock order: mu before segMu; flushMu before segMu. Nothing is taken while segMu is held.
type Log struct {
	dir    string
	logger *zap.Logger
	config atomic.Pointer[LogConfig]

	// mu serializes the writers: appends, rolls, truncation, retention and close.
	mu sync.Mutex

	// segMu guards the fields below and the published state of every segment (size, offsets, index
	// entries). Writers hold mu and take segMu exclusively only to publish or to remove segments; readers
	// hold it shared for their whole read, so no segment file is closed under a reader.
	segMu          sync.RWMutex
	segments       []*segment // by base offset; the last one is active
	logEndOffset   int64
	logStartOffset int64
	highWatermark  int64
	// firstDirtyOffset is where the log cleaner's last pass ended (Kafka's cleaner checkpoint):
	// below it the log is clean. Guarded by mu.
	firstDirtyOffset int64
	recoveryPoint    int64  // everything below has been fsynced
	truncations      uint64 // lets a flush see that the data it synced was cut away meanwhile
	closed           bool
	failure          error // the first write failure: the log then refuses writes, as Kafka takes its dir offline
	// onFailure, set by the Manager before the log is shared, reports the first write failure: it
	// takes the log's directory offline (Manager.OfflineDirs). It is called with segMu held.
	onFailure func(error)

	flushMu sync.Mutex     // serializes flushes
	flushes sync.WaitGroup // flushes of rolled segments, which run in the background as in Kafka

	// epochs is the leader-epoch cache (leader-epoch-checkpoint); writers update it holding mu.
	epochs *leaderEpochCache
	// producers is the idempotent and transactional producers' state (producer_state.go), guarded by mu.
	producers producerStates
	// txnMu guards txns, the transactions that hold the last stable offset back (txn_index.go). Writers
	// change them holding mu too; it is taken last and held only briefly.
	txnMu sync.Mutex
	txns  *txnTracker
}

// Dir is the log's directory, `<log.dirs entry>/<topic>-<partition>` (a future log's:
// `<topic>-<partition>.<uniqueId>-future`). It changes when a future log replaces the log.
func (l *Log) Dir() string {
	l.segMu.RLock()
	defer l.segMu.RUnlock()
	return l.dir
}

// Config returns the log's current settings.
func (l *Log) Config() LogConfig { return *l.config.Load() }

// SetConfig replaces the log's settings (Kafka's updateConfig after a topic config change); they apply
// from the next append, roll or retention check.
func (l *Log) SetConfig(cfg LogConfig) error {
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("log %s: %w", l.Dir(), err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.config.Store(&cfg)
	if cfg.legacyFormat() {
		if err := l.epochs.drop(); err != nil {
			return l.fail("remove the leader epoch checkpoint", err)
		}
	}
	return nil
}

// LogStartOffset is the first offset a reader may fetch.
func (l *Log) LogStartOffset() int64 {
	l.segMu.RLock()
	defer l.segMu.RUnlock()
	return l.logStartOffset
}

// LogEndOffset (LEO) is the offset the next appended record gets.
func (l *Log) LogEndOffset() int64 {
	l.segMu.RLock()
	defer l.segMu.RUnlock()
	return l.logEndOffset
}

// HighWatermark is the value last given to SetHighWatermark, kept within the log's offsets. Retention
// never deletes a segment that holds offsets at or above it.
func (l *Log) HighWatermark() int64 {
	l.segMu.RLock()
	defer l.segMu.RUnlock()
	return l.highWatermark
}

// SetHighWatermark records the partition's high watermark, clamped to [log start offset, LEO] as Kafka's
// Log.updateHighWatermark does, and returns the value kept.
func (l *Log) SetHighWatermark(hw int64) int64 {
	l.segMu.Lock()
	l.highWatermark = min(max(hw, l.logStartOffset), l.logEndOffset)
	hw = l.highWatermark
	l.segMu.Unlock()
	// Transactions whose marker is now below the high watermark are stable.
	l.txnMu.Lock()
	l.txns.onHighWatermark(hw)
	l.txnMu.Unlock()
	return hw
}

// RecoveryPoint is the offset below which the log has been flushed to disk; recovery after a crash
// starts there.
func (l *Log) RecoveryPoint() int64 {
	l.segMu.RLock()
	defer l.segMu.RUnlock()
	return l.recoveryPoint
}

// Size is the total bytes of all segments.
func (l *Log) Size() int64 {
	l.segMu.RLock()
	defer l.segMu.RUnlock()
	var n int64
	for _, s := range l.segments {
		n += s.size
	}
	return n
}

// NumSegments is how many segments the log has.
func (l *Log) NumSegments() int {
	l.segMu.RLock()
	defer l.segMu.RUnlock()
	return len(l.segments)
}

// usable reports why the log cannot be used; callers hold segMu.
func (l *Log) usable() error {
	if l.closed {
		return ErrLogClosed
	}
	return l.failure
}

// writable is usable for writers, which hold mu but not segMu: a background flush may record a failure
// under segMu alone.
func (l *Log) writable() error {
	l.segMu.RLock()
	defer l.segMu.RUnlock()
	return l.usable()
}

// fail records the first write failure and returns it as a KAFKA_STORAGE_ERROR. Callers do not hold
// segMu.
func (l *Log) fail(op string, err error) error {
	l.segMu.Lock()
	defer l.segMu.Unlock()
	return l.failLocked(op, err)
}

// failLocked is fail for callers that hold segMu.
func (l *Log) failLocked(op string, err error) error {
	err = storageError(fmt.Sprintf("%s in %s", op, l.dir), err)
	if l.failure == nil {
		l.failure = err
		l.logger.Error("Log failed, refusing further writes", zap.String("op", op), zap.Error(err))
		if l.onFailure != nil {
			l.onFailure(err)
		}
	}
	return err
}

func (l *Log) active() *segment { return l.segments[len(l.segments)-1] }

// floorSegment is the index of the last segment whose base offset is at most offset, or 0.
func (l *Log) floorSegment(offset int64) int {
	i := sort.Search(len(l.segments), func(i int) bool { return l.segments[i].baseOffset > offset })
	return max(i-1, 0)
}

// AppendAsLeader appends records, one or more v2 record batches from a producer, assigning offsets from
// the log end offset and stamping leaderEpoch. Every batch is validated before anything is written, so a
// bad batch fails the whole append with nothing stored. The batches are stored as received except for
// baseOffset and partitionLeaderEpoch, which are rewritten in records itself; the CRC does not cover them.
//
// Errors wrap kerr.CorruptMessage (torn framing, bad CRC), kerr.UnsupportedForMessageFormat (magic other
// than 2), kerr.MessageTooLarge (a batch above MaxMessageBytes), kerr.InvalidRecord (a record count that
// does not match lastOffsetDelta+1, no records, control batches, malformed records: Kafka 2.8 raises
// InvalidRecordException for these), kerr.RecordListTooLarge (the append is larger than a segment), the
// producer state's errors (producer_state.go) and kerr.KafkaStorageError (I/O). Records holding no batch
// append nothing and report offsets of -1, as Kafka does.
func (l *Log) AppendAsLeader(records []byte, leaderEpoch int32) (AppendInfo, error) {
	return l.appendAsLeader(records, leaderEpoch, originClient)
}

// AppendAsCoordinator is AppendAsLeader for a coordinator's records (Kafka's AppendOrigin.Coordinator):
// the group and transaction coordinators' batches, and the transaction markers WriteTxnMarkers writes.
// Control batches are allowed and batches are not held to the client rules or to producer sequences; the
// producer epoch and a marker's coordinator epoch are still checked.
func (l *Log) AppendAsCoordinator(records []byte, leaderEpoch int32) (AppendInfo, error) {
	return l.appendAsLeader(records, leaderEpoch, originCoordinator)
}

func (l *Log) appendAsLeader(records []byte, leaderEpoch int32, origin appendOrigin) (AppendInfo, error) {
	cfg := l.Config()
	spans, err := validateBatches(records, cfg.MaxMessageBytes, cfg.compacts(), origin)
	if err != nil {
		return AppendInfo{}, err
	}
	if !cfg.legacyFormat() { // a legacy log checks what the conversion writes
		if err := checkAppendSize(records, cfg); err != nil {
			return AppendInfo{}, err
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.writable(); err != nil {
		return AppendInfo{}, err
	}
	if cfg.legacyFormat() {
		// Converted under the lock: the older formats keep offsets inside what they compress, so the
		// conversion needs the log end offset.
		converted, cspans, err := convertToLegacy(records, spans, cfg.MessageFormat, l.logEndOffset, cfg.MaxMessageBytes)
		if err == nil {
			err = checkAppendSize(converted, cfg)
		}
		if err != nil {
			return AppendInfo{}, err
		}
		return l.appendLocked(converted, cspans, cfg, producerAppend{})
	}
	next := l.logEndOffset
	for i := range spans {
		spans[i].hdr.BaseOffset = next
		next = spans[i].hdr.LastOffset() + 1
	}
	pa, dup, isDup, err := l.producers.prepareAppend(spans, origin)
	if err != nil {
		return AppendInfo{}, err
	}
	if isDup {
		// Already written (a producer's retry): nothing is appended and the original offsets are
		// returned, as Kafka does.
		return AppendInfo{FirstOffset: dup.FirstOffset, LastOffset: dup.LastOffset, MaxTimestamp: dup.MaxTimestamp,
			OffsetOfMaxTimestamp: dup.LastOffset, LogAppendTime: -1, LogStartOffset: l.LogStartOffset()}, nil
	}
	for _, sp := range spans {
		b := records[sp.pos:]
		wire.SetBaseOffset(b, sp.hdr.BaseOffset)
		wire.SetPartitionLeaderEpoch(b, leaderEpoch)
	}
	info, err := l.appendLocked(records, spans, cfg, pa)
	if err == nil && len(spans) > 0 {
		err = l.assignEpochLocked(leaderEpoch, info.FirstOffset)
	}
	return info, err
}

// assignEpochLocked records a batch's leader epoch in the epoch cache when it is new; the caller holds mu.
func (l *Log) assignEpochLocked(epoch int32, startOffset int64) error {
	if epoch < 0 || l.Config().legacyFormat() {
		return nil
	}
	if err := l.epochs.assign(epoch, startOffset); err != nil {
		return l.fail("assign leader epoch", err)
	}
	return nil
}

// AppendAsFollower appends batches fetched from the leader, keeping their offsets and leader epochs.
// The first batch must start at or after the log end offset (else ErrUnexpectedAppendOffset) and offsets
// must increase (else ErrOffsetsOutOfOrder). Framing, CRC and size are checked as for the leader, but not
// the record count: compaction leaves batches with fewer records than their offset range.
func (l *Log) AppendAsFollower(records []byte) (AppendInfo, error) {
	cfg := l.Config()
	spans, err := validateBatches(records, cfg.MaxMessageBytes, false, originReplication)
	if err != nil {
		return AppendInfo{}, err
	}
	if err := checkAppendSize(records, cfg); err != nil {
		return AppendInfo{}, err
	}
	for i := 1; i < len(spans); i++ {
		if spans[i].hdr.BaseOffset <= spans[i-1].hdr.LastOffset() {
			return AppendInfo{}, fmt.Errorf("batch at offset %d follows one ending at %d: %w",
				spans[i].hdr.BaseOffset, spans[i-1].hdr.LastOffset(), ErrOffsetsOutOfOrder)
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.writable(); err != nil {
		return AppendInfo{}, err
	}
	if len(spans) > 0 && spans[0].hdr.BaseOffset < l.logEndOffset {
		return AppendInfo{}, fmt.Errorf("first batch at offset %d, log end offset %d: %w",
			spans[0].hdr.BaseOffset, l.logEndOffset, ErrUnexpectedAppendOffset)
	}
	pa, _, _, err := l.producers.prepareAppend(spans, originReplication)
	if err != nil {
		return AppendInfo{}, err
	}
	info, err := l.appendLocked(records, spans, cfg, pa)
	for i := 0; err == nil && i < len(spans); i++ {
		err = l.assignEpochLocked(spans[i].hdr.PartitionLeaderEpoch, spans[i].hdr.BaseOffset)
	}
	return info, err
}

// checkAppendSize rejects an append that could not fit even an empty segment, as Kafka does with
// RecordBatchTooLargeException.
func checkAppendSize(records []byte, cfg LogConfig) error {
	if int64(len(records)) > cfg.SegmentBytes {
		return fmt.Errorf("append of %d bytes is larger than segment.bytes %d: %w", len(records), cfg.SegmentBytes, kerr.RecordListTooLarge)
	}
	return nil
}

// appendLocked writes validated batches whose offsets are final and applies their effect on the producer
// state: the producers' entries, the transactions opened and closed, and the aborted ones in the
// transaction index of the segment written to. The caller holds mu.
func (l *Log) appendLocked(records []byte, spans []batchSpan, cfg LogConfig, pa producerAppend) (AppendInfo, error) {
	info := AppendInfo{FirstOffset: -1, LastOffset: -1, MaxTimestamp: -1, OffsetOfMaxTimestamp: -1, LogAppendTime: -1, ValidBytes: len(records)}
	if len(spans) == 0 {
		info.LogStartOffset = l.LogStartOffset()
		return info, nil
	}
	info.FirstOffset = spans[0].hdr.BaseOffset
	info.LastOffset = spans[len(spans)-1].hdr.LastOffset()
	for _, sp := range spans {
		if sp.hdr.MaxTimestamp > info.MaxTimestamp {
			info.MaxTimestamp, info.OffsetOfMaxTimestamp = sp.hdr.MaxTimestamp, sp.hdr.LastOffset()
		}
	}

	seg := l.active()
	if l.shouldRoll(seg, cfg, int64(len(records)), info.MaxTimestamp, info.FirstOffset, info.LastOffset) {
		var err error
		if seg, err = l.roll(info.FirstOffset, cfg); err != nil {
			return AppendInfo{}, err
		}
	}
	if _, err := seg.log.WriteAt(records, seg.size); err != nil {
		return AppendInfo{}, l.fail("append", err)
	}

	l.segMu.Lock()
	defer l.segMu.Unlock()
	if err := seg.publishAppend(int64(len(records)), info.LastOffset, info.MaxTimestamp, info.OffsetOfMaxTimestamp, cfg.IndexIntervalBytes); err != nil {
		return AppendInfo{}, l.failLocked("append", err)
	}
	l.logEndOffset = info.LastOffset + 1
	info.LogStartOffset = l.logStartOffset
	maps.Copy(l.producers, pa.updated)
	l.txnMu.Lock()
	defer l.txnMu.Unlock()
	for _, ev := range pa.events {
		if aborted := l.txns.apply(ev); aborted != nil {
			if err := seg.txnIndex.append(*aborted); err != nil {
				return AppendInfo{}, l.failLocked("append to the transaction index", err)
			}
		}
	}
	return info, nil
}

// shouldRoll applies Kafka's LogSegment.shouldRoll: the append would overflow segment.bytes, the segment
// has spanned segment.ms, an index is full, or the offsets no longer fit the segment's relative offsets.
func (l *Log) shouldRoll(s *segment, cfg LogConfig, size, maxTimestamp, firstOffset, lastOffset int64) bool {
	if s.size+size > cfg.SegmentBytes {
		return true
	}
	if s.size > 0 {
		waited := time.Since(s.created).Milliseconds()
		if s.rollingBasedTimestamp >= 0 {
			waited = maxTimestamp - s.rollingBasedTimestamp
		}
		if waited > cfg.SegmentMs || s.index.full() || s.timeIndex.full() {
			return true
		}
	}
	return firstOffset < s.baseOffset || lastOffset-s.baseOffset > math.MaxInt32
}

// roll makes a new active segment at newBase (the LEO, or a follower's next batch). The old segment is
// sealed and flushed in the background, which advances the recovery point to newBase. An empty active
// segment is replaced instead, as Kafka does when a roll lands on one. The caller holds mu.
func (l *Log) roll(newBase int64, cfg LogConfig) (*segment, error) {
	old := l.active()
	if old.size == 0 && old.baseOffset == newBase {
		return old, nil
	}
	seg, err := createSegment(l.dir, newBase, cfg.MaxIndexSize)
	if err != nil {
		return nil, l.fail("roll", err)
	}
	l.segMu.Lock()
	if old.size == 0 {
		l.segments[len(l.segments)-1] = seg
		err = old.remove()
	} else {
		l.segments = append(l.segments, seg)
		err = old.seal()
	}
	l.segMu.Unlock()
	if err != nil {
		return nil, l.fail("roll", err)
	}
	l.logger.Info("Rolled new log segment", zap.Int64("base-offset", newBase), zap.Int64("previous-base-offset", old.baseOffset))
	if err := l.writeProducerSnapshotLocked(); err != nil {
		// The state is rebuilt from an older snapshot and the log if this one is missing.
		l.logger.Warn("Writing the producer snapshot failed", zap.Error(err))
	}
	if old.size > 0 {
		l.flushes.Go(func() {
			if err := l.flushTo(newBase); err != nil && !errors.Is(err, ErrLogClosed) {
				l.fail("flush", err)
			}
		})
	}
	return seg, nil
}

// publishAppend makes an append of n bytes, already written at s.size, visible: index entries every
// IndexIntervalBytes (as Kafka's LogSegment.append), size, next offset and timestamps. The caller holds
// the Log's mu and segMu.
func (s *segment) publishAppend(n, lastOffset, maxTimestamp, offsetOfMaxTimestamp int64, indexInterval int32) error {
	pos := s.size
	if pos == 0 {
		s.rollingBasedTimestamp = maxTimestamp
	}
	if maxTimestamp > s.maxTimestamp {
		s.maxTimestamp, s.offsetOfMaxTimestamp = maxTimestamp, offsetOfMaxTimestamp
	}
	if s.bytesSinceLastIndexEntry > int64(indexInterval) {
		if err := s.index.append(lastOffset, pos); err != nil {
			return err
		}
		if err := s.timeIndex.maybeAppend(s.maxTimestamp, s.offsetOfMaxTimestamp); err != nil {
			return err
		}
		s.bytesSinceLastIndexEntry = 0
	}
	s.bytesSinceLastIndexEntry += n
	s.size += n
	s.nextOffset = lastOffset + 1
	return nil
}

// Read returns whole record batches, as stored, starting with the batch that holds offset. It stops
// before the first batch holding an offset at or above maxOffset (the high watermark for consumers;
// a batch reaching past maxOffset is left out whole, as Kafka bounds reads by that batch's position) and
// before going past maxBytes, except that with minOneMessage a first batch larger than maxBytes is
// returned alone (KIP-74). Offsets outside [log start offset, LEO] fail with kerr.OffsetOutOfRange; offset
// == LEO returns no bytes. Like Kafka, one read never spans two segments.
func (l *Log) Read(offset int64, maxBytes int32, maxOffset int64, minOneMessage bool) ([]byte, error) {
	l.segMu.RLock()
	defer l.segMu.RUnlock()
	seg, pos, size, _, err := l.regionLocked(offset, maxBytes, maxOffset, minOneMessage)
	if err != nil || size == 0 {
		return []byte{}, err
	}
	buf := make([]byte, size)
	if _, err := seg.log.ReadAt(buf, pos); err != nil {
		return nil, storageError("read "+l.dir, err)
	}
	return buf, nil
}

// ReadFileRecords finds what Read returns and leaves it in the segment file, for a Fetch to send from
// there (zero-copy). The FileRecords hold their own descriptor of the file, so they stay readable after
// the segment is deleted, until Close.
func (l *Log) ReadFileRecords(offset int64, maxBytes int32, maxOffset int64, minOneMessage bool) (*FileRecords, error) {
	l.segMu.RLock()
	defer l.segMu.RUnlock()
	seg, pos, size, last, err := l.regionLocked(offset, maxBytes, maxOffset, minOneMessage)
	if err != nil || size == 0 {
		return &FileRecords{lastOffset: -1}, err
	}
	f, err := dupFile(seg.log)
	if err != nil {
		return nil, storageError("read "+l.dir, err)
	}
	return &FileRecords{f: f, pos: pos, size: int(size), lastOffset: last}, nil
}

// regionLocked is Read's search: the segment and the stretch of it to return. The caller holds segMu.
func (l *Log) regionLocked(offset int64, maxBytes int32, maxOffset int64, minOneMessage bool) (seg *segment, pos, size, lastOffset int64, err error) {
	if err := l.usable(); err != nil {
		return nil, 0, 0, -1, err
	}
	if offset < l.logStartOffset || offset > l.logEndOffset {
		return nil, 0, 0, -1, fmt.Errorf("offset %d is outside [%d, %d] in %s: %w", offset, l.logStartOffset, l.logEndOffset, l.dir, kerr.OffsetOutOfRange)
	}
	if offset == l.logEndOffset {
		return nil, 0, 0, -1, nil
	}
	for i := l.floorSegment(offset); i < len(l.segments); i++ {
		seg = l.segments[i]
		pos, size, lastOffset, found, err := seg.region(offset, maxBytes, maxOffset, minOneMessage)
		if err != nil {
			return nil, 0, 0, -1, storageError("read "+l.dir, err)
		}
		if found {
			return seg, pos, size, lastOffset, nil
		}
	}
	return nil, 0, 0, -1, nil
}

// FetchOffsetByTimestamp answers ListOffsets: the first record at or after the log start offset whose
// timestamp is at least ts, with that timestamp. LatestTimestamp and EarliestTimestamp return the LEO and
// the log start offset with timestamp -1. ok is false when no record is that recent.
func (l *Log) FetchOffsetByTimestamp(ts int64) (offset, timestamp int64, ok bool) {
	l.segMu.RLock()
	defer l.segMu.RUnlock()
	if l.usable() != nil {
		return 0, 0, false
	}
	switch ts {
	case LatestTimestamp:
		return l.logEndOffset, -1, true
	case EarliestTimestamp:
		return l.logStartOffset, -1, true
	}
	for _, s := range l.segments {
		if s.maxTimestamp < ts || s.nextOffset <= l.logStartOffset {
			continue
		}
		offset, timestamp, ok, err := s.findByTimestamp(ts, l.logStartOffset)
		if err != nil {
			l.logger.Warn("Timestamp lookup failed", zap.Int64("timestamp", ts), zap.Int64("segment", s.baseOffset), zap.Error(err))
			return 0, 0, false
		}
		if ok {
			return offset, timestamp, true
		}
	}
	return 0, 0, false
}

// Truncate removes every batch holding an offset at or above to, as a follower does before fetching from
// a new leader. Whole batches go, so when to falls inside a batch the LEO ends at that batch's base offset.
// The high watermark and recovery point are lowered to the new LEO.
func (l *Log) Truncate(to int64) error {
	if to < 0 {
		return fmt.Errorf("truncate %s to negative offset %d", l.Dir(), to)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.writable(); err != nil {
		return err
	}
	if to >= l.logEndOffset {
		// Nothing to cut, but the epoch cache may end with an epoch that
		// starts at the log end: this replica led in it and appended
		// nothing before another leader was elected. It goes, as in Kafka,
		// or a follower would keep naming an epoch its leader never had.
		if err := l.epochs.truncateFromEnd(l.logEndOffset); err != nil {
			return l.fail("truncate leader epochs", err)
		}
		return nil
	}
	if err := l.truncateSegmentsLocked(to); err != nil {
		return err
	}
	l.firstDirtyOffset = min(l.firstDirtyOffset, to)
	if err := l.epochs.truncateFromEnd(l.LogEndOffset()); err != nil {
		return l.fail("truncate leader epochs", err)
	}
	if err := l.rebuildProducerStateLocked(l.LogEndOffset(), nil); err != nil {
		return l.fail("reload producer state", err)
	}
	return nil
}

// truncateSegmentsLocked is Truncate's work on the segments; the caller holds mu.
func (l *Log) truncateSegmentsLocked(to int64) error {
	cfg := l.Config()
	if to < l.segments[0].baseOffset {
		return l.truncateFullyLocked(to, cfg)
	}
	l.segMu.Lock()
	defer l.segMu.Unlock()
	keep := l.floorSegment(to)
	var err error
	for _, s := range l.segments[keep+1:] {
		err = errors.Join(err, s.remove())
	}
	clear(l.segments[keep+1:])
	l.segments = l.segments[:keep+1]
	seg := l.segments[keep]
	err = errors.Join(err, seg.truncateTo(to, cfg.MaxIndexSize))
	if err != nil {
		return l.failLocked("truncate", err)
	}
	l.logger.Info("Truncated log", zap.Int64("target-offset", to), zap.Int64("previous-log-end-offset", l.logEndOffset),
		zap.Int64("log-end-offset", seg.nextOffset))
	l.logEndOffset = seg.nextOffset
	l.logStartOffset = min(l.logStartOffset, l.logEndOffset)
	l.afterTruncationLocked()
	return nil
}

// afterTruncationLocked lowers the offsets that may not pass the LEO.
func (l *Log) afterTruncationLocked() {
	l.recoveryPoint = min(l.recoveryPoint, l.logEndOffset)
	l.highWatermark = min(max(l.highWatermark, l.logStartOffset), l.logEndOffset)
	l.truncations++
}

// TruncateFullyAndStartAt deletes every segment and restarts the log empty at offset, as a follower does
// when the leader's log starts past the follower's end.
func (l *Log) TruncateFullyAndStartAt(offset int64) error {
	if offset < 0 {
		return fmt.Errorf("restart %s at negative offset %d", l.Dir(), offset)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.writable(); err != nil {
		return err
	}
	if err := l.truncateFullyLocked(offset, l.Config()); err != nil {
		return err
	}
	if err := l.epochs.clear(); err != nil {
		return l.fail("truncate leader epochs", err)
	}
	if err := l.clearProducerStateLocked(); err != nil {
		return l.fail("clear producer state", err)
	}
	return nil
}

func (l *Log) truncateFullyLocked(offset int64, cfg LogConfig) error {
	l.segMu.Lock()
	defer l.segMu.Unlock()
	var err error
	for _, s := range l.segments {
		err = errors.Join(err, s.remove())
	}
	l.segments = nil
	if err != nil {
		return l.failLocked("truncate", err)
	}
	seg, err := createSegment(l.dir, offset, cfg.MaxIndexSize)
	if err != nil {
		return l.failLocked("truncate", err)
	}
	l.logger.Info("Truncated log fully", zap.Int64("new-start-offset", offset), zap.Int64("previous-log-end-offset", l.logEndOffset))
	l.segments = []*segment{seg}
	l.logEndOffset, l.logStartOffset = offset, offset
	l.afterTruncationLocked()
	return nil
}

// LogStartOffsetReason says why the log start offset moved, as Kafka's LogStartOffsetIncrementReason.
type LogStartOffsetReason string

// Why a log start offset moves up.
const (
	ClientRecordDeletion    LogStartOffsetReason = "client delete records request" // DeleteRecords on the leader
	LeaderOffsetIncremented LogStartOffsetReason = "leader offset increment"       // a follower following its leader's
)

// MaybeIncrementLogStartOffset moves the log start offset up to offset (Kafka's
// Log.maybeIncrementLogStartOffset). Offsets above the high watermark fail with kerr.OffsetOutOfRange,
// as in Kafka; one at or below the current start changes nothing. Segments wholly below the new start
// are deleted by the next retention pass.
func (l *Log) MaybeIncrementLogStartOffset(offset int64, reason LogStartOffsetReason) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.segMu.Lock()
	defer l.segMu.Unlock()
	if err := l.usable(); err != nil {
		return err
	}
	if offset > l.highWatermark {
		return fmt.Errorf("cannot increment the log start offset to %d of %s since it is larger than the high watermark %d: %w",
			offset, filepath.Base(l.dir), l.highWatermark, kerr.OffsetOutOfRange)
	}
	if offset > l.logStartOffset {
		l.logStartOffset = offset
		l.logger.Info("Incremented log start offset", zap.Int64("log-start-offset", offset), zap.String("reason", string(reason)))
		if err := l.epochs.truncateFromStart(offset); err != nil {
			return l.failLocked("truncate the leader-epoch cache", err)
		}
	}
	return nil
}

// Flush fsyncs every segment written since the recovery point (data and indexes) and the directory, then
// advances the recovery point to the LEO observed at the start. Appends never fsync: like Kafka's
// defaults, durability comes from replication, with flushes on roll and shutdown.
func (l *Log) Flush() error {
	l.segMu.RLock()
	leo, err := l.logEndOffset, l.usable()
	l.segMu.RUnlock()
	if err != nil {
		return err
	}
	return l.flushTo(leo)
}

// flushTo fsyncs the segments holding offsets in [recovery point, offset) and then moves the recovery
// point to offset, unless a truncation meanwhile cut away what was synced.
func (l *Log) flushTo(offset int64) error {
	l.flushMu.Lock()
	defer l.flushMu.Unlock()
	// The leader-epoch file first: its entries precede the batches they describe.
	if err := l.epochs.flush(); err != nil {
		return storageError("flush "+l.dir, err)
	}
	l.segMu.RLock()
	if err := l.usable(); err != nil {
		l.segMu.RUnlock()
		return err
	}
	if offset <= l.recoveryPoint {
		l.segMu.RUnlock()
		return nil
	}
	generation := l.truncations
	var dirty []*segment
	for i, s := range l.segments {
		last := i == len(l.segments)-1
		if s.baseOffset < offset && (last || l.segments[i+1].baseOffset > l.recoveryPoint) {
			dirty = append(dirty, s)
		}
	}
	l.segMu.RUnlock()

	for _, s := range dirty {
		// A segment deleted by retention or truncation meanwhile has closed files; nothing to sync.
		if err := s.flush(); err != nil && !errors.Is(err, os.ErrClosed) {
			return storageError("flush "+l.dir, err)
		}
	}
	if err := syncPath(l.dir); err != nil {
		return storageError("flush "+l.dir, err)
	}

	l.segMu.Lock()
	defer l.segMu.Unlock()
	if l.truncations == generation && offset > l.recoveryPoint {
		l.recoveryPoint = min(offset, l.logEndOffset)
	}
	return nil
}

// Close seals the active segment's indexes (trimming the preallocated files) and closes every file. It
// does not fsync: the Manager flushes before closing, as Kafka's LogManager does.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.writable() == nil {
		// A snapshot at the LEO spares the next open a replay of the active segment.
		if err := l.writeProducerSnapshotLocked(); err != nil {
			l.logger.Warn("Writing the producer snapshot failed", zap.Error(err))
		}
	}
	l.segMu.Lock()
	if l.closed {
		l.segMu.Unlock()
		return nil
	}
	l.closed = true
	l.segMu.Unlock()
	l.flushes.Wait()
	var err error
	for _, s := range l.segments {
		err = errors.Join(err, s.close())
	}
	if err != nil {
		return storageError("close "+l.dir, err)
	}
	return nil
}

// Delete closes the log and removes its directory. Kafka renames the directory to `*-delete` and removes
// it later; this broker removes it at once.
func (l *Log) Delete() error {
	closeErr := l.Close()
	if err := os.RemoveAll(l.dir); err != nil {
		return storageError("delete "+l.dir, errors.Join(closeErr, err))
	}
	l.logger.Info("Deleted log")
	return nil
}

// syncPath fsyncs a file, or a directory so that its created, renamed and removed entries are durable.
func syncPath(path string) error {
	d, err := os.Open(path)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}
