package wire

// The message formats before record batches: v0 (magic 0, Kafka 0.8–0.9)
// and v1 (magic 1, 0.10, which added a timestamp). Produce v0–v2 carry
// message sets in them and Fetch v0–v3 must answer in them. The log stores
// v2 batches only, so a produce is up-converted (UpConvert) and a fetch
// down-converted (DownConvert), as a Kafka 2.8 broker with the default
// log.message.format.version does.
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

// legacyAttrLogAppendTime is v1's timestamp-type bit.
const legacyAttrLogAppendTime = 0x08

// minLegacyMessageSize is the smallest v0 message after its offset and
// size: crc, magic, attributes and the two lengths.
const minLegacyMessageSize = 4 + 1 + 1 + 4 + 4

// LegacyMessage is one message of a v0 or v1 message set, a compressed
// wrapper's inner messages flattened in its place.
type LegacyMessage struct {
	Offset     int64 // absolute (a v1 wrapper's relative inner offsets resolved)
	Timestamp  int64 // -1 in v0
	Key, Value []byte
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
			s.Messages = append(s.Messages, LegacyMessage{Offset: offset, Timestamp: ts, Key: key, Value: value})
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

// DownConvert rewrites the v2 batches a fetch read into a message set of
// magic (v0 for Fetch v0–v1, v1 for v2–v3), as Kafka's
// RecordsUtil.downConvert: control batches are left out, headers dropped,
// records of an uncompressed batch below fetchOffset skipped (an old
// client skips those of a compressed one), and a compressed batch becomes
// one wrapper message in its codec. A partial batch at the end, as a fetch
// may return, ends the data. A batch in ZStandard is ErrUnknownCodec: no
// old client reads it (Kafka answers UNSUPPORTED_COMPRESSION_TYPE).
func DownConvert(data []byte, magic int8, fetchOffset int64) ([]byte, error) {
	var out []byte
	for b, err := range Batches(data) {
		if err != nil {
			break
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
		if len(msgs) == 0 {
			continue
		}
		logAppendTime := b.Attributes.LogAppendTime()
		if codec == CodecNone {
			for _, m := range msgs {
				out = appendLegacyMessage(out, magic, 0, logAppendTime, m)
			}
			continue
		}
		var inner []byte
		last := msgs[len(msgs)-1].Offset
		for _, m := range msgs {
			if magic == MagicV1 {
				m.Offset -= msgs[0].Offset
			}
			inner = appendLegacyMessage(inner, magic, 0, false, m)
		}
		value := codec.compress(inner)
		if magic == MagicV0 && codec == CodecLZ4 {
			value = breakLZ4V0HeaderChecksum(value)
		}
		out = appendLegacyMessage(out, magic, codec, logAppendTime, LegacyMessage{
			Offset: last, Timestamp: b.MaxTimestamp, Value: value,
		})
	}
	return out, nil
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
		attrs |= legacyAttrLogAppendTime
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
