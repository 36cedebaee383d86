package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// testRecords has a null key, a tombstone, an empty value and headers with a null value.
func testRecords() []Record {
	return []Record{
		{TimestampDelta: 0, OffsetDelta: 0, Key: []byte("k1"), Value: []byte("hello")},
		{TimestampDelta: 5, OffsetDelta: 1, Value: bytes.Repeat([]byte("squeezed "), 40),
			Headers: []Header{{Key: "h1", Value: []byte("v")}, {Key: "h2"}, {Key: "", Value: []byte{}}}},
		{TimestampDelta: -3, OffsetDelta: 3, Key: []byte("k3")},
		{TimestampDelta: 1 << 40, OffsetDelta: 4, Key: []byte{}, Value: []byte{}},
	}
}

func testHeader(codec Codec) BatchHeader {
	return BatchHeader{
		BaseOffset: 100, PartitionLeaderEpoch: 7, Attributes: Attributes(codec), LastOffsetDelta: 4,
		FirstTimestamp: 1614697556567, MaxTimestamp: 1614697556572, ProducerID: 9, ProducerEpoch: 2, BaseSequence: 11,
	}
}

// readAll reads every batch and record of data, failing on any error.
func readAll(t testing.TB, data []byte) ([]Batch, [][]Record) {
	t.Helper()
	var batches []Batch
	var recs [][]Record
	for b, err := range Batches(data) {
		if err != nil {
			t.Fatalf("batch: %v", err)
		}
		if err := b.VerifyCRC(); err != nil {
			t.Fatalf("batch at %d: %v", b.Pos, err)
		}
		var rs []Record
		for r, err := range b.Records() {
			if err != nil {
				t.Fatalf("batch at %d: %v", b.Pos, err)
			}
			rs = append(rs, r)
		}
		batches, recs = append(batches, b), append(recs, rs)
	}
	return batches, recs
}

// TestCodecRoundTrip writes a batch in every codec, reads it back, and checks that franz-go (another
// implementation of the format) reads the same batch and that we read franz-go's compression.
func TestCodecRoundTrip(t *testing.T) {
	for codec := CodecNone; codec <= CodecZstd; codec++ {
		t.Run(codec.String(), func(t *testing.T) {
			h := testHeader(codec)
			raw := AppendBatch([]byte("prefix"), h, testRecords())[len("prefix"):]
			batches, recs := readAll(t, raw)
			if len(batches) != 1 || len(batches[0].Raw) != len(raw) {
				t.Fatalf("read %d batches", len(batches))
			}
			got := batches[0].BatchHeader
			want := h
			want.Magic, want.Length, want.RecordCount, want.CRC = MagicV2, int32(len(raw)-LogOverhead), 4, got.CRC
			if got != want {
				t.Fatalf("header %+v, want %+v", got, want)
			}
			if got.Attributes.Codec() != codec {
				t.Fatalf("codec %v, want %v", got.Attributes.Codec(), codec)
			}
			if !reflect.DeepEqual(recs[0], testRecords()) {
				t.Fatalf("records %+v\nwant %+v", recs[0], testRecords())
			}

			var kb kmsg.RecordBatch
			if err := kb.ReadFrom(raw); err != nil {
				t.Fatal(err)
			}
			if uint32(kb.CRC) != got.CRC || kb.NumRecords != 4 || kb.FirstOffset != 100 || kb.ProducerID != 9 {
				t.Fatalf("franz-go reads %+v", kb)
			}
			plain, err := kgo.DefaultDecompressor().Decompress(kb.Records, kgo.CompressionCodecType(codec))
			if err != nil {
				t.Fatalf("franz-go decompress: %v", err)
			}
			var ours []byte
			for _, r := range testRecords() {
				ours = appendRecord(ours, r)
			}
			if !bytes.Equal(plain, ours) {
				t.Fatal("franz-go decompresses other records")
			}

			if codec == CodecNone {
				return
			}
			comp, err := kgo.DefaultCompressor(map[Codec]kgo.CompressionCodec{
				CodecGzip: kgo.GzipCompression(), CodecSnappy: kgo.SnappyCompression(),
				CodecLZ4: kgo.Lz4Compression(), CodecZstd: kgo.ZstdCompression(),
			}[codec])
			if err != nil {
				t.Fatal(err)
			}
			theirs, _ := comp.Compress(new(bytes.Buffer), ours)
			back, err := codec.decompress(theirs)
			if err != nil || !bytes.Equal(back, ours) {
				t.Fatalf("decompress franz-go's %v: %v", codec, err)
			}
		})
	}
}

