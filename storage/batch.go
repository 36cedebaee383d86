package storage

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/zkafka/zkafka/wire"
)

// checkFraming verifies what a stored batch must satisfy whatever its origin beyond its framing (a known
// magic and a sound length, which wire.ReadBatch checks): a matching CRC and a compression codec its
// format has.
func checkFraming(b wire.Batch) error {
	if err := b.VerifyCRC(); err != nil {
		return corruptf("%v", err)
	}
	if c := b.Attributes.Codec(); !c.Known() || c == wire.CodecZstd && b.Magic < wire.MagicV2 {
		return corruptf("batch has unknown compression codec %d", c)
	}
	return nil
}

// appendOrigin says who wrote an append; Kafka checks client batches more strictly than a leader's.
type appendOrigin int

const (
	originClient appendOrigin = iota
	originCoordinator
	originReplication
)

// batchSpan locates one validated batch inside an append, with the marker of a control batch (none when
// the cleaner emptied it).
type batchSpan struct {
	pos       int
	hdr       wire.BatchHeader
	marker    wire.EndTxnMarker
	hasMarker bool
}

// validateBatches checks every batch in records and returns their headers. It never modifies records, so
// a failed append leaves the caller's bytes and the log untouched. A compacted log's client records must
// have keys.
func validateBatches(records []byte, maxMessageBytes int32, compacted bool, origin appendOrigin) ([]batchSpan, error) {
	var spans []batchSpan
	for b, err := range wire.Batches(records) {
		if err != nil {
			return nil, framingError(err)
		}
		if b.Size() > int64(maxMessageBytes) {
			return nil, fmt.Errorf("batch at position %d is %d bytes, above max.message.bytes %d: %w",
				b.Pos, b.Size(), maxMessageBytes, kerr.MessageTooLarge)
		}
		if origin != originReplication && b.Magic != wire.MagicV2 {
			// The broker up-converts an old produce's message set before it gets here.
			return nil, fmt.Errorf("batch at position %d has magic %d; appends take v2 batches: %w", b.Pos, b.Magic, kerr.UnsupportedForMessageFormat)
		}
		if err := checkFraming(b); err != nil {
			return nil, fmt.Errorf("batch at position %d: %w", b.Pos, err)
		}
		if origin == originClient {
			if err := checkClientBatch(b, compacted); err != nil {
				return nil, fmt.Errorf("batch at position %d: %w", b.Pos, err)
			}
		} else if b.LastOffsetDelta < 0 {
			return nil, corruptf("batch at position %d has negative lastOffsetDelta %d", b.Pos, b.LastOffsetDelta)
		}
		sp, err := newBatchSpan(b)
		if err != nil {
			return nil, invalidRecordf("control batch at position %d: %v", b.Pos, err)
		}
		spans = append(spans, sp)
	}
	return spans, nil
}

// newBatchSpan is a batch's span, with the marker parsed when it is a producer's control batch.
func newBatchSpan(b wire.Batch) (batchSpan, error) {
	sp := batchSpan{pos: b.Pos, hdr: b.BatchHeader}
	if b.Attributes.Control() && b.ProducerID != noProducerID {
		m, ok, err := b.EndTxnMarker()
		if err != nil {
			return batchSpan{}, err
		}
		sp.marker, sp.hasMarker = m, ok
	}
	return sp, nil
}

// framingError is how an append reports bytes that do not frame batches: CORRUPT_MESSAGE.
func framingError(err error) error {
	return corruptf("%v", err)
}

// checkClientBatch applies the rules Kafka's LogValidator enforces on batches that come from producers.
// Kafka 2.8 reports all of them as INVALID_RECORD (InvalidRecordException).
func checkClientBatch(b wire.Batch, compacted bool) error {
	h := b.BatchHeader
	if h.LastOffsetDelta < 0 {
		return invalidRecordf("batch has an invalid offset range: lastOffsetDelta %d", h.LastOffsetDelta)
	}
	if h.RecordCount <= 0 {
		return invalidRecordf("batch reports %d records", h.RecordCount)
	}
	if int64(h.LastOffsetDelta)+1 != int64(h.RecordCount) {
		return invalidRecordf("batch has %d records but lastOffsetDelta %d", h.RecordCount, h.LastOffsetDelta)
	}
	if h.Attributes.Control() {
		return invalidRecordf("clients may not write control batches")
	}
	if h.ProducerID >= 0 && h.BaseSequence < 0 {
		return invalidRecordf("batch from producer %d has sequence %d", h.ProducerID, h.BaseSequence)
	}
	if h.Attributes.Codec() == wire.CodecNone || compacted {
		// Uncompressed records are cheap to walk, and Kafka rejects a batch whose records do not parse.
		// Compressed batches are stored as sent: checking them would mean decompressing every produce,
		// which only a compacted topic's key check (LogValidator.validateKey) needs.
		for r, err := range b.Records() {
			if err != nil {
				return invalidRecordf("%v", err)
			}
			if compacted && r.Key == nil {
				return invalidRecordf("Compacted topic cannot accept message without key")
			}
		}
	}
	return nil
}
