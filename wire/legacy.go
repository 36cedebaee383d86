package wire

// The message formats before record batches: v0 (magic 0, Kafka 0.8–0.9)
// and v1 (magic 1, 0.10, which added a timestamp). Produce v0–v2 carry
// message sets in them and Fetch v0–v3 must answer in them. A log whose
// message.format.version is below 0.11 stores them too: the log converts
// what producers send (AppendLegacy), and Batches frames each stored
// message as a Batch with a shallow header (legacyHeader) whose Records
// reads it, so the log's scans, the cleaner and the consumers read either
// format. A produce in an old format is up-converted (UpConvert) for a v2
// log, and a fetch of an old version down-converted (DownConvert).
//
// A message set is a run of entries: offset int64, size int32, then the
// message: crc uint32 (CRC-32 of the rest), magic int8, attributes int8
// (codec in the low three bits; v1: bit 3 is LogAppendTime), timestamp
// int64 (v1 only), key and value as int32-length bytes (-1: null). A
// compressed message is a wrapper whose value is a compressed message set:
// v1 inner offsets are relative (0, 1, …) and the wrapper's offset is the
// last inner one; v0 inner offsets are absolute.

import (
	"encoding/binary"
	"hash/crc32"
)

// The legacy message formats' magic bytes.
const (
	MagicV0 int8 = 0
	MagicV1 int8 = 1
)

// Where a legacy message's fields sit from its entry's start; the offset and size come first, as in a v2
// batch, and the magic byte sits where a batch's does. v1's timestamp-type bit in the attributes is
// v2's, AttrLogAppendTime.
const (
	legacyPosCRC        = LogOverhead
	legacyPosAttributes = PosMagic + 1
	legacyPosTimestamp  = PosMagic + 2 // v1 only
)

// legacyHeader is the shallow header of the v0 or v1 message at the start of b, which holds HeaderSize
// bytes of it, as Kafka's legacy record batches read without their records: the message's offset is both
// its base and last offset (a compressed wrapper's is its last inner record's; Records gives each its
// own), it has no producer, sequence or leader epoch, and v0 has no timestamp (-1). RecordCount is 1, or
// -1 for a compressed wrapper, whose count takes decompressing.
func legacyHeader(b []byte) BatchHeader {
	be := binary.BigEndian
	magic, attrs := int8(b[PosMagic]), Attributes(b[legacyPosAttributes])
	h := BatchHeader{
		BaseOffset: int64(be.Uint64(b[PosBaseOffset:])), Length: int32(be.Uint32(b[PosLength:])),
		PartitionLeaderEpoch: -1, Magic: magic, CRC: be.Uint32(b[legacyPosCRC:]),
		Attributes: attrs & AttrCodecMask, FirstTimestamp: -1, MaxTimestamp: -1,
		ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, RecordCount: 1,
	}
	if magic == MagicV1 {
		h.Attributes |= attrs & AttrLogAppendTime
		h.FirstTimestamp = int64(be.Uint64(b[legacyPosTimestamp:]))
		h.MaxTimestamp = h.FirstTimestamp
	}
	if h.Attributes.Codec() != CodecNone {
		h.RecordCount = -1
	}
	return h
}

// LegacyMessages reads a v0 or v1 batch's messages: the message itself, or a wrapper's inner messages,
// each with its offset, timestamp and CRC, as dump-log prints them. An error unwraps to
// ErrCorruptRecords or ErrUnknownCodec.
func (b Batch) LegacyMessages() ([]LegacyMessage, error) {
	if b.Magic >= MagicV2 {
		return nil, formatErrorf(ErrCorruptRecords, "batch at offset %d has magic %d, not a legacy message", b.BaseOffset, b.Magic)
	}
	set := MessageSet{Magic: b.Magic}
	if err := set.read(b.Raw, false); err != nil {
		return nil, err
	}
	return set.Messages, nil
}

