package wire

import (
	"encoding/binary"
	"hash/crc32"
	"iter"
	"math"
)

// Layout of a v2 record batch (Kafka's DefaultRecordBatch): the position of each header field from the
// batch's start. Every field is big endian.
const (
	PosBaseOffset           = 0  // int64, assigned by the leader
	PosLength               = 8  // int32, the bytes after this field
	PosPartitionLeaderEpoch = 12 // int32, assigned by the leader
	PosMagic                = 16 // int8, 2
	PosCRC                  = 17 // uint32, CRC-32C of everything from the attributes on
	PosAttributes           = 21 // int16
	PosLastOffsetDelta      = 23 // int32
	PosFirstTimestamp       = 27 // int64
	PosMaxTimestamp         = 35 // int64
	PosProducerID           = 43 // int64
	PosProducerEpoch        = 51 // int16
	PosBaseSequence         = 53 // int32
	PosRecordCount          = 57 // int32

	// BatchHeaderSize is the size of the header; the records follow it.
	BatchHeaderSize = 61
	// LogOverhead is the base offset and length that precede the bytes a batch's length counts.
	LogOverhead = PosPartitionLeaderEpoch
	// MinBatchLength is the smallest length of a v2 batch: a header without records.
	MinBatchLength = BatchHeaderSize - LogOverhead
	// MagicV2 is the magic byte of record batches; 0 and 1 are the older message sets.
	MagicV2 = 2

	// minMessageLength is the smallest length field of any message format (a v0 message: CRC, magic,
	// attributes and two null lengths); Kafka checks it before it knows the magic.
	minMessageLength = 14
)

// Batch attribute bits. The low three bits are the compression codec.
const (
	AttrCodecMask     = 0x07
	AttrLogAppendTime = 0x08 // timestamps are the broker's append time: every record has MaxTimestamp
	AttrTransactional = 0x10
	AttrControl       = 0x20 // the batch holds a control record (a transaction marker)
)

// Attributes are a batch's attribute bits.
type Attributes int16

// Codec is the compression codec of the batch's records.
func (a Attributes) Codec() Codec { return Codec(a & AttrCodecMask) }

// LogAppendTime reports whether the batch's timestamps are the broker's (LogAppendTime) rather than the
// producer's (CreateTime).
func (a Attributes) LogAppendTime() bool { return a&AttrLogAppendTime != 0 }

// Transactional reports whether the batch belongs to a transaction.
func (a Attributes) Transactional() bool { return a&AttrTransactional != 0 }

// Control reports whether the batch holds a control record rather than data.
func (a Attributes) Control() bool { return a&AttrControl != 0 }

// BatchHeader is the fixed-size header of a v2 record batch.
type BatchHeader struct {
	BaseOffset           int64
	Length               int32 // the bytes after the length field
	PartitionLeaderEpoch int32
	Magic                int8
	CRC                  uint32
	Attributes           Attributes
	LastOffsetDelta      int32
	FirstTimestamp       int64
	MaxTimestamp         int64
	ProducerID           int64
	ProducerEpoch        int16
	BaseSequence         int32
	RecordCount          int32
}

// parseBatchHeader decodes the header at the start of b, which holds at least BatchHeaderSize bytes.
func parseBatchHeader(b []byte) BatchHeader {
	be := binary.BigEndian
	return BatchHeader{
		BaseOffset:           int64(be.Uint64(b[PosBaseOffset:])),
		Length:               int32(be.Uint32(b[PosLength:])),
		PartitionLeaderEpoch: int32(be.Uint32(b[PosPartitionLeaderEpoch:])),
		Magic:                int8(b[PosMagic]),
		CRC:                  be.Uint32(b[PosCRC:]),
		Attributes:           Attributes(be.Uint16(b[PosAttributes:])),
		LastOffsetDelta:      int32(be.Uint32(b[PosLastOffsetDelta:])),
		FirstTimestamp:       int64(be.Uint64(b[PosFirstTimestamp:])),
		MaxTimestamp:         int64(be.Uint64(b[PosMaxTimestamp:])),
		ProducerID:           int64(be.Uint64(b[PosProducerID:])),
		ProducerEpoch:        int16(be.Uint16(b[PosProducerEpoch:])),
		BaseSequence:         int32(be.Uint32(b[PosBaseSequence:])),
		RecordCount:          int32(be.Uint32(b[PosRecordCount:])),
	}
}

