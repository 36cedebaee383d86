package consumer

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/zkafka/zkafka/wire"
)

// Record is one consumed record.
type Record struct {
	Topic       string
	Partition   int32
	Offset      int64
	LeaderEpoch int32
	Timestamp   time.Time
	Key, Value  []byte
	Headers     []Header
}

// Header is a record header.
type Header = wire.Header

// errCorruptBatch means fetched bytes are not a record batch we can read.
var errCorruptBatch = errors.New("corrupt record batch")

// abortedTxn is an aborted transaction a read_committed Fetch names: its
// producer and first offset.
type abortedTxn struct {
	producerID, firstOffset int64
}

// decodeBatches returns the records of the complete batches in raw
// (a Fetch response's partition data) with offsets at or above from, and
// the offset after the last complete batch (from when there is none): the
// position to fetch next once every record is delivered, past trailing
// control batches and skipped transactions. A topic whose
// message.format.version is below 0.11 answers in the older formats, v0
// and v1 messages, which read as batches of their own. A trailing partial batch, which
// brokers send when a batch does not fit in the fetch size, is ignored.
// Control batches (transaction markers) are skipped. With aborted (a
// read_committed fetch, nil otherwise) the batches of aborted transactions
// are skipped as Kafka's consumer does: a producer's transaction counts as
// aborted from its first offset until its ABORT marker.
func decodeBatches(topic string, partition int32, raw []byte, from int64, aborted []abortedTxn) ([]Record, int64, error) {
	var out []Record
	next := from
	slices.SortFunc(aborted, func(a, b abortedTxn) int { return cmp.Compare(a.firstOffset, b.firstOffset) })
	abortedProducers := map[int64]bool{}
	for b, err := range wire.Batches(raw) {
		switch {
		case errors.Is(err, wire.ErrTruncatedBatch):
			return out, next, nil
		case err != nil:
			return out, next, fmt.Errorf("%w: %v", errCorruptBatch, err)
		}
		next = max(next, b.LastOffset()+1)
		if aborted != nil && b.ProducerID >= 0 {
			for len(aborted) > 0 && aborted[0].firstOffset <= b.LastOffset() {
				abortedProducers[aborted[0].producerID] = true
				aborted = aborted[1:]
			}
		}
		if b.Attributes.Control() {
			if m, ok, err := b.EndTxnMarker(); err == nil && ok && !m.Commit {
				delete(abortedProducers, b.ProducerID)
			}
			continue
		}
		if b.Attributes.Transactional() && abortedProducers[b.ProducerID] {
			continue
		}
		for r, err := range b.Records() {
			if err != nil {
				return out, next, fmt.Errorf("%w: %v", errCorruptBatch, err)
			}
			offset := b.RecordOffset(r)
			if offset < from {
				continue // a batch starts before the position asked for
			}
			out = append(out, Record{
				Topic: topic, Partition: partition, Offset: offset, LeaderEpoch: b.PartitionLeaderEpoch,
				Timestamp: time.UnixMilli(b.RecordTimestamp(r)), Key: r.Key, Value: r.Value, Headers: r.Headers,
			})
		}
	}
	return out, next, nil
}
