package consumer

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"
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
type Header struct {
	Key   string
	Value []byte
}

// errCorruptBatch means fetched bytes are not a record batch we can read.
var errCorruptBatch = errors.New("corrupt record batch")

// batchHeaderSize is a v2 batch's size up to and including its record count.
const batchHeaderSize = 61

// decodeBatches returns the records of the complete magic-2 batches in raw
// (a Fetch response's partition data) with offsets at or above from. A
// trailing partial batch, which brokers send when a batch does not fit in
// the fetch size, is ignored. Control batches (transaction markers) are
// skipped.
func decodeBatches(topic string, partition int32, raw []byte, from int64) ([]Record, error) {
	var out []Record
	for len(raw) >= 17 {
		size := 12 + int(int32(binary.BigEndian.Uint32(raw[8:])))
		if size > len(raw) {
			break
		}
		if size < batchHeaderSize {
			return out, fmt.Errorf("%w: batch length %d", errCorruptBatch, size)
		}
		if magic := raw[16]; magic != 2 {
			return out, fmt.Errorf("%w: message format v%d is not supported (only record batches, magic 2)", errCorruptBatch, magic)
		}
		var b kmsg.RecordBatch
		if err := b.ReadFrom(raw[:size]); err != nil {
			return out, fmt.Errorf("%w: %v", errCorruptBatch, err)
		}
		raw = raw[size:]
		if b.Attributes&0x20 != 0 { // control batch
			continue
		}
		records, err := decompress(b.Attributes&0x07, b.Records)
		if err != nil {
			return out, err
		}
		if out, err = appendRecords(out, topic, partition, &b, records, from); err != nil {
			return out, err
		}
	}
	return out, nil
}

// appendRecords decodes the NumRecords records of one batch.
func appendRecords(out []Record, topic string, partition int32, b *kmsg.RecordBatch, in []byte, from int64) ([]Record, error) {
	logAppendTime := b.Attributes&0x08 != 0
	for range b.NumRecords {
		length, used := kbin.Varint(in)
		end := used + int(length)
		if used <= 0 || length < 0 || end > len(in) {
			return out, fmt.Errorf("%w: record length", errCorruptBatch)
		}
		r := kbin.Reader{Src: in[used:end]}
		in = in[end:]
		r.Int8() // record attributes: unused
		tsDelta := r.Varlong()
		offsetDelta := r.Varint()
		key := r.VarintBytes()
		value := r.VarintBytes()
		var headers []Header
		if n := r.VarintArrayLen(); n > 0 {
			headers = make([]Header, n)
			for i := range headers {
				headers[i] = Header{Key: r.VarintString(), Value: r.VarintBytes()}
			}
		}
		if !r.Ok() {
			return out, fmt.Errorf("%w: record", errCorruptBatch)
		}
		offset := b.FirstOffset + int64(offsetDelta)
		if offset < from {
			continue // a batch starts before the position asked for
		}
		ts := b.FirstTimestamp + tsDelta
		if logAppendTime {
			ts = b.MaxTimestamp
		}
		out = append(out, Record{
			Topic: topic, Partition: partition, Offset: offset, LeaderEpoch: b.PartitionLeaderEpoch,
			Timestamp: time.UnixMilli(ts), Key: key, Value: value, Headers: headers,
		})
	}
	return out, nil
}

// Compression codecs of a batch's attributes.
const (
	codecNone = iota
	codecGzip
	codecSnappy
	codecLZ4
	codecZstd
)

var zstdDecoder, _ = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1)) // nil options never fail

// xerialMagic starts snappy data framed by the Java client's snappy-java.
var xerialMagic = []byte{130, 'S', 'N', 'A', 'P', 'P', 'Y', 0}

// decompress returns a batch's uncompressed records.
func decompress(codec int16, data []byte) ([]byte, error) {
	var (
		out []byte
		err error
	)
	switch codec {
	case codecNone:
		return data, nil
	case codecGzip:
		var zr *gzip.Reader
		if zr, err = gzip.NewReader(bytes.NewReader(data)); err == nil {
			out, err = io.ReadAll(zr)
		}
	case codecSnappy:
		out, err = unsnappy(data)
	case codecLZ4:
		out, err = io.ReadAll(lz4.NewReader(bytes.NewReader(data)))
	case codecZstd:
		out, err = zstdDecoder.DecodeAll(data, nil)
	default:
		err = fmt.Errorf("unknown codec %d", codec)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: decompress: %v", errCorruptBatch, err)
	}
	return out, nil
}

// unsnappy reads raw snappy or the xerial framing Java producers write: a
// 16-byte header, then blocks each prefixed by a big-endian length.
func unsnappy(data []byte) ([]byte, error) {
	if !bytes.HasPrefix(data, xerialMagic) {
		return s2.Decode(nil, data)
	}
	if len(data) < 16 {
		return nil, errors.New("short xerial header")
	}
	var out []byte
	for in := data[16:]; len(in) > 0; {
		if len(in) < 4 {
			return nil, errors.New("short xerial block length")
		}
		n := int(binary.BigEndian.Uint32(in))
		if n > len(in)-4 {
			return nil, errors.New("xerial block past the end")
		}
		block, err := s2.Decode(nil, in[4:4+n])
		if err != nil {
			return nil, err
		}
		out = append(out, block...)
		in = in[4+n:]
	}
	return out, nil
}