// appendBatchHeader appends h in the v2 layout.
func appendBatchHeader(dst []byte, h BatchHeader) []byte {
	be := binary.BigEndian
	dst = be.AppendUint64(dst, uint64(h.BaseOffset))
	dst = be.AppendUint32(dst, uint32(h.Length))
	dst = be.AppendUint32(dst, uint32(h.PartitionLeaderEpoch))
	dst = append(dst, byte(h.Magic))
	dst = be.AppendUint32(dst, h.CRC)
	dst = be.AppendUint16(dst, uint16(h.Attributes))
	dst = be.AppendUint32(dst, uint32(h.LastOffsetDelta))
	dst = be.AppendUint64(dst, uint64(h.FirstTimestamp))
	dst = be.AppendUint64(dst, uint64(h.MaxTimestamp))
	dst = be.AppendUint64(dst, uint64(h.ProducerID))
	dst = be.AppendUint16(dst, uint16(h.ProducerEpoch))
	dst = be.AppendUint32(dst, uint32(h.BaseSequence))
	return be.AppendUint32(dst, uint32(h.RecordCount))
}

// Size is the batch's whole size, base offset and length included.
func (h BatchHeader) Size() int64 { return LogOverhead + int64(h.Length) }

// LastOffset is the offset of the batch's last record (compaction may have removed it).
func (h BatchHeader) LastOffset() int64 { return h.BaseOffset + int64(h.LastOffsetDelta) }

// Sequence is the producer sequence of the record at offsetDelta: sequences wrap from MaxInt32 to 0,
// and a batch without sequences (BaseSequence -1) has -1 throughout, as Kafka's
// DefaultRecordBatch.incrementSequence.
func (h BatchHeader) Sequence(offsetDelta int32) int32 {
	if h.BaseSequence == -1 {
		return -1
	}
	if h.BaseSequence > math.MaxInt32-offsetDelta {
		return offsetDelta - (math.MaxInt32 - h.BaseSequence) - 1
	}
	return h.BaseSequence + offsetDelta
}

// LastSequence is the sequence of the batch's last offset.
func (h BatchHeader) LastSequence() int32 { return h.Sequence(h.LastOffsetDelta) }

// RecordOffset is the offset of a record of this batch.
func (h BatchHeader) RecordOffset(r Record) int64 { return h.BaseOffset + int64(r.OffsetDelta) }

// RecordTimestamp is the timestamp of a record of this batch in milliseconds: the batch's
// MaxTimestamp under LogAppendTime, else the first timestamp plus the record's delta.
func (h BatchHeader) RecordTimestamp(r Record) int64 {
	if h.Attributes.LogAppendTime() {
		return h.MaxTimestamp
	}
	return h.FirstTimestamp + r.TimestampDelta
}