// LegacyRecord is one of a v0 or v1 batch's messages (LegacyMessages) as the batch's Record: its offset
// and timestamp as deltas from the shallow header's.
func (b Batch) LegacyRecord(m LegacyMessage) Record {
	return Record{OffsetDelta: int32(m.Offset - b.BaseOffset), TimestampDelta: m.Timestamp - b.FirstTimestamp, Key: m.Key, Value: m.Value}
}

// legacyRecords yields the records of a v0 or v1 batch.
func (b Batch) legacyRecords(yield func(Record, error) bool) {
	msgs, err := b.LegacyMessages()
	if err != nil {
		yield(Record{}, err)
		return
	}
	for _, m := range msgs {
		if !yield(b.LegacyRecord(m), nil) {
			return
		}
	}
}

// minLegacyMessageSize is the smallest v0 message after its offset and
// size: crc, magic, attributes and the two lengths.
const minLegacyMessageSize = 4 + 1 + 1 + 4 + 4

// LegacyMessage is one message of a v0 or v1 message set, a compressed
// wrapper's inner messages flattened in its place.
type LegacyMessage struct {
	Offset     int64 // absolute (a v1 wrapper's relative inner offsets resolved)
	Timestamp  int64 // -1 in v0
	Key, Value []byte
	CRC        uint32 // as read; the writers compute their own
}

// MessageSet is a parsed v0 or v1 message set.
type MessageSet struct {
	Magic    int8
	Codec    Codec // the wrappers' codec, CodecNone when no message is compressed
	Messages []LegacyMessage
}

// IsLegacyMessageSet reports whether data starts with a v0 or v1 message
// (rather than a v2 batch), the magic byte sitting where a batch's does.
func IsLegacyMessageSet(data []byte) bool {
	return len(data) > PosMagic && (int8(data[PosMagic]) == MagicV0 || int8(data[PosMagic]) == MagicV1)
}

// ReadMessageSet parses a complete message set, as a produce sends it:
// every message must be whole, its CRC right, and all of one magic. An
// error unwraps to ErrCorruptRecords, or ErrUnknownCodec for a codec the
// format does not have (ZStandard came with v2).
func ReadMessageSet(data []byte) (MessageSet, error) {
	set := MessageSet{Magic: -1}
	if err := set.read(data, false); err != nil {
		return MessageSet{}, err
	}
	if len(set.Messages) == 0 {
		return MessageSet{}, formatErrorf(ErrCorruptRecords, "empty message set")
	}
	return set, nil
}

