package wire

import (
	"encoding/binary"
	"errors"
	"reflect"
	"slices"
	"testing"
)

// FuzzBatches reads arbitrary bytes as a fetch response. Whatever the input, the reader must not panic,
// must report framing problems as a *BatchError at the position where the batches stop, and every batch
// it frames must lie inside the data; a batch whose CRC and records check out must survive a rewrite
// with AppendBatch with the same header fields and records. With fixCRCs set, the CRC of each framed
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
			if fixCRCs {
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
