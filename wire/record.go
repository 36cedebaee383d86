package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"iter"
	"math"
)

// Record is one record of a v2 batch (Kafka's DefaultRecord). Its offset and timestamp are deltas from
// the batch's: see BatchHeader.RecordOffset and RecordTimestamp.
type Record struct {
	Attributes     int8 // unused by Kafka 2.8, kept as read
	TimestampDelta int64
	OffsetDelta    int32
	Key, Value     []byte // nil when null; a nil Value is a tombstone
	Headers        []Header
}

// Header is a record header: a key that is never null and a nullable value.
type Header struct {
	Key   string
	Value []byte
}

// Records iterates the batch's records, decompressing them first. Key, value and header values share
// the batch's bytes when it is uncompressed. Records are checked as Kafka's DefaultRecord reads them:
// each must fill exactly its length, and the batch must hold exactly RecordCount of them; a failure is
// an error that unwraps to ErrCorruptRecords (or ErrUnknownCodec), after which the iteration stops.
// Breaking out early skips the check of what follows.
func (b Batch) Records() iter.Seq2[Record, error] {
	return func(yield func(Record, error) bool) {
		if b.Magic < MagicV2 {
			b.legacyRecords(yield)
			return
		}
		data := b.Raw[BatchHeaderSize:]
		if codec := b.Attributes.Codec(); codec != CodecNone {
			var err error
			if data, err = codec.decompress(data); err != nil {
				yield(Record{}, err)
				return
			}
		}
		if b.RecordCount < 0 {
			yield(Record{}, formatErrorf(ErrCorruptRecords, "batch reports %d records", b.RecordCount))
			return
		}
		for i := range b.RecordCount {
			length, n := binary.Varint(data)
			if n <= 0 || length < 0 || length > int64(len(data)-n) {
				yield(Record{}, formatErrorf(ErrCorruptRecords, "record %d has an invalid length", i))
				return
			}
			r, err := parseRecord(data[n : n+int(length)])
			if err != nil {
				yield(Record{}, formatErrorf(ErrCorruptRecords, "record %d: %v", i, err))
				return
			}
			data = data[n+int(length):]
			if !yield(r, nil) {
				return
			}
		}
		if len(data) != 0 {
			yield(Record{}, formatErrorf(ErrCorruptRecords, "%d bytes follow the batch's %d records", len(data), b.RecordCount))
		}
	}
}

// parseRecord decodes body, which must be exactly one record: attributes, timestamp delta, offset
// delta, key, value and headers.
func parseRecord(body []byte) (Record, error) {
	r := varintReader{b: body, ok: true}
	var rec Record
	rec.Attributes = r.int8()
	rec.TimestampDelta = r.varint()
	offsetDelta := r.varint()
	rec.Key = r.bytes(true)
	rec.Value = r.bytes(true)
	count := r.varint()
	if count < 0 || count > int64(len(r.b)) {
		r.fail() // every header takes at least two bytes, so a larger count cannot be true
	}
	if r.ok && count > 0 {
		rec.Headers = make([]Header, count)
		for i := range rec.Headers {
			rec.Headers[i] = Header{Key: string(r.bytes(false)), Value: r.bytes(true)}
		}
	}
	if !r.ok || offsetDelta < math.MinInt32 || offsetDelta > math.MaxInt32 {
		return Record{}, errors.New("malformed record")
	}
	if len(r.b) != 0 {
		return Record{}, fmt.Errorf("%d bytes left over inside the record", len(r.b))
	}
	rec.OffsetDelta = int32(offsetDelta)
	return rec, nil
}

// varintReader consumes Kafka's zig-zag varints; after the first failure every read returns zero and ok
// stays false.
type varintReader struct {
	b  []byte
	ok bool
}

func (r *varintReader) fail() { r.ok, r.b = false, nil }

func (r *varintReader) int8() int8 {
	if !r.ok || len(r.b) < 1 {
		r.fail()
		return 0
	}
	v := int8(r.b[0])
	r.b = r.b[1:]
	return v
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

// bytes reads a varint-length-prefixed field; length -1 (null) is allowed only when nullable.
func (r *varintReader) bytes(nullable bool) []byte {
	n := r.varint()
	switch {
	case !r.ok:
	case n == -1 && nullable:
	case n < 0 || n > int64(len(r.b)):
		r.fail()
	default:
		v := r.b[:n:n]
		r.b = r.b[n:]
		return v
	}
	return nil
}

// appendRecord appends r with its length prefix.
func appendRecord(dst []byte, r Record) []byte {
	size := 1 + varintSize(r.TimestampDelta) + varintSize(int64(r.OffsetDelta)) +
		bytesSize(r.Key) + bytesSize(r.Value) + varintSize(int64(len(r.Headers)))
	for _, h := range r.Headers {
		size += varintSize(int64(len(h.Key))) + len(h.Key) + bytesSize(h.Value)
	}
	dst = binary.AppendVarint(dst, int64(size))
	dst = append(dst, byte(r.Attributes))
	dst = binary.AppendVarint(dst, r.TimestampDelta)
	dst = binary.AppendVarint(dst, int64(r.OffsetDelta))
	dst = appendBytes(dst, r.Key)
	dst = appendBytes(dst, r.Value)
	dst = binary.AppendVarint(dst, int64(len(r.Headers)))
	for _, h := range r.Headers {
		dst = binary.AppendVarint(dst, int64(len(h.Key)))
		dst = append(dst, h.Key...)
		dst = appendBytes(dst, h.Value)
	}
	return dst
}

// appendBytes appends a varint-length-prefixed field, length -1 for nil.
func appendBytes(dst, b []byte) []byte {
	if b == nil {
		return binary.AppendVarint(dst, -1)
	}
	dst = binary.AppendVarint(dst, int64(len(b)))
	return append(dst, b...)
}

func bytesSize(b []byte) int {
	if b == nil {
		return varintSize(-1)
	}
	return varintSize(int64(len(b))) + len(b)
}

func varintSize(v int64) int {
	var buf [binary.MaxVarintLen64]byte
	return binary.PutVarint(buf[:], v)
}
