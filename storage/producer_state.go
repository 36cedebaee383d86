package storage

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/wire"
)

// Idempotent and transactional producers (KIP-98), Kafka's ProducerStateManager: for every producer id
// that wrote to the log, its epoch, the sequence numbers and offsets of its last five batches, the
// coordinator epoch of its last transaction marker and the first offset of its open transaction. The
// leader checks each producer batch against it before the append: a batch already written (same epoch,
// same sequence range) is not written again and the append reports the original offsets; an older epoch
// is INVALID_PRODUCER_EPOCH; a sequence that does not follow the last one is OUT_OF_ORDER_SEQUENCE_NUMBER;
// a non-transactional batch while a transaction is open is INVALID_TXN_STATE; a marker from an older
// coordinator than the last one is TRANSACTION_COORDINATOR_FENCED. Followers update the same state from
// the batches they replicate, so it moves with leadership.
//
// A transactional batch opens its producer's transaction at its first offset; the COMMIT or ABORT marker
// closes it. An aborted transaction is written to the transaction index of the segment the marker went to
// (txn_index.go), with the last stable offset at that moment. Open transactions, and closed ones whose
// marker is not yet below the high watermark, make up the first unstable offset; the last stable offset
// (LSO) is the lower of it and the high watermark, and read_committed consumers read below it.
//
// The state is rebuilt from the log on open, starting from the newest snapshot at or below the log end
// offset (at or below the first recovered segment, whose transaction index is rebuilt by the replay).
// Snapshots are written when a segment rolls and when the log closes, as `<offset>.snapshot` (20-digit
// offset, as Kafka names them) in the partition directory. Their format is this broker's own, simpler than
// Kafka's binary one: a "zkafka-producer-snapshot 2" line, then for each producer a line
// "p <producerId> <epoch> <coordinatorEpoch> <currentTxnFirstOffset> <lastTimestamp>" followed by one line
// per remembered batch, oldest first, "b <firstSeq> <lastSeq> <firstOffset> <lastOffset> <maxTimestamp>".
// A snapshot of another version is ignored and the state replayed from the log.

// maxProducerBatches is how many batches per producer are remembered for duplicate detection (Kafka's
// ProducerStateEntry.NumBatchesToRetain, matching max.in.flight.requests.per.connection <= 5).
const maxProducerBatches = 5

const (
	producerSnapshotSuffix = ".snapshot"
	producerSnapshotHeader = "zkafka-producer-snapshot 2"
	noProducerID           = -1
	noProducerEpoch        = -1
	noSequence             = -1
	noOffset               = -1
)

// ProducerBatch is what the producer state remembers of one batch.
type ProducerBatch struct {
	FirstSeq, LastSeq       int32
	FirstOffset, LastOffset int64
	MaxTimestamp            int64
}

// ProducerEntry is one producer's state in a partition.
type ProducerEntry struct {
	Epoch   int16
	Batches []ProducerBatch // oldest first, at most maxProducerBatches
	// CoordinatorEpoch is the coordinator epoch of the producer's last transaction marker, -1 if none.
	CoordinatorEpoch int32
	// CurrentTxnFirstOffset is the first offset of the producer's open transaction, -1 if none.
	CurrentTxnFirstOffset int64
	// LastTimestamp is the timestamp of the producer's last batch or marker.
	LastTimestamp int64
}

func newProducerEntry() *ProducerEntry {
	return &ProducerEntry{Epoch: noProducerEpoch, CoordinatorEpoch: -1, CurrentTxnFirstOffset: noOffset, LastTimestamp: -1}
}

func (e *ProducerEntry) clone() *ProducerEntry {
	c := *e
	c.Batches = slices.Clone(e.Batches)
	return &c
}

func (e *ProducerEntry) lastSeq() int32 {
	if len(e.Batches) == 0 {
		return noSequence
	}
	return e.Batches[len(e.Batches)-1].LastSeq
}

