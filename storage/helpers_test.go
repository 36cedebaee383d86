package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/zkafka/zkafka/wire"
)

// testConfig is a config with small segments and a dense index so that tests roll and index quickly.
func testConfig() LogConfig {
	cfg := DefaultLogConfig()
	cfg.SegmentBytes = 64 << 10
	cfg.IndexIntervalBytes = 512
	cfg.MaxIndexSize = 4 << 10
	return cfg
}

func testLogger(t testing.TB) *zap.Logger {
	return zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel))
}

func openTestLog(t testing.TB, dir string, cfg LogConfig) *Log {
	t.Helper()
	l, err := Open(dir, cfg, 0, testLogger(t))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// appendRecord encodes r with its varint length prefix filled in.
func appendRecord(dst []byte, r kmsg.Record) []byte {
	r.Length = 0
	r.Length = int32(len(r.AppendTo(nil)) - 1) // a zero length encodes in one byte
	return r.AppendTo(dst)
}

// encodeBatch wraps encoded records in a v2 batch header with a correct CRC, as a producer sends it
// (base offset 0, no leader epoch, no producer id).
func encodeBatch(records []byte, count int32, firstTimestamp, maxTimestamp int64, attributes int16) []byte {
	b := kmsg.RecordBatch{
		FirstOffset:          0,
		Length:               int32(wire.MinBatchLength + len(records)),
		PartitionLeaderEpoch: -1,
		Magic:                2,
		Attributes:           attributes,
		LastOffsetDelta:      count - 1,
		FirstTimestamp:       firstTimestamp,
		MaxTimestamp:         maxTimestamp,
		ProducerID:           -1,
		ProducerEpoch:        -1,
		FirstSequence:        -1,
		NumRecords:           count,
		Records:              records,
	}
	raw := b.AppendTo(nil)
	binary.BigEndian.PutUint32(raw[wire.PosCRC:], crc32.Checksum(raw[wire.PosAttributes:], crc32.MakeTable(crc32.Castagnoli)))
	return raw
}

// makeBatch builds an uncompressed batch of the given values; record i has timestamp firstTimestamp+i.
func makeBatch(firstTimestamp int64, values ...string) []byte {
	var recs []byte
	for i, v := range values {
		recs = appendRecord(recs, kmsg.Record{TimestampDelta64: int64(i), OffsetDelta: int32(i), Value: []byte(v)})
	}
	n := int32(len(values))
	return encodeBatch(recs, n, firstTimestamp, firstTimestamp+int64(n)-1, 0)
}

// makeTimedBatch builds an uncompressed batch with one record per timestamp.
func makeTimedBatch(timestamps ...int64) []byte {
	var recs []byte
	maxTs := timestamps[0]
	for i, ts := range timestamps {
		recs = appendRecord(recs, kmsg.Record{TimestampDelta64: ts - timestamps[0], OffsetDelta: int32(i), Value: []byte(fmt.Sprint(ts))})
		maxTs = max(maxTs, ts)
	}
	return encodeBatch(recs, int32(len(timestamps)), timestamps[0], maxTs, 0)
}

// makeGzipBatch is makeTimedBatch with the records gzip-compressed.
func makeGzipBatch(t testing.TB, timestamps ...int64) []byte {
	t.Helper()
	plain := makeTimedBatch(timestamps...)
	h, err := wire.ReadBatchHeader(plain)
	if err != nil {
		t.Fatal(err)
	}
	c, err := kgo.DefaultCompressor(kgo.GzipCompression())
	if err != nil {
		t.Fatal(err)
	}
	compressed, codec := c.Compress(new(bytes.Buffer), plain[wire.BatchHeaderSize:])
	if codec != kgo.CodecGzip {
		t.Fatalf("compressed with codec %v", codec)
	}
	return encodeBatch(append([]byte(nil), compressed...), h.RecordCount, h.FirstTimestamp, h.MaxTimestamp, int16(codec))
}

// makeSizedBatch builds a batch of one record whose value pads the batch to about size bytes.
func makeSizedBatch(timestamp int64, size int) []byte {
	return makeBatch(timestamp, string(bytes.Repeat([]byte{'x'}, max(size-80, 1))))
}

// decodedBatch is one batch read back, with its records.
type decodedBatch struct {
	kmsg.RecordBatch
	records []kmsg.Record
}

// decodeBatches parses stored batches with kmsg, checking each CRC.
func decodeBatches(t testing.TB, data []byte) []decodedBatch {
	t.Helper()
	var out []decodedBatch
	for len(data) > 0 {
		var b kmsg.RecordBatch
		if err := b.ReadFrom(data); err != nil {
			t.Fatalf("decode batch: %v", err)
		}
		size := wire.LogOverhead + int(b.Length)
		if got := crc32.Checksum(data[wire.PosAttributes:size], crc32.MakeTable(crc32.Castagnoli)); int32(got) != b.CRC {
			t.Fatalf("batch at offset %d has a bad CRC", b.FirstOffset)
		}
		recs := b.Records
		if b.Attributes&wire.AttrCodecMask != 0 {
			var err error
			if recs, err = kgo.DefaultDecompressor().Decompress(recs, kgo.CompressionCodecType(b.Attributes&wire.AttrCodecMask)); err != nil {
				t.Fatalf("decompress: %v", err)
			}
		}
		d := decodedBatch{RecordBatch: b}
		for range b.NumRecords {
			var r kmsg.Record
			if err := r.ReadFrom(recs); err != nil {
				t.Fatalf("decode record: %v", err)
			}
			n, w := binary.Varint(recs)
			recs = recs[w+int(n):]
			d.records = append(d.records, r)
		}
		out = append(out, d)
		data = data[size:]
	}
	return out
}

// offsetsOf lists the offsets of every record in stored batches.
func offsetsOf(t testing.TB, data []byte) []int64 {
	t.Helper()
	var offs []int64
	for _, b := range decodeBatches(t, data) {
		for _, r := range b.records {
			offs = append(offs, b.FirstOffset+int64(r.OffsetDelta))
		}
	}
	return offs
}

// valuesOf lists the values of every record in stored batches.
func valuesOf(t testing.TB, data []byte) []string {
	t.Helper()
	var vals []string
	for _, b := range decodeBatches(t, data) {
		for _, r := range b.records {
			vals = append(vals, string(r.Value))
		}
	}
	return vals
}

// readAllRecords reads the whole log from its start, one Read per call as a consumer would.
func readAllRecords(t testing.TB, l *Log) []string {
	t.Helper()
	var vals []string
	for off := l.LogStartOffset(); off < l.LogEndOffset(); {
		data, err := l.Read(off, 1<<20, l.LogEndOffset(), true)
		if err != nil {
			t.Fatalf("Read(%d): %v", off, err)
		}
		batches := decodeBatches(t, data)
		if len(batches) == 0 {
			t.Fatalf("Read(%d) returned nothing below LEO %d", off, l.LogEndOffset())
		}
		vals = append(vals, valuesOf(t, data)...)
		last := batches[len(batches)-1]
		off = last.FirstOffset + int64(last.LastOffsetDelta) + 1
	}
	return vals
}

// mustAppend appends as leader and fails the test on error.
func mustAppend(t testing.TB, l *Log, batches ...[]byte) AppendInfo {
	t.Helper()
	info, err := l.AppendAsLeader(bytes.Join(batches, nil), 7)
	if err != nil {
		t.Fatalf("AppendAsLeader: %v", err)
	}
	return info
}

// wantKerr fails unless err wraps the given Kafka error.
func wantKerr(t testing.TB, err error, want *kerr.Error) {
	t.Helper()
	var ke *kerr.Error
	if !errors.As(err, &ke) || ke != want {
		t.Fatalf("error %v, want %s", err, want.Message)
	}
}

func castagnoliSum(b []byte) uint32 { return crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)) }

// kmsgRecord is a record with offset and timestamp deltas i.
func kmsgRecord(i int, value []byte) kmsg.Record {
	return kmsg.Record{TimestampDelta64: int64(i), OffsetDelta: int32(i), Value: value}
}