// TestSnappyXerial reads the framing the Java client's snappy-java writes: a header and length-prefixed
// blocks.
func TestSnappyXerial(t *testing.T) {
	a, b := []byte("first block "), []byte("second block")
	framed := append(slices.Clone(xerialMagic), 0, 0, 0, 1, 0, 0, 0, 1)
	for _, block := range [][]byte{a, b} {
		enc := snappyCompress(block)
		framed = binary.BigEndian.AppendUint32(framed, uint32(len(enc)))
		framed = append(framed, enc...)
	}
	got, err := CodecSnappy.decompress(framed)
	if err != nil || string(got) != "first block second block" {
		t.Fatalf("xerial: %q, %v", got, err)
	}
	if _, err := CodecSnappy.decompress(framed[:len(framed)-2]); !errors.Is(err, ErrCorruptRecords) {
		t.Fatalf("cut xerial block: %v", err)
	}
}

func TestUnknownCodec(t *testing.T) {
	func() {
		defer func() {
			if recover() == nil {
				t.Error("writing with codec 5 did not panic")
			}
		}()
		AppendBatch(nil, BatchHeader{Attributes: 5}, testRecords())
	}()
	raw := AppendBatch(nil, testHeader(CodecNone), testRecords())
	raw[PosAttributes+1] |= 6
	b, err := ReadBatch(raw)
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range b.Records() {
		if !errors.Is(err, ErrUnknownCodec) || err.Error() != "batch has unknown compression codec 6" {
			t.Fatalf("read with codec 6: %v", err)
		}
		return
	}
	t.Fatal("no error for codec 6")
}

func TestCRCMismatch(t *testing.T) {
	raw := AppendBatch(nil, testHeader(CodecGzip), testRecords())
	b, err := ReadBatch(raw)
	if err != nil || b.VerifyCRC() != nil {
		t.Fatalf("intact batch: %v %v", err, b.VerifyCRC())
	}
	// The base offset and leader epoch are outside the CRC: a leader rewrites them.
	SetBaseOffset(raw, 5000)
	SetPartitionLeaderEpoch(raw, 3)
	if b, _ = ReadBatch(raw); b.VerifyCRC() != nil || b.BaseOffset != 5000 || b.PartitionLeaderEpoch != 3 {
		t.Fatalf("after assigning offset and epoch: %+v %v", b.BatchHeader, b.VerifyCRC())
	}
	for _, pos := range []int{PosAttributes + 1, PosLastOffsetDelta, PosRecordCount + 3, len(raw) - 1} {
		bad := slices.Clone(raw)
		bad[pos] ^= 0x40
		b, err := ReadBatch(bad)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.VerifyCRC(); !errors.Is(err, ErrCRCMismatch) {
			t.Errorf("byte %d flipped: %v", pos, err)
		}
	}
}

// TestTruncatedFetch: a fetch response ends with part of a batch when the next one does not fit; a
// client reads the whole ones and stops there.
func TestTruncatedFetch(t *testing.T) {
	first := AppendBatch(nil, testHeader(CodecNone), testRecords())
	second := AppendBatch(nil, testHeader(CodecLZ4), testRecords()[:1])
	data := append(slices.Clone(first), second...)
	for _, cut := range []int{1, LogOverhead - 1, LogOverhead, PosMagic + 1, BatchHeaderSize, len(second) - 1} {
		var got []int
		var stop error
		for b, err := range Batches(data[:len(first)+cut]) {
			if err != nil {
				stop = err
				break
			}
			got = append(got, b.Pos)
		}
		var be *BatchError
		if !slices.Equal(got, []int{0}) || !errors.Is(stop, ErrTruncatedBatch) || !errors.As(stop, &be) ||
			be.Pos != len(first) || be.Avail != cut {
			t.Errorf("cut %d into the second batch: batches at %v, then %v", cut, got, stop)
		}
	}
	if _, recs := readAll(t, data); len(recs) != 2 || len(recs[1]) != 1 {
		t.Fatalf("whole data: %d batches", len(recs))
	}
	for range Batches(nil) {
		t.Fatal("a batch in no data")
	}
}

// TestFraming: lengths below a format's minimum, unknown magic bytes and data that ends inside a batch
// are told apart, in Kafka's order.
func TestFraming(t *testing.T) {
	good := AppendBatch(nil, testHeader(CodecNone), testRecords())
	withLength := func(n int32, magic byte) []byte {
		b := slices.Clone(good)
		binary.BigEndian.PutUint32(b[PosLength:], uint32(n))
		b[PosMagic] = magic
		return b
	}
	for _, tc := range []struct {
		name string
		data []byte
		want error
		msg  string
	}{
		{"length below any format", withLength(13, 1), ErrBatchLength, "batch at position 0 has length 13, below the minimum 49"},
		{"magic 3", withLength(int32(len(good)-LogOverhead), 3), ErrUnsupportedMagic, "batch at position 0 has magic 3, which no message format has"},
		{"negative magic", withLength(20, 0xff), ErrUnsupportedMagic, "batch at position 0 has magic -1, which no message format has"},
		{"v1 below its minimum", withLength(21, 1), ErrBatchLength, "batch at position 0 has length 21, below the minimum 22"},
		{"v1 claims more", withLength(int32(len(good)), 1), ErrTruncatedBatch,
			fmt.Sprintf("batch at position 0 claims %d bytes but only %d remain", len(good)+LogOverhead, len(good))},
		{"v2 below the header", withLength(48, 2), ErrBatchLength, "batch at position 0 has length 48, below the minimum 49"},
		{"claims more", withLength(int32(len(good)), 2), ErrTruncatedBatch,
			fmt.Sprintf("batch at position 0 claims %d bytes but only %d remain", len(good)+LogOverhead, len(good))},
		{"negative length", withLength(-1, 2), ErrBatchLength, "batch at position 0 has length -1, below the minimum 49"},
		{"a few bytes", good[:5], ErrTruncatedBatch, "5 trailing bytes at position 0 are too short for a batch"},
	} {
		_, err := ReadBatch(tc.data)
		if !errors.Is(err, tc.want) || err.Error() != tc.msg {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.msg)
		}
	}
}