// maybeUpdateEpoch moves to a new epoch, forgetting the old epoch's batches.
func (e *ProducerEntry) maybeUpdateEpoch(epoch int16) {
	if epoch != e.Epoch {
		e.Epoch, e.Batches = epoch, nil
	}
}

func (e *ProducerEntry) add(epoch int16, b ProducerBatch) {
	e.maybeUpdateEpoch(epoch)
	e.Batches = append(e.Batches, b)
	if n := len(e.Batches); n > maxProducerBatches {
		e.Batches = slices.Delete(e.Batches, 0, n-maxProducerBatches)
	}
	e.LastTimestamp = b.MaxTimestamp
}

func (e *ProducerEntry) duplicateOf(epoch int16, firstSeq, lastSeq int32) (ProducerBatch, bool) {
	if epoch != e.Epoch {
		return ProducerBatch{}, false
	}
	for _, b := range e.Batches {
		if b.FirstSeq == firstSeq && b.LastSeq == lastSeq {
			return b, true
		}
	}
	return ProducerBatch{}, false
}

func inSequence(lastSeq, nextSeq int32) bool {
	return nextSeq == lastSeq+1 || nextSeq == 0 && lastSeq == math.MaxInt32
}

// producerStates is a partition's producer state; the Log guards it with its writer lock.
type producerStates map[int64]*ProducerEntry

// txnEvent is what one batch did to the transactions: opened one (started) or closed one (completed).
type txnEvent struct {
	started  bool
	producer int64
	first    int64 // the transaction's first offset
	last     int64 // the marker's offset, for a completed transaction
	aborted  bool
}

// producerAppend is the effect of an append on the producer state, checked before the write and applied
// after it (Kafka's ProducerAppendInfo): the producers' updated entries (nil when no batch has a producer)
// and the transactions opened and closed, in batch order.
type producerAppend struct {
	updated map[int64]*ProducerEntry
	events  []txnEvent
}

// prepareAppend checks an append's producer batches against the state, in order, and returns their
// effect. The spans' base offsets must be the final ones. For a client append it returns the original
// batch when the first producer batch is a duplicate of one already written. Replicated batches are not
// checked (the leader did), except that a marker must parse.
func (s producerStates) prepareAppend(spans []batchSpan, origin appendOrigin) (producerAppend, ProducerBatch, bool, error) {
	var pa producerAppend
	for i, sp := range spans {
		h := sp.hdr
		if h.ProducerID == noProducerID {
			continue
		}
		cur, ok := pa.updated[h.ProducerID]
		if !ok {
			cur = newProducerEntry()
			if e, ok := s[h.ProducerID]; ok {
				cur = e.clone()
			}
			if pa.updated == nil {
				pa.updated = map[int64]*ProducerEntry{}
			}
			pa.updated[h.ProducerID] = cur
		}
		if h.Attributes.Control() {
			if !sp.hasMarker {
				continue // an empty control batch: the cleaner removed its transaction
			}
			ev, err := appendEndTxnMarker(cur, h, sp.marker, origin)
			if err != nil {
				return producerAppend{}, ProducerBatch{}, false, err
			}
			if ev != nil {
				pa.events = append(pa.events, *ev)
			}
			continue
		}
		firstSeq, lastSeq := h.BaseSequence, h.LastSequence()
		if origin == originClient {
			if dup, ok := cur.duplicateOf(h.ProducerEpoch, firstSeq, lastSeq); ok {
				if i == 0 {
					return producerAppend{}, dup, true, nil
				}
				return producerAppend{}, ProducerBatch{}, false, fmt.Errorf("producer %d: batch with sequences %d-%d duplicates one already written: %w",
					h.ProducerID, firstSeq, lastSeq, kerr.DuplicateSequenceNumber)
			}
		}
		if err := checkProducerEpoch(cur, h, origin); err != nil {
			return producerAppend{}, ProducerBatch{}, false, err
		}
		if origin == originClient {
			if err := checkSequence(cur, h); err != nil {
				return producerAppend{}, ProducerBatch{}, false, err
			}
		}
		cur.add(h.ProducerEpoch, ProducerBatch{
			FirstSeq: firstSeq, LastSeq: lastSeq, FirstOffset: h.BaseOffset, LastOffset: h.LastOffset(), MaxTimestamp: h.MaxTimestamp,
		})
		switch transactional := h.Attributes.Transactional(); {
		case cur.CurrentTxnFirstOffset >= 0 && !transactional:
			return producerAppend{}, ProducerBatch{}, false, fmt.Errorf("producer %d wrote a non-transactional batch at %d during its transaction: %w",
				h.ProducerID, h.BaseOffset, kerr.InvalidTxnState)
		case cur.CurrentTxnFirstOffset < 0 && transactional:
			cur.CurrentTxnFirstOffset = h.BaseOffset
			pa.events = append(pa.events, txnEvent{started: true, producer: h.ProducerID, first: h.BaseOffset})
		}
	}
	return pa, ProducerBatch{}, false, nil
}

