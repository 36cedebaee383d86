package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"reflect"
	"slices"
	"testing"
)

// FuzzBatches reads arbitrary bytes as a fetch response. Whatever the input, the reader must not panic,
// must report framing problems as a *BatchError at the position where the batches stop, and every batch
// it frames must lie inside the data; a batch whose CRC and records check out must survive a rewrite
// with AppendBatch (a v0 or v1 message: AppendLegacy) with the same header fields and records. With fixCRCs set, the CRC of each framed
// batch is made valid first, so that the fuzzer reaches the rewrite.
func FuzzBatches(f *testing.F) {
	for codec := CodecNone; codec <= CodecZstd; codec++ {
		b := AppendBatch(nil, testHeader(codec), testRecords())
		f.Add(b, false)
		f.Add(b[:len(b)-3], false)
	}
	two := AppendBatch(nil, BatchHeader{Attributes: AttrControl, ProducerID: -1}, []Record{{Key: []byte{0, 0, 0, 0}}})
	two = AppendBatch(two, BatchHeader{BaseOffset: 1, ProducerID: -1}, nil)
	f.Add(two, true)
	f.Add([]byte{}, false)
	f.Add(make([]byte, 30), false)
	for _, magic := range []int8{MagicV0, MagicV1} {
		msgs := []LegacyMessage{{Offset: 3, Timestamp: 9, Key: []byte("k"), Value: []byte("v")}, {Offset: 4, Timestamp: 7}}
		f.Add(AppendLegacy(nil, magic, CodecNone, false, msgs), false)
		f.Add(AppendLegacy(nil, magic, CodecGzip, true, msgs), false)
		f.Add(AppendLegacy(nil, magic, CodecLZ4, false, msgs), true)
	}

	f.Fuzz(func(t *testing.T, data []byte, fixCRCs bool) {
		data = slices.Clone(data)
		end := 0
		for b, err := range Batches(data) {
			if err != nil {
				var be *BatchError
				if !errors.As(err, &be) || be.Pos != end || be.Avail != len(data)-end {
					t.Fatalf("error %v at %d, batches ended at %d", err, be.Pos, end)
				}
				return
			}
			if b.Pos != end || b.Size() != int64(len(b.Raw)) || b.Pos+len(b.Raw) > len(data) {
				t.Fatalf("batch at %d of %d bytes after %d", b.Pos, len(b.Raw), end)
			}
			end += len(b.Raw)
			if fixCRCs && b.Magic < MagicV2 {
				b.CRC = crc32.ChecksumIEEE(b.Raw[PosMagic:])
				binary.BigEndian.PutUint32(b.Raw[legacyPosCRC:], b.CRC)
			} else if fixCRCs {
				b.CRC = batchCRC(b.Raw)
				binary.BigEndian.PutUint32(b.Raw[PosCRC:], b.CRC)
			}
			var recs []Record
			var recErr error
			for r, err := range b.Records() {
				if err != nil {
					recErr = err
					break
				}
				recs = append(recs, r)
			}
			if recErr != nil {
				if !errors.Is(recErr, ErrCorruptRecords) && !errors.Is(recErr, ErrUnknownCodec) {
					t.Fatalf("records error %v of no known kind", recErr)
				}
				continue
			}
			if b.VerifyCRC() != nil {
				continue
			}
			if b.Magic < MagicV2 {
				checkLegacyRewrite(t, b, recs)
				continue
			}
			b2, err := ReadBatch(AppendBatch(nil, b.BatchHeader, recs))
			if err != nil {
				t.Fatal(err)
			}
			var recs2 []Record
			for r, err := range b2.Records() {
				if err != nil {
					t.Fatalf("rewritten batch: %v", err)
				}
				recs2 = append(recs2, r)
			}
			h1, h2 := b.BatchHeader, b2.BatchHeader
			h1.Length, h1.CRC, h2.Length, h2.CRC = 0, 0, 0, 0
			if h1 != h2 || !reflect.DeepEqual(recs, recs2) || b2.VerifyCRC() != nil {
				t.Fatalf("rewrite changed the batch: %+v -> %+v", h1, h2)
			}
		}
		if end != len(data) {
			t.Fatalf("batches ended at %d of %d without an error", end, len(data))
		}
	})
}

// checkLegacyRewrite writes a legacy batch's records again with AppendLegacy, in its magic, codec and
// timestamp type, and reads back the same offsets, timestamps, keys and values.
func checkLegacyRewrite(t *testing.T, b Batch, recs []Record) {
	t.Helper()
	describe := func(b Batch, r Record) string {
		return fmt.Sprintf("%d@%d:%q=%q", b.RecordOffset(r), b.RecordTimestamp(r), r.Key, r.Value)
	}
	var want, got []string
	msgs := make([]LegacyMessage, len(recs))
	for i, r := range recs {
		want = append(want, describe(b, r))
		msgs[i] = LegacyMessage{Offset: b.RecordOffset(r), Timestamp: b.RecordTimestamp(r), Key: r.Key, Value: r.Value}
	}
	for b2, err := range Batches(AppendLegacy(nil, b.Magic, b.Attributes.Codec(), b.Attributes.LogAppendTime(), msgs)) {
		if err != nil {
			t.Fatalf("rewritten message: %v", err)
		}
		if b2.Magic != b.Magic || b2.VerifyCRC() != nil {
			t.Fatalf("rewritten message: %+v", b2.BatchHeader)
		}
		for r, err := range b2.Records() {
			if err != nil {
				t.Fatalf("rewritten message: %v", err)
			}
			got = append(got, describe(b2, r))
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("rewrite changed the records: %v -> %v", want, got)
	}
}
