package storage

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"go.uber.org/zap"
)

// Idempotent producers (KIP-98), Kafka's ProducerStateManager: for every producer id that wrote to the
// log, its epoch and the sequence numbers and offsets of its last five batches. The leader checks each
// producer batch against it before the append: a batch already written (same epoch, same sequence range)
// is not written again and the append reports the original offsets; an older epoch is
// INVALID_PRODUCER_EPOCH; a sequence that does not follow the last one is OUT_OF_ORDER_SEQUENCE_NUMBER.
// Followers update the same state from the batches they replicate, so it moves with leadership.
//
// The state is rebuilt from the log on open, starting from the newest snapshot at or below the log end
// offset. Snapshots are written when a segment rolls and when the log closes, as `<offset>.snapshot`
// (20-digit offset, as Kafka names them) in the partition directory. Their format is this broker's own,
// simpler than Kafka's binary one: a "zkafka-producer-snapshot 1" line, then one line per remembered batch,
// "<producerId> <epoch> <firstSeq> <lastSeq> <firstOffset> <lastOffset> <maxTimestamp>", oldest batch of
// each producer first.

// maxProducerBatches is how many batches per producer are remembered for duplicate detection (Kafka's
// ProducerStateEntry.NumBatchesToRetain, matching max.in.flight.requests.per.connection <= 5).
const maxProducerBatches = 5

const (
	producerSnapshotSuffix = ".snapshot"
	producerSnapshotHeader = "zkafka-producer-snapshot 1"
	noProducerID           = -1
	noProducerEpoch        = -1
	noSequence             = -1
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
}

func (e *ProducerEntry) lastSeq() int32 {
	if len(e.Batches) == 0 {
		return noSequence
	}
	return e.Batches[len(e.Batches)-1].LastSeq
}