// checkProducerEpoch refuses a batch from an older epoch than the producer's, except when replicating.
func checkProducerEpoch(cur *ProducerEntry, h wire.BatchHeader, origin appendOrigin) error {
	if h.ProducerEpoch < cur.Epoch && origin != originReplication {
		// Kafka 2.7 and later answer INVALID_PRODUCER_EPOCH, which a producer may recover from, rather
		// than the fatal PRODUCER_FENCED.
		return fmt.Errorf("producer %d has epoch %d, below the last seen %d: %w", h.ProducerID, h.ProducerEpoch, cur.Epoch, kerr.InvalidProducerEpoch)
	}
	return nil
}

// checkSequence applies Kafka's sequence rules to a client's data batch.
func checkSequence(cur *ProducerEntry, h wire.BatchHeader) error {
	firstSeq := h.BaseSequence
	switch {
	case h.ProducerEpoch != cur.Epoch:
		// A new epoch starts at sequence 0, unless nothing is known of the producer.
		if firstSeq != 0 && cur.Epoch != noProducerEpoch {
			return fmt.Errorf("producer %d: new epoch %d starts at sequence %d, not 0: %w",
				h.ProducerID, h.ProducerEpoch, firstSeq, kerr.OutOfOrderSequenceNumber)
		}
	case len(cur.Batches) > 0 && !inSequence(cur.lastSeq(), firstSeq):
		return fmt.Errorf("producer %d epoch %d: sequence %d does not follow %d: %w",
			h.ProducerID, h.ProducerEpoch, firstSeq, cur.lastSeq(), kerr.OutOfOrderSequenceNumber)
	}
	return nil
}

// appendEndTxnMarker closes the producer's transaction with a marker (Kafka's appendEndTxnMarker): the
// epoch and coordinator epoch are checked, the entry takes the marker's epoch and coordinator epoch, and
// the transaction, if one was open, completes.
func appendEndTxnMarker(cur *ProducerEntry, h wire.BatchHeader, m wire.EndTxnMarker, origin appendOrigin) (*txnEvent, error) {
	if err := checkProducerEpoch(cur, h, origin); err != nil {
		return nil, err
	}
	if cur.CoordinatorEpoch > m.CoordinatorEpoch && origin != originReplication {
		return nil, fmt.Errorf("producer %d: marker from coordinator epoch %d, below the last %d: %w",
			h.ProducerID, m.CoordinatorEpoch, cur.CoordinatorEpoch, kerr.TransactionCoordinatorFenced)
	}
	var ev *txnEvent
	if cur.CurrentTxnFirstOffset >= 0 {
		ev = &txnEvent{producer: h.ProducerID, first: cur.CurrentTxnFirstOffset, last: h.BaseOffset, aborted: !m.Commit}
	}
	cur.maybeUpdateEpoch(h.ProducerEpoch)
	cur.CurrentTxnFirstOffset = noOffset
	cur.CoordinatorEpoch = m.CoordinatorEpoch
	cur.LastTimestamp = h.MaxTimestamp
	return ev, nil
}

