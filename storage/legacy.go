package storage

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/zkafka/zkafka/wire"
)

// A log whose message.format.version is below 0.11 (LogConfig.MessageFormat 0 or 1) stores the message
// format of that version, as Kafka 2.8 does: the v2 batches producers and the group coordinator send are
// converted on the leader's append (convertToLegacy), followers store the leader's bytes, and every scan
// reads the stored messages through wire's shallow legacy headers. Such a log keeps no leader-epoch
// cache (its messages carry no epoch), so a follower truncates to its high watermark instead.

// convertToLegacy rewrites a leader append's validated v2 batches in the older format magic with offsets
// from next, as Kafka's LogValidator converts them (compression.type producer): a compressed batch becomes
// one wrapper message in its codec, an uncompressed one a message per record; v1 keeps each record's
// timestamp, v0 has none. It returns the messages with their spans, whose headers are exact (a wrapper's
// base offset is its first record's, where wire's shallow header has its last). What the older formats
// cannot hold is refused: transactional and idempotent batches and control batches with
// UNSUPPORTED_FOR_MESSAGE_FORMAT as Kafka 2.8; record headers with UNSUPPORTED_FOR_MESSAGE_FORMAT and
// ZStandard with UNSUPPORTED_COMPRESSION_TYPE, where Kafka 2.8 fails with an unexpected error
// (UNKNOWN_SERVER_ERROR) in its record builder.
func convertToLegacy(records []byte, spans []batchSpan, magic int8, next int64, maxMessageBytes int32) ([]byte, []batchSpan, error) {
	var out []byte
	var firsts []int64 // the first offset of each message written, in order
	for _, sp := range spans {
		b := wire.Batch{BatchHeader: sp.hdr, Raw: records[sp.pos : sp.pos+int(sp.hdr.Size())]}
		if err := checkLegacyConvertible(b.BatchHeader, magic); err != nil {
			return nil, nil, fmt.Errorf("batch at position %d: %w", sp.pos, err)
		}
		var msgs []wire.LegacyMessage
		for r, err := range b.Records() {
			if err != nil {
				return nil, nil, invalidRecordf("batch at position %d: %v", sp.pos, err)
			}
			if len(r.Headers) > 0 {
				return nil, nil, fmt.Errorf("batch at position %d: magic v%d does not support record headers: %w", sp.pos, magic, kerr.UnsupportedForMessageFormat)
			}
			ts := b.RecordTimestamp(r)
			if magic == wire.MagicV0 {
				ts = -1
			}
			msgs = append(msgs, wire.LegacyMessage{Offset: next, Timestamp: ts, Key: r.Key, Value: r.Value})
			next++
		}
		codec := b.Attributes.Codec()
		out = wire.AppendLegacy(out, magic, codec, b.Attributes.LogAppendTime(), msgs)
		for i, m := range msgs {
			if codec == wire.CodecNone || i == 0 {
				firsts = append(firsts, m.Offset)
			}
		}
	}
	converted, err := validateBatches(out, maxMessageBytes, false, originReplication)
	if err != nil {
		return nil, nil, err
	}
	if len(converted) != len(firsts) {
		return nil, nil, fmt.Errorf("conversion to magic %d wrote %d messages for %d: %w", magic, len(converted), len(firsts), kerr.UnknownServerError)
	}
	for i := range converted {
		h := &converted[i].hdr
		h.LastOffsetDelta = int32(h.BaseOffset - firsts[i])
		h.BaseOffset = firsts[i]
	}
	return out, converted, nil
}

// checkLegacyConvertible refuses a batch the older format magic cannot hold.
func checkLegacyConvertible(h wire.BatchHeader, magic int8) error {
	switch {
	case h.Attributes.Control():
		return fmt.Errorf("control records cannot be used with magic version %d: %w", magic, kerr.UnsupportedForMessageFormat)
	case h.Attributes.Transactional():
		return fmt.Errorf("transactional records cannot be used with magic version %d: %w", magic, kerr.UnsupportedForMessageFormat)
	case h.ProducerID >= 0:
		return fmt.Errorf("idempotent records cannot be used with magic version %d: %w", magic, kerr.UnsupportedForMessageFormat)
	case h.Attributes.Codec() == wire.CodecZstd:
		return fmt.Errorf("ZStandard compression is not supported for magic %d: %w", magic, kerr.UnsupportedCompressionType)
	}
	return nil
}