func TestControlAndTransactionalBatches(t *testing.T) {
	// An end-transaction marker: key version 0 and type 1 (COMMIT), value version 0 and coordinator epoch.
	marker := Record{Key: []byte{0, 0, 0, 1}, Value: []byte{0, 0, 0, 0, 0, 5}}
	h := testHeader(CodecNone)
	h.Attributes = AttrControl | AttrTransactional
	h.LastOffsetDelta = 0
	data := AppendBatch(nil, testHeader(CodecNone), testRecords())
	data = AppendBatch(data, h, []Record{marker})
	batches, recs := readAll(t, data)
	if len(batches) != 2 || batches[0].Attributes.Control() || batches[0].Attributes.Transactional() {
		t.Fatalf("data batch read as control: %+v", batches[0].BatchHeader)
	}
	if c := batches[1].Attributes; !c.Control() || !c.Transactional() || c.LogAppendTime() || c.Codec() != CodecNone {
		t.Fatalf("control batch attributes %#x", c)
	}
	if !reflect.DeepEqual(recs[1], []Record{marker}) {
		t.Fatalf("control record %+v", recs[1])
	}
}

func TestRecordOffsetsAndTimestamps(t *testing.T) {
	h := testHeader(CodecNone)
	r := Record{TimestampDelta: 3, OffsetDelta: 2}
	if h.RecordOffset(r) != 102 || h.RecordTimestamp(r) != h.FirstTimestamp+3 {
		t.Fatalf("CreateTime record at %d, %d", h.RecordOffset(r), h.RecordTimestamp(r))
	}
	h.Attributes |= AttrLogAppendTime
	if h.RecordTimestamp(r) != h.MaxTimestamp {
		t.Fatalf("LogAppendTime record at %d, want the batch's max %d", h.RecordTimestamp(r), h.MaxTimestamp)
	}
	for _, tc := range []struct{ base, delta, want int32 }{
		{-1, 3, -1}, {0, 3, 3}, {2147483646, 1, 2147483647}, {2147483646, 2, 0}, {2147483647, 5, 4},
	} {
		h := BatchHeader{BaseSequence: tc.base, LastOffsetDelta: tc.delta}
		if got := h.LastSequence(); got != tc.want {
			t.Errorf("base sequence %d + %d = %d, want %d", tc.base, tc.delta, got, tc.want)
		}
	}
}

// TestMalformedRecords: records are read as strictly as Kafka's DefaultRecord reads them.
func TestMalformedRecords(t *testing.T) {
	rec := appendRecord(nil, Record{Key: []byte("k"), Value: []byte("v"), Headers: []Header{{Key: "h"}}})
	batchOf := func(count int32, records []byte) Batch {
		raw := appendBatchHeader(nil, BatchHeader{Length: int32(MinBatchLength + len(records)), Magic: MagicV2, RecordCount: count})
		b, err := ReadBatch(append(raw, records...))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	// Length 8, attributes and deltas 0, null key and value, one header with a null key (zig-zag -1 is 1).
	nullHeaderKey := []byte{16, 0, 0, 0, 1, 1, 2, 1, 1}
	longer := slices.Clone(rec)
	longer[0] += 2 // the record claims one byte more (zig-zag)
	for _, tc := range []struct {
		name string
		b    Batch
		msg  string
	}{
		{"fewer records than counted", batchOf(2, rec), "record 1 has an invalid length"},
		{"more bytes than records", batchOf(1, append(slices.Clone(rec), 0)), "1 bytes follow the batch's 1 records"},
		{"null header key", batchOf(1, nullHeaderKey), "record 0: malformed record"},
		{"bytes left in a record", batchOf(1, append(longer, 0)), "record 0: 1 bytes left over inside the record"},
		{"negative count", batchOf(-1, nil), "batch reports -1 records"},
	} {
		var got error
		for _, err := range tc.b.Records() {
			got = err
		}
		if !errors.Is(got, ErrCorruptRecords) || got.Error() != tc.msg {
			t.Errorf("%s: %v, want %q", tc.name, got, tc.msg)
		}
	}
	// Stopping early reads no further.
	for range batchOf(2, rec).Records() {
		break
	}
}