// ProducerStates returns a copy of the partition's producer state by producer id.
func (l *Log) ProducerStates() map[int64]ProducerEntry {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[int64]ProducerEntry, len(l.producers))
	for id, e := range l.producers {
		out[id] = *e.clone()
	}
	return out
}

// RemoveExpiredProducers forgets the producers with no open transaction whose last batch or marker
// is at least expiration older than nowMs (Kafka 2.8's removeExpiredProducers, with
// transactional.id.expiration.ms), and returns how many went. A forgotten producer's next batch
// starts its state again, as a new producer's does.
func (l *Log) RemoveExpiredProducers(nowMs int64, expiration time.Duration) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for id, e := range l.producers {
		if e.CurrentTxnFirstOffset == noOffset && nowMs-e.LastTimestamp >= expiration.Milliseconds() {
			delete(l.producers, id)
			n++
		}
	}
	return n
}

func snapshotPath(dir string, offset int64) string {
	return filepath.Join(dir, fmt.Sprintf("%020d%s", offset, producerSnapshotSuffix))
}

// listSnapshots returns the offsets of the directory's producer snapshots, ascending.
func listSnapshots(dir string) ([]int64, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var offsets []int64
	for _, e := range entries {
		if base, ok := segmentBase(e.Name(), producerSnapshotSuffix); ok && !e.IsDir() {
			offsets = append(offsets, base)
		}
	}
	slices.Sort(offsets)
	return offsets, nil
}

// writeProducerSnapshotLocked writes the state as of the LEO and keeps only the two newest snapshots. The
// caller holds mu.
func (l *Log) writeProducerSnapshotLocked() error {
	leo := l.LogEndOffset()
	var buf bytes.Buffer
	buf.WriteString(producerSnapshotHeader + "\n")
	ids := make([]int64, 0, len(l.producers))
	for id := range l.producers {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		e := l.producers[id]
		fmt.Fprintf(&buf, "p %d %d %d %d %d\n", id, e.Epoch, e.CoordinatorEpoch, e.CurrentTxnFirstOffset, e.LastTimestamp)
		for _, b := range e.Batches {
			fmt.Fprintf(&buf, "b %d %d %d %d %d\n", b.FirstSeq, b.LastSeq, b.FirstOffset, b.LastOffset, b.MaxTimestamp)
		}
	}
	if err := writeFileAtomic(snapshotPath(l.dir, leo), buf.Bytes()); err != nil {
		return err
	}
	offsets, err := listSnapshots(l.dir)
	if err != nil {
		return err
	}
	for i, off := range offsets {
		if i < len(offsets)-2 {
			if err := os.Remove(snapshotPath(l.dir, off)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
		}
	}
	return nil
}

// ReadProducerSnapshot reads a producer snapshot file, for tools (dump-log).
func ReadProducerSnapshot(path string) (map[int64]ProducerEntry, error) {
	s, err := readProducerSnapshot(path)
	if err != nil {
		return nil, err
	}
	out := make(map[int64]ProducerEntry, len(s))
	for id, e := range s {
		out[id] = *e
	}
	return out, nil
}

func readProducerSnapshot(path string) (producerStates, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	if !sc.Scan() || sc.Text() != producerSnapshotHeader {
		return nil, fmt.Errorf("%s: not a version 2 producer snapshot", path)
	}
	s := producerStates{}
	var cur *ProducerEntry
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		bad := fmt.Errorf("%s: bad line %q", path, sc.Text())
		if len(f) != 6 || (f[0] != "p" && f[0] != "b") || (f[0] == "b" && cur == nil) {
			return nil, bad
		}
		var n [5]int64
		for i, x := range f[1:] {
			if n[i], err = strconv.ParseInt(x, 10, 64); err != nil {
				return nil, bad
			}
		}
		if f[0] == "p" {
			cur = &ProducerEntry{Epoch: int16(n[1]), CoordinatorEpoch: int32(n[2]), CurrentTxnFirstOffset: n[3], LastTimestamp: n[4]}
			s[n[0]] = cur
			continue
		}
		cur.Batches = append(cur.Batches, ProducerBatch{FirstSeq: int32(n[0]), LastSeq: int32(n[1]), FirstOffset: n[2], LastOffset: n[3], MaxTimestamp: n[4]})
	}
	return s, sc.Err()
}

