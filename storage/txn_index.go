package storage

// Transactions on the partition side: the transaction index of each segment (Kafka's TransactionIndex,
// `<base>.txnindex`) and the open and unreplicated transactions that hold the last stable offset back.
//
// The index lists the aborted transactions whose ABORT marker is in the segment, each as Kafka's AbortedTxn
// entry of 34 bytes, big endian:
//
//	int16 version (0) | int64 producer id | int64 first offset | int64 last offset (the marker's) |
//	int64 last stable offset when the marker was written
//
// The file exists only once a segment has an entry. A read_committed fetch collects the entries that
// overlap what it returns, starting with the segment of its fetch offset and moving on while an entry's
// last stable offset is below the end of the fetch; the consumer skips those producers' records.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"sync/atomic"
)

const (
	txnIndexSuffix    = ".txnindex"
	abortedTxnSize    = 34
	abortedTxnVersion = 0
)

// AbortedTxn is one entry of a transaction index.
type AbortedTxn struct {
	ProducerID       int64
	FirstOffset      int64
	LastOffset       int64 // the ABORT marker's offset
	LastStableOffset int64
}

func (a AbortedTxn) appendTo(dst []byte) []byte {
	be := binary.BigEndian
	dst = be.AppendUint16(dst, abortedTxnVersion)
	dst = be.AppendUint64(dst, uint64(a.ProducerID))
	dst = be.AppendUint64(dst, uint64(a.FirstOffset))
	dst = be.AppendUint64(dst, uint64(a.LastOffset))
	return be.AppendUint64(dst, uint64(a.LastStableOffset))
}

// ParseTransactionIndex reads the entries of a `.txnindex` file's contents, as Kafka's
// TransactionIndex iterator does: bytes after the last whole entry are ignored, a version above 0 is an
// error.
func ParseTransactionIndex(data []byte) ([]AbortedTxn, error) {
	be := binary.BigEndian
	var out []AbortedTxn
	for pos := 0; len(data)-pos >= abortedTxnSize; pos += abortedTxnSize {
		b := data[pos:]
		if v := int16(be.Uint16(b)); v > abortedTxnVersion {
			return out, fmt.Errorf("aborted transaction version %d at position %d, the current version is %d", v, pos, abortedTxnVersion)
		}
		out = append(out, AbortedTxn{
			ProducerID: int64(be.Uint64(b[2:])), FirstOffset: int64(be.Uint64(b[10:])),
			LastOffset: int64(be.Uint64(b[18:])), LastStableOffset: int64(be.Uint64(b[26:])),
		})
	}
	return out, nil
}

// transactionIndex is one segment's index, kept in memory and in its file. The Log's writer lock
// serializes changes; readers hold the Log's segment read lock, and changes take it exclusively.
type transactionIndex struct {
	path string
	// f is nil until the file exists, and again once closed; atomic, as a background flush of a rolled
	// segment reads it without the Log's locks while cleaning or retention may close the segment.
	f       atomic.Pointer[os.File]
	entries []AbortedTxn
}

func txnIndexPath(dir string, baseOffset int64) string {
	return segmentPath(dir, baseOffset, txnIndexSuffix)
}

// openTransactionIndex loads the index at path if the file exists.
func openTransactionIndex(path string) (*transactionIndex, error) {
	x := &transactionIndex{path: path}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		return x, nil
	}
	if err != nil {
		return nil, err
	}
	data, err := io.ReadAll(f)
	if err == nil {
		x.entries, err = ParseTransactionIndex(data)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("transaction index %s: %w", path, err)
	}
	// A torn entry at the end is cut so the next append lines up.
	if whole := int64(len(x.entries)) * abortedTxnSize; whole != int64(len(data)) {
		if err := f.Truncate(whole); err != nil {
			f.Close()
			return nil, err
		}
	}
	x.f.Store(f)
	return x, nil
}

// append adds an entry; last offsets must increase, as in Kafka.
func (x *transactionIndex) append(a AbortedTxn) error {
	if n := len(x.entries); n > 0 && x.entries[n-1].LastOffset >= a.LastOffset {
		return fmt.Errorf("transaction index %s: last offset %d does not follow %d", x.path, a.LastOffset, x.entries[n-1].LastOffset)
	}
	f := x.f.Load()
	if f == nil {
		var err error
		if f, err = os.OpenFile(x.path, os.O_RDWR|os.O_CREATE, 0o644); err != nil {
			return err
		}
		x.f.Store(f)
	}
	if _, err := f.WriteAt(a.appendTo(nil), int64(len(x.entries))*abortedTxnSize); err != nil {
		return err
	}
	x.entries = append(x.entries, a)
	return nil
}

// truncateTo drops the entries whose marker is at or above offset.
func (x *transactionIndex) truncateTo(offset int64) error {
	keep := len(x.entries)
	for keep > 0 && x.entries[keep-1].LastOffset >= offset {
		keep--
	}
	return x.truncateEntries(keep)
}