// Batch is one framed record batch inside the data being read: a v2 batch, or one v0 or v1 message (a
// compressed one wraps several records) with a shallow header.
type Batch struct {
	BatchHeader
	Pos int    // where the batch starts in the data read
	Raw []byte // the whole batch, base offset first; it shares the data read
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// batchCRC is the CRC-32C a v2 batch carries: of every byte from its attributes on.
func batchCRC(batch []byte) uint32 { return crc32.Checksum(batch[PosAttributes:], castagnoli) }

// VerifyCRC checks the batch's CRC against its bytes (ErrCRCMismatch): CRC-32C for v2, a legacy
// message's CRC-32 otherwise.
func (b Batch) VerifyCRC() error {
	got := batchCRC(b.Raw)
	if b.Magic < MagicV2 {
		got = crc32.ChecksumIEEE(b.Raw[PosMagic:])
	}
	if got != b.CRC {
		return formatErrorf(ErrCRCMismatch, "batch CRC is %#08x, computed %#08x", b.CRC, got)
	}
	return nil
}

// SetBaseOffset writes a v2 batch's base offset in place. The CRC does not cover it, so the batch stays
// valid: this is how a leader assigns offsets to what a producer sent. (A legacy message's offset field
// is its last offset, and a v0 wrapper's inner offsets are absolute: those are written by AppendLegacy.)
func SetBaseOffset(batch []byte, offset int64) {
	binary.BigEndian.PutUint64(batch[PosBaseOffset:], uint64(offset))
}

// SetPartitionLeaderEpoch writes a batch's partition leader epoch in place, outside the CRC as
// SetBaseOffset.
func SetPartitionLeaderEpoch(batch []byte, epoch int32) {
	binary.BigEndian.PutUint32(batch[PosPartitionLeaderEpoch:], uint32(epoch))
}

// ReadBatchHeader frames the batch header at the start of b, for a reader that holds only the header
// (ReadBatch frames the whole batch). The checks run in the order of Kafka's log input stream: a length
// field below any message format's minimum, then the magic, then the format's own minimum length. A v0 or
// v1 message comes back as a shallow header (see legacyHeader). A failure is a *BatchError with Pos 0;
// ErrTruncatedBatch means b is shorter than the header (HeaderSize of its magic). The CRC is not
// checked: see Batch.VerifyCRC.
func ReadBatchHeader(b []byte) (BatchHeader, error) {
	e := &BatchError{Avail: len(b), Length: -1, Magic: -1, Err: ErrTruncatedBatch}
	if len(b) < LogOverhead {
		return BatchHeader{}, e
	}
	e.Length = int32(binary.BigEndian.Uint32(b[PosLength:]))
	if e.Length < minMessageLength {
		e.Err = ErrBatchLength
		return BatchHeader{}, e
	}
	if len(b) <= PosMagic {
		return BatchHeader{}, e
	}
	if e.Magic = int8(b[PosMagic]); e.Magic < MagicV0 || e.Magic > MagicV2 {
		e.Err = ErrUnsupportedMagic
		return BatchHeader{}, e
	}
	if e.Length < minLength(e.Magic) {
		e.Err = ErrBatchLength
		return BatchHeader{}, e
	}
	if len(b) < HeaderSize(e.Magic) {
		return BatchHeader{}, e
	}
	if e.Magic < MagicV2 {
		return legacyHeader(b), nil
	}
	return parseBatchHeader(b), nil
}

// HeaderSize is how many bytes ReadBatchHeader needs for a batch of magic: BatchHeaderSize for v2, the
// offset, size, CRC, magic, attributes (and v1's timestamp) for a legacy message.
func HeaderSize(magic int8) int {
	switch magic {
	case MagicV0:
		return legacyPosTimestamp
	case MagicV1:
		return legacyPosTimestamp + 8
	}
	return BatchHeaderSize
}

// minLength is the smallest length field a batch of magic may have.
func minLength(magic int8) int32 {
	switch magic {
	case MagicV0:
		return minMessageLength
	case MagicV1:
		return minMessageLength + 8
	}
	return MinBatchLength
}

// ReadBatch frames the batch at the start of b, which may hold more after it: ReadBatchHeader's checks,
// then whether b holds the whole batch (ErrTruncatedBatch).
func ReadBatch(b []byte) (Batch, error) {
	h, err := ReadBatchHeader(b)
	if err != nil {
		return Batch{}, err
	}
	if h.Size() > int64(len(b)) {
		return Batch{}, &BatchError{Avail: len(b), Length: h.Length, Magic: h.Magic, Err: ErrTruncatedBatch}
	}
	return Batch{BatchHeader: h, Raw: b[:h.Size():h.Size()]}, nil
}

// Batches iterates the batches in data, a fetch response's records or a piece of a segment, each framed
// by ReadBatch with its position set. It stops after the first error, a *BatchError; a caller that reads
// as Kafka's clients do treats ErrTruncatedBatch as the end of the data.
func Batches(data []byte) iter.Seq2[Batch, error] {
	return func(yield func(Batch, error) bool) {
		for pos := 0; pos < len(data); {
			b, err := ReadBatch(data[pos:])
			if err != nil {
				err.(*BatchError).Pos = pos
				yield(Batch{}, err)
				return
			}
			b.Pos = pos
			if !yield(b, nil) {
				return
			}
			pos += len(b.Raw)
		}
	}
}

// AppendBatch appends a v2 batch of records to dst. The header's fields are written as given (the base
// offset and last offset delta, timestamps, producer fields and attributes) except Magic, Length,
// RecordCount and CRC, which it sets; the records are compressed with the attributes' codec, which must
// be one Kafka has (it panics otherwise: the writer chooses the codec).
func AppendBatch(dst []byte, h BatchHeader, records []Record) []byte {
	var body []byte
	for _, r := range records {
		body = appendRecord(body, r)
	}
	body = h.Attributes.Codec().compress(body)
	h.Magic = MagicV2
	h.Length = int32(MinBatchLength + len(body))
	h.RecordCount = int32(len(records))
	start := len(dst)
	dst = appendBatchHeader(dst, h)
	dst = append(dst, body...)
	binary.BigEndian.PutUint32(dst[start+PosCRC:], batchCRC(dst[start:]))
	return dst
}
