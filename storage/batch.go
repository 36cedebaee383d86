package storage

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Layout of a v2 record batch header (Kafka's DefaultRecordBatch). Every field is big endian.
const (
	offBaseOffset      = 0  // int64, assigned by the leader
	offBatchLength     = 8  // int32, bytes after this field
	offLeaderEpoch     = 12 // int32, assigned by the leader
	offMagic           = 16 // int8, 2
	offCRC             = 17 // uint32, CRC-32C of attributes..end
	offAttributes      = 21 // int16
	offLastOffsetDelta = 23 // int32
	offBaseTimestamp   = 27 // int64
	offMaxTimestamp    = 35 // int64
	offProducerID      = 43 // int64
	offProducerEpoch   = 51 // int16
	offBaseSequence    = 53 // int32
	offRecordCount     = 57 // int32

	batchHeaderSize = 61
	// logOverhead is the base offset and length that precede every batch's counted bytes.
	logOverhead = offBatchLength + 4
	// minBatchLength is the smallest valid batchLength: a header with no records.
	minBatchLength = batchHeaderSize - logOverhead

	magicV2 = 2

	attrCompressionMask = 0x07
	attrLogAppendTime   = 0x08
	attrControl         = 0x20
	maxCompressionCodec = 4 // zstd
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// batchHeader is the decoded fixed-size header of a v2 record batch.
type batchHeader struct {
	baseOffset           int64
	batchLength          int32
	partitionLeaderEpoch int32
	magic                int8
	crc                  uint32
	attributes           int16
	lastOffsetDelta      int32
	baseTimestamp        int64
	maxTimestamp         int64
	producerID           int64
	producerEpoch        int16
	baseSequence         int32
	recordCount          int32
}

// parseBatchHeader decodes b[:batchHeaderSize]; the caller ensures b is that long.
func parseBatchHeader(b []byte) batchHeader {
	be := binary.BigEndian
	return batchHeader{
		baseOffset:           int64(be.Uint64(b[offBaseOffset:])),
		batchLength:          int32(be.Uint32(b[offBatchLength:])),
		partitionLeaderEpoch: int32(be.Uint32(b[offLeaderEpoch:])),
		magic:                int8(b[offMagic]),
		crc:                  be.Uint32(b[offCRC:]),
		attributes:           int16(be.Uint16(b[offAttributes:])),
		lastOffsetDelta:      int32(be.Uint32(b[offLastOffsetDelta:])),
		baseTimestamp:        int64(be.Uint64(b[offBaseTimestamp:])),
		maxTimestamp:         int64(be.Uint64(b[offMaxTimestamp:])),
		producerID:           int64(be.Uint64(b[offProducerID:])),
		producerEpoch:        int16(be.Uint16(b[offProducerEpoch:])),
		baseSequence:         int32(be.Uint32(b[offBaseSequence:])),
		recordCount:          int32(be.Uint32(b[offRecordCount:])),
	}
}

// size is the batch's total size on disk.
func (h batchHeader) size() int64 { return logOverhead + int64(h.batchLength) }

func (h batchHeader) lastOffset() int64 { return h.baseOffset + int64(h.lastOffsetDelta) }

func (h batchHeader) compression() int { return int(h.attributes & attrCompressionMask) }

// checkFraming verifies what a stored batch must satisfy whatever its origin: magic 2, a matching CRC
// and a known compression codec. b is the whole batch.
func checkFraming(b []byte, h batchHeader) error {
	if h.magic != magicV2 {
		return fmt.Errorf("batch has magic %d, only v2 batches are supported: %w", h.magic, kerr.UnsupportedForMessageFormat)
	}
	if got := crc32.Checksum(b[offAttributes:], castagnoli); got != h.crc {
		return corruptf("batch CRC is %#08x, computed %#08x", h.crc, got)
	}
	if h.compression() > maxCompressionCodec {
		return corruptf("batch has unknown compression codec %d", h.compression())
	}
	return nil
}

// appendOrigin says who wrote an append; Kafka checks client batches more strictly than a leader's.
type appendOrigin int

const (
	originClient appendOrigin = iota
	originReplication
)

// batchSpan locates one validated batch inside an append.
type batchSpan struct {
	pos int
	hdr batchHeader
}

// validateBatches checks every batch in records and returns their headers. It never modifies records, so
// a failed append leaves the caller's bytes and the log untouched.
func validateBatches(records []byte, maxMessageBytes int32, origin appendOrigin) ([]batchSpan, error) {
	var spans []batchSpan
	for pos := 0; pos < len(records); {
		rest := records[pos:]
		if len(rest) < logOverhead {
			return nil, corruptf("%d trailing bytes at position %d are too short for a batch", len(rest), pos)
		}
		if len(rest) > offMagic && rest[offMagic] != magicV2 {
			// Kafka 2.8 would up-convert v0/v1 message sets; this broker stores v2 only.
			return nil, fmt.Errorf("batch at position %d has magic %d, only v2 batches are supported: %w",
				pos, int8(rest[offMagic]), kerr.UnsupportedForMessageFormat)
		}
		length := int32(binary.BigEndian.Uint32(rest[offBatchLength:]))
		if length < minBatchLength {
			return nil, corruptf("batch at position %d has length %d, below the minimum %d", pos, length, minBatchLength)
		}
		size := logOverhead + int64(length)
		if size > int64(len(rest)) {
			return nil, corruptf("batch at position %d claims %d bytes but only %d remain", pos, size, len(rest))
		}
		b := rest[:size]
		h := parseBatchHeader(b)
		if size > int64(maxMessageBytes) {
			return nil, fmt.Errorf("batch at position %d is %d bytes, above max.message.bytes %d: %w",
				pos, size, maxMessageBytes, kerr.MessageTooLarge)
		}
		if err := checkFraming(b, h); err != nil {
			return nil, fmt.Errorf("batch at position %d: %w", pos, err)
		}
		if origin == originClient {
			if err := checkClientBatch(b, h); err != nil {
				return nil, fmt.Errorf("batch at position %d: %w", pos, err)
			}
		} else if h.lastOffsetDelta < 0 {
			return nil, corruptf("batch at position %d has negative lastOffsetDelta %d", pos, h.lastOffsetDelta)
		}
		spans = append(spans, batchSpan{pos: pos, hdr: h})
		pos += int(size)
	}
	return spans, nil
}

// checkClientBatch applies the rules Kafka's LogValidator enforces on batches that come from producers.
// Kafka 2.8 reports all of them as INVALID_RECORD (InvalidRecordException).
func checkClientBatch(b []byte, h batchHeader) error {
	if h.lastOffsetDelta < 0 {
		return invalidRecordf("batch has an invalid offset range: lastOffsetDelta %d", h.lastOffsetDelta)
	}
	if h.recordCount <= 0 {
		return invalidRecordf("batch reports %d records", h.recordCount)
	}
	if int64(h.lastOffsetDelta)+1 != int64(h.recordCount) {
		return invalidRecordf("batch has %d records but lastOffsetDelta %d", h.recordCount, h.lastOffsetDelta)
	}
	if h.attributes&attrControl != 0 {
		return invalidRecordf("clients may not write control batches")
	}
	if h.producerID >= 0 && h.baseSequence < 0 {
		return invalidRecordf("batch from producer %d has sequence %d", h.producerID, h.baseSequence)
	}
	if h.compression() == 0 {
		// Uncompressed records are cheap to walk, and Kafka rejects a batch whose records do not parse.
		// Compressed batches are stored as sent: checking them would mean decompressing every produce.
		if err := walkRecords(b[batchHeaderSize:], h.recordCount, nil); err != nil {
			return invalidRecordf("%v", err)
		}
	}
	return nil
}

// walkRecords parses count v2 records from data, which must hold exactly those records, calling fn (if
// not nil) with each record's timestamp delta and offset delta until fn returns false.
func walkRecords(data []byte, count int32, fn func(timestampDelta int64, offsetDelta int32) bool) error {
	for i := int32(0); i < count; i++ {
		length, n := binary.Varint(data)
		if n <= 0 || length < 0 || length > int64(len(data)-n) {
			return fmt.Errorf("record %d has an invalid length", i)
		}
		body := data[n : n+int(length)]
		data = data[n+int(length):]
		tsDelta, offDelta, err := parseRecordBody(body)
		if err != nil {
			return fmt.Errorf("record %d: %w", i, err)
		}
		if fn != nil && !fn(tsDelta, offDelta) {
			return nil
		}
	}
	if len(data) != 0 {
		return fmt.Errorf("%d bytes follow the batch's %d records", len(data), count)
	}
	return nil
}

// parseRecordBody checks that body is exactly one record (attributes, timestamp delta, offset delta, key,
// value, headers) and returns its deltas.
func parseRecordBody(body []byte) (timestampDelta int64, offsetDelta int32, err error) {
	r := varintReader{b: body, ok: true}
	r.skip(1) // attributes
	timestampDelta = r.varint()
	od := r.varint()
	r.bytes(true) // key
	r.bytes(true) // value
	headers := r.varint()
	if headers < 0 {
		r.fail()
	}
	for h := int64(0); h < headers && r.ok; h++ {
		r.bytes(false) // header key: a string, never null
		r.bytes(true)  // header value
	}
	if !r.ok || od < math.MinInt32 || od > math.MaxInt32 {
		return 0, 0, fmt.Errorf("malformed record")
	}
	if len(r.b) != 0 {
		return 0, 0, fmt.Errorf("%d bytes left over inside the record", len(r.b))
	}
	return timestampDelta, int32(od), nil
}

// varintReader consumes Kafka's zig-zag varints; after the first failure every read is a no-op and ok
// stays false.
type varintReader struct {
	b  []byte
	ok bool
}

func (r *varintReader) fail() { r.ok, r.b = false, nil }

func (r *varintReader) skip(n int) {
	if !r.ok || len(r.b) < n {
		r.fail()
		return
	}
	r.b = r.b[n:]
}

func (r *varintReader) varint() int64 {
	if !r.ok {
		return 0
	}
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

// bytes skips a varint-length-prefixed field; -1 (null) is allowed only when nullable.
func (r *varintReader) bytes(nullable bool) {
	n := r.varint()
	switch {
	case !r.ok:
	case n == -1 && nullable:
	case n < 0 || n > int64(len(r.b)):
		r.fail()
	default:
		r.b = r.b[n:]
	}
}