// rebuildProducerStateLocked reloads the producer state and the transactions for the current log: from the
// newest readable snapshot at or below from (snapshots above the LEO describe data that is gone and are
// deleted), then by replaying the batches after it. Aborted transactions whose marker lies in one of the
// segments of reindex (by base offset) are written to its transaction index, which the caller emptied; from
// must be at or below the first of them. The caller holds mu, or is opening the log.
func (l *Log) rebuildProducerStateLocked(from int64, reindex map[int64]bool) error {
	leo, start := l.LogEndOffset(), l.LogStartOffset()
	offsets, err := listSnapshots(l.dir)
	if err != nil {
		return err
	}
	state, replayFrom := producerStates{}, start
	for i := len(offsets) - 1; i >= 0; i-- {
		off := offsets[i]
		if off > leo {
			if err := os.Remove(snapshotPath(l.dir, off)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
			continue
		}
		if off > from {
			continue
		}
		s, err := readProducerSnapshot(snapshotPath(l.dir, off))
		if err != nil {
			l.logger.Warn("Ignoring unreadable producer snapshot", zap.Int64("offset", off), zap.Error(err))
			continue
		}
		state, replayFrom = s, max(off, start)
		break
	}
	txns := newTxnTracker()
	for id, e := range state {
		if e.CurrentTxnFirstOffset >= 0 {
			txns.ongoing[e.CurrentTxnFirstOffset] = id
		}
	}
	for replayFrom < leo {
		data, err := l.Read(replayFrom, 8<<20, leo, true)
		if err != nil {
			return err
		}
		if len(data) == 0 {
			break
		}
		for b, err := range wire.Batches(data) {
			if err != nil {
				return fmt.Errorf("rebuild producer state at %d: %w", replayFrom, err)
			}
			if b.LastOffset() >= replayFrom {
				if err := l.replayBatch(state, txns, b, reindex); err != nil {
					return fmt.Errorf("rebuild producer state at %d: %w", b.BaseOffset, err)
				}
				// The leader-epoch file is not fsynced at each change: the batches restore
				// what a crash took (Kafka's recoverSegment does the same).
				if err := l.assignEpochLocked(b.PartitionLeaderEpoch, b.BaseOffset); err != nil {
					return err
				}
			}
			replayFrom = b.LastOffset() + 1
		}
	}
	l.producers = state
	l.txnMu.Lock()
	l.txns = txns
	l.txns.onHighWatermark(l.HighWatermark())
	l.txnMu.Unlock()
	return nil
}

// replayBatch takes one batch read back from the log into the state, as a follower's append would.
func (l *Log) replayBatch(state producerStates, txns *txnTracker, b wire.Batch, reindex map[int64]bool) error {
	sp, err := newBatchSpan(b)
	if err != nil {
		return err
	}
	pa, _, _, err := state.prepareAppend([]batchSpan{sp}, originReplication)
	if err != nil {
		return err
	}
	maps.Copy(state, pa.updated)
	for _, ev := range pa.events {
		entry := txns.apply(ev)
		if entry == nil {
			continue
		}
		l.segMu.RLock()
		seg := l.segments[l.floorSegment(ev.last)]
		l.segMu.RUnlock()
		if reindex[seg.baseOffset] {
			if err := seg.txnIndex.append(*entry); err != nil {
				return err
			}
		}
	}
	return nil
}

// clearProducerStateLocked forgets every producer, transaction and snapshot (the log was replaced
// wholesale).
func (l *Log) clearProducerStateLocked() error {
	l.producers = producerStates{}
	l.txnMu.Lock()
	l.txns = newTxnTracker()
	l.txnMu.Unlock()
	offsets, err := listSnapshots(l.dir)
	if err != nil {
		return err
	}
	for _, off := range offsets {
		if err := os.Remove(snapshotPath(l.dir, off)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}
