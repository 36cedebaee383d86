package storage

import (
	"cmp"
	"slices"

	"github.com/zkafka/zkafka/wire"
)

// cleanerTxns follows the transactions of the cleanable section as a pass reads it in offset order
// (Kafka's CleanedTransactionMetadata): which data batches belong to an aborted transaction, which
// markers no longer have a batch of their transaction behind them, and which aborted transactions
// the cleaned segment's transaction index keeps.
type cleanerTxns struct {
	pending   []AbortedTxn          // aborted transactions not reached yet, by first offset
	aborted   map[int64]*cleanerTxn // by producer: its aborted transaction being read
	committed map[int64]bool        // producers whose current (not aborted) transaction had a batch read
	kept      []AbortedTxn          // the aborted transactions whose marker stays, for the segment's index
}

// cleanerTxn is an aborted transaction being read, and whether any of its batches was.
type cleanerTxn struct {
	txn  AbortedTxn
	seen bool
}

func newCleanerTxns(aborted []AbortedTxn) *cleanerTxns {
	pending := slices.SortedStableFunc(slices.Values(aborted), func(a, b AbortedTxn) int { return cmp.Compare(a.FirstOffset, b.FirstOffset) })
	return &cleanerTxns{pending: pending, aborted: map[int64]*cleanerTxn{}, committed: map[int64]bool{}}
}

// reach starts the aborted transactions that begin at or before offset.
func (t *cleanerTxns) reach(offset int64) {
	for len(t.pending) > 0 && t.pending[0].FirstOffset <= offset {
		a := t.pending[0]
		t.pending = t.pending[1:]
		if t.aborted[a.ProducerID] == nil {
			t.aborted[a.ProducerID] = &cleanerTxn{txn: a}
		}
	}
}

// onData reads a data batch and reports whether it belongs to an aborted transaction.
func (t *cleanerTxns) onData(h wire.BatchHeader) bool {
	t.reach(h.LastOffset())
	if !h.Attributes.Transactional() {
		return false
	}
	if a := t.aborted[h.ProducerID]; a != nil {
		a.seen = true
		return true
	}
	t.committed[h.ProducerID] = true
	return false
}

// onControl reads a control batch and reports whether it may go: a marker none of whose transaction's
// batches this pass read, or a control batch an earlier pass emptied. A control record that is not a
// transaction marker stays, as Kafka keeps one of a type it does not know.
func (t *cleanerTxns) onControl(b wire.Batch) bool {
	t.reach(b.LastOffset())
	m, ok, err := b.EndTxnMarker()
	switch {
	case err != nil:
		return false
	case !ok:
		return true
	case m.Commit:
		seen := t.committed[b.ProducerID]
		delete(t.committed, b.ProducerID)
		return !seen
	}
	a := t.aborted[b.ProducerID]
	delete(t.aborted, b.ProducerID)
	if a != nil && a.seen {
		t.kept = append(t.kept, a.txn)
		return false
	}
	return true
}

// lastBatchOf reports whether batch h holds what the log knows of its producer, so the cleaner keeps it
// even empty (Kafka's isBatchLastRecordOfProducer): the producer's last data batch, or, when the
// producer has none of its current epoch, a marker of that epoch, which fences older ones.
func (s producerStates) lastBatchOf(h wire.BatchHeader) bool {
	e, ok := s[h.ProducerID]
	switch {
	case h.ProducerID == noProducerID || !ok:
		return false
	case len(e.Batches) > 0:
		return h.LastOffset() == e.Batches[len(e.Batches)-1].LastOffset
	}
	return h.Attributes.Control() && h.ProducerEpoch == e.Epoch
}