// reset empties the index, for a segment being recovered.
func (x *transactionIndex) reset() error { return x.truncateEntries(0) }

func (x *transactionIndex) truncateEntries(n int) error {
	if n == len(x.entries) {
		return nil
	}
	x.entries = slices.Clip(x.entries[:n])
	f := x.f.Load()
	if f == nil {
		return nil
	}
	return f.Truncate(int64(n) * abortedTxnSize)
}

// collect returns the entries overlapping [from, upTo) and whether the search is complete (an entry's last
// stable offset reaches upTo: no later segment can hold one that overlaps), as Kafka's
// collectAbortedTxns. The entries whose marker is below from are skipped without a look: their last
// offsets increase, and their last stable offsets, at most their marker's offset + 1, are below upTo.
func (x *transactionIndex) collect(from, upTo int64) ([]AbortedTxn, bool) {
	var out []AbortedTxn
	start := sort.Search(len(x.entries), func(i int) bool { return x.entries[i].LastOffset >= from })
	for _, a := range x.entries[start:] {
		if a.LastOffset >= from && a.FirstOffset < upTo {
			out = append(out, a)
		}
		if a.LastStableOffset >= upTo {
			return out, true
		}
	}
	return out, false
}

func (x *transactionIndex) flush() error {
	if f := x.f.Load(); f != nil {
		return f.Sync()
	}
	return nil
}

func (x *transactionIndex) close() error {
	if f := x.f.Swap(nil); f != nil {
		return f.Close()
	}
	return nil
}

// txnTracker holds the transactions that keep the last stable offset back (Kafka's ongoingTxns and
// unreplicatedTxns): open ones, and closed ones whose marker is not yet below the high watermark. The
// Log's txnMu guards it.
type txnTracker struct {
	ongoing      map[int64]int64 // first offset → producer id
	unreplicated map[int64]int64 // first offset → marker offset
}

func newTxnTracker() *txnTracker {
	return &txnTracker{ongoing: map[int64]int64{}, unreplicated: map[int64]int64{}}
}

// apply takes one transaction event and returns the index entry of an aborted transaction, with the last
// stable offset as Kafka computes it when the marker is written: the first offset of the earliest other
// producer's open transaction, or the offset after the marker.
func (t *txnTracker) apply(ev txnEvent) *AbortedTxn {
	if ev.started {
		t.ongoing[ev.first] = ev.producer
		return nil
	}
	lso := ev.last + 1
	for first, pid := range t.ongoing {
		if pid != ev.producer && first < lso {
			lso = first
		}
	}
	delete(t.ongoing, ev.first)
	t.unreplicated[ev.first] = ev.last
	if !ev.aborted {
		return nil
	}
	return &AbortedTxn{ProducerID: ev.producer, FirstOffset: ev.first, LastOffset: ev.last, LastStableOffset: lso}
}

// onHighWatermark forgets closed transactions whose marker is below the high watermark.
func (t *txnTracker) onHighWatermark(hw int64) {
	for first, last := range t.unreplicated {
		if last < hw {
			delete(t.unreplicated, first)
		}
	}
}

// firstUnstable is the first offset of the earliest transaction not yet stable.
func (t *txnTracker) firstUnstable() (int64, bool) {
	first, ok := int64(0), false
	for _, m := range []map[int64]int64{t.ongoing, t.unreplicated} {
		for off := range m {
			if !ok || off < first {
				first, ok = off, true
			}
		}
	}
	return first, ok
}

// LastStableOffset (LSO) is the offset below which every transaction is decided and its marker
// replicated: the first unstable offset (at least the log start offset) when it is below the high
// watermark, else the high watermark. read_committed consumers read below it.
func (l *Log) LastStableOffset() int64 {
	hw, start := l.HighWatermark(), l.LogStartOffset()
	l.txnMu.Lock()
	first, ok := l.txns.firstUnstable()
	l.txnMu.Unlock()
	if ok && max(first, start) < hw {
		return max(first, start)
	}
	return hw
}

// AbortedTransactions returns the aborted transactions overlapping [from, upTo), for a read_committed
// fetch from offset from whose data ends before upTo (Kafka's collectAbortedTransactions).
func (l *Log) AbortedTransactions(from, upTo int64) []AbortedTxn {
	l.segMu.RLock()
	defer l.segMu.RUnlock()
	var out []AbortedTxn
	for i := l.floorSegment(from); i < len(l.segments); i++ {
		found, complete := l.segments[i].txnIndex.collect(from, upTo)
		out = append(out, found...)
		if complete {
			break
		}
	}
	return out
}

// TransactionIndexes returns each segment's aborted transactions by base offset (tests and tools).
func (l *Log) TransactionIndexes() map[int64][]AbortedTxn {
	l.segMu.RLock()
	defer l.segMu.RUnlock()
	out := map[int64][]AbortedTxn{}
	for _, s := range l.segments {
		if len(s.txnIndex.entries) > 0 {
			out[s.baseOffset] = slices.Clone(s.txnIndex.entries)
		}
	}
	return out
}