func (s *MessageSet) read(data []byte, inner bool) error {
	be := binary.BigEndian
	for len(data) > 0 {
		if len(data) < 12 {
			return formatErrorf(ErrCorruptRecords, "%d trailing bytes are too short for a message", len(data))
		}
		offset, size := int64(be.Uint64(data)), int32(be.Uint32(data[8:]))
		if size < minLegacyMessageSize || int64(size) > int64(len(data)-12) {
			return formatErrorf(ErrCorruptRecords, "message at offset %d claims %d bytes, %d remain", offset, size, len(data)-12)
		}
		msg := data[12 : 12+size]
		data = data[12+size:]
		if crc32.ChecksumIEEE(msg[4:]) != be.Uint32(msg) {
			return formatErrorf(ErrCorruptRecords, "message at offset %d fails its CRC", offset)
		}
		magic, attrs := int8(msg[4]), msg[5]
		if magic != MagicV0 && magic != MagicV1 {
			return formatErrorf(ErrCorruptRecords, "message at offset %d has magic %d in a v0/v1 message set", offset, magic)
		}
		if s.Magic >= 0 && magic != s.Magic {
			return formatErrorf(ErrCorruptRecords, "message at offset %d has magic %d after magic %d", offset, magic, s.Magic)
		}
		s.Magic = magic
		rest, ts := msg[6:], int64(-1)
		if magic == MagicV1 {
			if len(rest) < 8 {
				return formatErrorf(ErrCorruptRecords, "message at offset %d is truncated", offset)
			}
			ts, rest = int64(be.Uint64(rest)), rest[8:]
		}
		key, rest, ok := readLegacyBytes(rest)
		var value []byte
		if ok {
			value, rest, ok = readLegacyBytes(rest)
		}
		if !ok || len(rest) != 0 {
			return formatErrorf(ErrCorruptRecords, "message at offset %d has a key or value that does not fill it", offset)
		}
		codec := Codec(attrs & 0x07)
		if codec == CodecNone {
			s.Messages = append(s.Messages, LegacyMessage{Offset: offset, Timestamp: ts, Key: key, Value: value, CRC: be.Uint32(msg)})
			continue
		}
		if inner {
			return formatErrorf(ErrCorruptRecords, "compressed message at offset %d inside a compressed message", offset)
		}
		if !codec.Known() || codec == CodecZstd {
			return formatErrorf(ErrUnknownCodec, "message at offset %d has compression codec %d, which magic %d does not have", offset, codec, magic)
		}
		if s.Codec != CodecNone && s.Codec != codec {
			return formatErrorf(ErrCorruptRecords, "message set mixes codecs %s and %s", s.Codec, codec)
		}
		s.Codec = codec
		if magic == MagicV0 && codec == CodecLZ4 {
			value = fixLZ4V0HeaderChecksum(value)
		}
		plain, err := codec.decompress(value)
		if err != nil {
			return err
		}
		first := len(s.Messages)
		if err := s.read(plain, true); err != nil {
			return err
		}
		if len(s.Messages) == first {
			return formatErrorf(ErrCorruptRecords, "compressed message at offset %d has no inner messages", offset)
		}
		if magic == MagicV1 {
			// Relative inner offsets: the wrapper carries the last one.
			last := s.Messages[len(s.Messages)-1].Offset
			for i := first; i < len(s.Messages); i++ {
				s.Messages[i].Offset += offset - last
			}
		}
	}
	return nil
}

// readLegacyBytes reads int32-length bytes, nil for length -1.
func readLegacyBytes(b []byte) (v, rest []byte, ok bool) {
	if len(b) < 4 {
		return nil, nil, false
	}
	n := int32(binary.BigEndian.Uint32(b))
	b = b[4:]
	switch {
	case n == -1:
		return nil, b, true
	case n < 0 || int64(n) > int64(len(b)):
		return nil, nil, false
	}
	return b[:n:n], b[n:], true
}

// UpConvert turns a v0 or v1 message set into one v2 batch with no
// producer, compressed with the set's own codec, for the log to assign
// offsets (Kafka's LogValidator with compression.type=producer). v0
// messages have no timestamp: -1 in the batch as in Kafka.
func UpConvert(data []byte) ([]byte, error) {
	set, err := ReadMessageSet(data)
	if err != nil {
		return nil, err
	}
	h := BatchHeader{
		Attributes:      Attributes(set.Codec),
		LastOffsetDelta: int32(len(set.Messages) - 1),
		FirstTimestamp:  set.Messages[0].Timestamp,
		MaxTimestamp:    -1,
		ProducerID:      -1, ProducerEpoch: -1, BaseSequence: -1,
	}
	records := make([]Record, len(set.Messages))
	for i, m := range set.Messages {
		h.MaxTimestamp = max(h.MaxTimestamp, m.Timestamp)
		records[i] = Record{OffsetDelta: int32(i), TimestampDelta: m.Timestamp - h.FirstTimestamp, Key: m.Key, Value: m.Value}
	}
	return AppendBatch(nil, h, records), nil
}