func (e *ProducerEntry) add(epoch int16, b ProducerBatch) {
	if epoch != e.Epoch {
		e.Epoch, e.Batches = epoch, nil
	}
	e.Batches = append(e.Batches, b)
	if n := len(e.Batches); n > maxProducerBatches {
		e.Batches = slices.Delete(e.Batches, 0, n-maxProducerBatches)
	}
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

// batchLastSeq is a batch's last sequence number; sequences wrap at MaxInt32 to 0.
func batchLastSeq(h batchHeader) int32 {
	if h.baseSequence < 0 {
		return noSequence
	}
	if h.baseSequence > math.MaxInt32-h.lastOffsetDelta {
		return h.baseSequence - (math.MaxInt32 - h.lastOffsetDelta) - 1
	}
	return h.baseSequence + h.lastOffsetDelta
}

func inSequence(lastSeq, nextSeq int32) bool {
	return nextSeq == lastSeq+1 || nextSeq == 0 && lastSeq == math.MaxInt32
}

// producerStates is a partition's producer state; the Log guards it with its writer lock.
type producerStates map[int64]*ProducerEntry

func (s producerStates) update(h batchHeader) {
	if h.producerID == noProducerID {
		return
	}
	e, ok := s[h.producerID]
	if !ok {
		e = &ProducerEntry{Epoch: h.producerEpoch}
		s[h.producerID] = e
	}
	e.add(h.producerEpoch, ProducerBatch{
		FirstSeq: h.baseSequence, LastSeq: batchLastSeq(h),
		FirstOffset: h.baseOffset, LastOffset: h.lastOffset(), MaxTimestamp: h.maxTimestamp,
	})
}

// checkProducerBatches validates a client append's producer batches against the state, in order, as
// Kafka's ProducerAppendInfo does. It returns the original batch when the first producer batch is a
// duplicate of one already written.
func (s producerStates) checkProducerBatches(spans []batchSpan) (ProducerBatch, bool, error) {
	pending := map[int64]*ProducerEntry{}
	for i, sp := range spans {
		h := sp.hdr
		if h.producerID == noProducerID {
			continue
		}
		cur, known := pending[h.producerID]
		if !known {
			cur = &ProducerEntry{Epoch: noProducerEpoch}
			if e, ok := s[h.producerID]; ok {
				cur = &ProducerEntry{Epoch: e.Epoch, Batches: slices.Clone(e.Batches)}
			}
			pending[h.producerID] = cur
		}
		firstSeq, lastSeq := h.baseSequence, batchLastSeq(h)
		if dup, ok := cur.duplicateOf(h.producerEpoch, firstSeq, lastSeq); ok {
			if i == 0 {
				return dup, true, nil
			}
			return ProducerBatch{}, false, fmt.Errorf("producer %d: batch with sequences %d-%d duplicates one already written: %w",
				h.producerID, firstSeq, lastSeq, kerr.DuplicateSequenceNumber)
		}
		switch {
		case h.producerEpoch < cur.Epoch:
			return ProducerBatch{}, false, fmt.Errorf("producer %d has epoch %d, below the last seen %d: %w",
				h.producerID, h.producerEpoch, cur.Epoch, kerr.InvalidProducerEpoch)
		case h.producerEpoch != cur.Epoch:
			// A new epoch starts at sequence 0, unless nothing is known of the producer.
			if firstSeq != 0 && cur.Epoch != noProducerEpoch {
				return ProducerBatch{}, false, fmt.Errorf("producer %d: new epoch %d starts at sequence %d, not 0: %w",
					h.producerID, h.producerEpoch, firstSeq, kerr.OutOfOrderSequenceNumber)
			}
		case len(cur.Batches) > 0 && !inSequence(cur.lastSeq(), firstSeq):
			return ProducerBatch{}, false, fmt.Errorf("producer %d epoch %d: sequence %d does not follow %d: %w",
				h.producerID, h.producerEpoch, firstSeq, cur.lastSeq(), kerr.OutOfOrderSequenceNumber)
		}
		cur.add(h.producerEpoch, ProducerBatch{FirstSeq: firstSeq, LastSeq: lastSeq})
	}
	return ProducerBatch{}, false, nil
}

// ProducerStates returns a copy of the partition's producer state by producer id.
func (l *Log) ProducerStates() map[int64]ProducerEntry {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[int64]ProducerEntry, len(l.producers))
	for id, e := range l.producers {
		out[id] = ProducerEntry{Epoch: e.Epoch, Batches: slices.Clone(e.Batches)}
	}
	return out
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
		for _, b := range e.Batches {
			fmt.Fprintf(&buf, "%d %d %d %d %d %d %d\n", id, e.Epoch, b.FirstSeq, b.LastSeq, b.FirstOffset, b.LastOffset, b.MaxTimestamp)
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

func readProducerSnapshot(path string) (producerStates, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	if !sc.Scan() || sc.Text() != producerSnapshotHeader {
		return nil, fmt.Errorf("%s: not a producer snapshot", path)
	}
	s := producerStates{}
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 7 {
			return nil, fmt.Errorf("%s: bad line %q", path, sc.Text())
		}
		var n [7]int64
		for i, x := range f {
			if n[i], err = strconv.ParseInt(x, 10, 64); err != nil {
				return nil, fmt.Errorf("%s: bad line %q", path, sc.Text())
			}
		}
		e, ok := s[n[0]]
		if !ok {
			e = &ProducerEntry{Epoch: int16(n[1])}
			s[n[0]] = e
		}
		e.add(int16(n[1]), ProducerBatch{FirstSeq: int32(n[2]), LastSeq: int32(n[3]), FirstOffset: n[4], LastOffset: n[5], MaxTimestamp: n[6]})
	}
	return s, sc.Err()
}

// rebuildProducerStateLocked reloads the producer state for the current log: from the newest readable
// snapshot at or below the LEO (snapshots above it describe data that is gone and are deleted), then by
// replaying the batches after it. The caller holds mu, or is opening the log.
func (l *Log) rebuildProducerStateLocked() error {
	leo, start := l.LogEndOffset(), l.LogStartOffset()
	offsets, err := listSnapshots(l.dir)
	if err != nil {
		return err
	}
	state, from := producerStates{}, start
	for i := len(offsets) - 1; i >= 0; i-- {
		off := offsets[i]
		if off > leo {
			if err := os.Remove(snapshotPath(l.dir, off)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
			continue
		}
		s, err := readProducerSnapshot(snapshotPath(l.dir, off))
		if err != nil {
			l.logger.Warn("Ignoring unreadable producer snapshot", zap.Int64("offset", off), zap.Error(err))
			continue
		}
		state, from = s, max(off, start)
		break
	}
	for from < leo {
		data, err := l.Read(from, 8<<20, leo, true)
		if err != nil {
			return err
		}
		if len(data) == 0 {
			break
		}
		for len(data) >= batchHeaderSize {
			h := parseBatchHeader(data)
			if h.lastOffset() >= from {
				state.update(h)
			}
			from = h.lastOffset() + 1
			data = data[min(int(h.size()), len(data)):]
		}
	}
	l.producers = state
	return nil
}

// clearProducerStateLocked forgets every producer and snapshot (the log was replaced wholesale).
func (l *Log) clearProducerStateLocked() error {
	l.producers = producerStates{}
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