// DownConvert rewrites the batches a fetch read into a message set of
// magic (v0 for Fetch v0–v1, v1 for v2–v3), as Kafka's
// RecordsUtil.downConvert: a batch already in that magic or an older one
// is kept as it is; of the others, control batches are left out, headers
// dropped, records of an uncompressed batch below fetchOffset skipped (an
// old client skips those of a compressed one), and a compressed batch
// becomes one wrapper message in its codec. A partial batch at the end, as
// a fetch may return, ends the data. A batch in ZStandard is
// ErrUnknownCodec: no old client reads it (Kafka answers
// UNSUPPORTED_COMPRESSION_TYPE).
func DownConvert(data []byte, magic int8, fetchOffset int64) ([]byte, error) {
	var out []byte
	for b, err := range Batches(data) {
		if err != nil {
			break
		}
		if b.Magic <= magic {
			out = append(out, b.Raw...)
			continue
		}
		if b.Attributes.Control() {
			continue
		}
		codec := b.Attributes.Codec()
		if codec == CodecZstd {
			return nil, formatErrorf(ErrUnknownCodec, "batch at offset %d is compressed with ZSTD, which magic %d does not have", b.BaseOffset, magic)
		}
		var msgs []LegacyMessage
		for r, err := range b.Records() {
			if err != nil {
				return nil, err
			}
			m := LegacyMessage{Offset: b.RecordOffset(r), Timestamp: b.RecordTimestamp(r), Key: r.Key, Value: r.Value}
			if codec != CodecNone || m.Offset >= fetchOffset {
				msgs = append(msgs, m)
			}
		}
		out = AppendLegacy(out, magic, codec, b.Attributes.LogAppendTime(), msgs)
	}
	return out, nil
}

// AppendLegacy appends msgs to dst as a v0 or v1 message set keeping their
// offsets: one message each when codec is CodecNone, else one wrapper
// compressed with codec (not ZStandard, which the old formats lack) whose
// offset is the last message's and, in v1, whose timestamp is the largest
// (inner offsets relative to the first message in v1, absolute in v0, as
// Kafka's MemoryRecordsBuilder writes them). logAppendTime marks v1
// timestamps as the broker's. No messages append nothing.
func AppendLegacy(dst []byte, magic int8, codec Codec, logAppendTime bool, msgs []LegacyMessage) []byte {
	if len(msgs) == 0 {
		return dst
	}
	if codec == CodecNone {
		for _, m := range msgs {
			dst = appendLegacyMessage(dst, magic, 0, logAppendTime, m)
		}
		return dst
	}
	var inner []byte
	wrapper := LegacyMessage{Offset: msgs[len(msgs)-1].Offset, Timestamp: -1}
	for _, m := range msgs {
		wrapper.Timestamp = max(wrapper.Timestamp, m.Timestamp)
		if magic == MagicV1 {
			m.Offset -= msgs[0].Offset
		}
		inner = appendLegacyMessage(inner, magic, 0, false, m)
	}
	wrapper.Value = codec.compress(inner)
	if magic == MagicV0 && codec == CodecLZ4 {
		wrapper.Value = breakLZ4V0HeaderChecksum(wrapper.Value)
	}
	return appendLegacyMessage(dst, magic, codec, logAppendTime, wrapper)
}

// appendLegacyMessage appends one entry of a message set.
func appendLegacyMessage(dst []byte, magic int8, codec Codec, logAppendTime bool, m LegacyMessage) []byte {
	be := binary.BigEndian
	dst = be.AppendUint64(dst, uint64(m.Offset))
	sizeAt := len(dst)
	dst = be.AppendUint32(dst, 0)
	crcAt := len(dst)
	dst = be.AppendUint32(dst, 0)
	attrs := byte(codec)
	if magic == MagicV1 && logAppendTime {
		attrs |= AttrLogAppendTime
	}
	dst = append(dst, byte(magic), attrs)
	if magic == MagicV1 {
		dst = be.AppendUint64(dst, uint64(m.Timestamp))
	}
	for _, b := range [][]byte{m.Key, m.Value} {
		if b == nil {
			dst = be.AppendUint32(dst, 0xffffffff)
			continue
		}
		dst = be.AppendUint32(dst, uint32(len(b)))
		dst = append(dst, b...)
	}
	be.PutUint32(dst[sizeAt:], uint32(len(dst)-crcAt))
	be.PutUint32(dst[crcAt:], crc32.ChecksumIEEE(dst[crcAt+4:]))
	return dst
}
