package wire

import (
	"bytes"
	"encoding/hex"
	"errors"
	"testing"
)

// TestEndTxnMarkerBatchLayout checks the control batch against the bytes Kafka's
// MemoryRecords.withEndTransactionMarker writes: the header's producer fields and attributes, and one record
// whose key is version 0 and type 1 (COMMIT) and whose value is version 0 and the coordinator epoch.
func TestEndTxnMarkerBatchLayout(t *testing.T) {
	data := AppendEndTxnMarkerBatch(nil, 4000, 3, 1614697556567, EndTxnMarker{Commit: true, CoordinatorEpoch: 5})
	b, err := ReadBatch(data)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.VerifyCRC(); err != nil {
		t.Fatal(err)
	}
	if b.ProducerID != 4000 || b.ProducerEpoch != 3 || b.BaseSequence != -1 || b.RecordCount != 1 || b.LastOffsetDelta != 0 {
		t.Fatalf("header %+v", b.BatchHeader)
	}
	if !b.Attributes.Control() || !b.Attributes.Transactional() || b.Attributes.Codec() != CodecNone {
		t.Fatalf("attributes %#x", b.Attributes)
	}
	// The record after the header: length 16, attributes 0, timestamp delta 0, offset delta 0, key of 4
	// bytes, value of 6 bytes, no headers (varints zig-zag encoded).
	want, _ := hex.DecodeString("20" + "00" + "00" + "00" + "08" + "00000001" + "0c" + "000000000005" + "00")
	if got := b.Raw[BatchHeaderSize:]; !bytes.Equal(got, want) {
		t.Fatalf("record bytes %x, want %x", got, want)
	}
	m, ok, err := b.EndTxnMarker()
	if err != nil || !ok || m != (EndTxnMarker{Commit: true, CoordinatorEpoch: 5}) {
		t.Fatalf("marker %+v %v %v", m, ok, err)
	}
	abort, _ := ReadBatch(AppendEndTxnMarkerBatch(nil, 1, 0, 0, EndTxnMarker{CoordinatorEpoch: 7}))
	if m, _, _ := abort.EndTxnMarker(); m.Commit || m.CoordinatorEpoch != 7 || m.String() != "ABORT" {
		t.Fatalf("abort marker %+v", m)
	}
}

func TestParseEndTxnMarkerRejectsOtherRecords(t *testing.T) {
	for name, r := range map[string]Record{
		"short key":    {Key: []byte{0, 0, 0}, Value: make([]byte, 6)},
		"unknown type": {Key: []byte{0, 0, 0, 9}, Value: make([]byte, 6)},
		"short value":  {Key: []byte{0, 0, 0, 1}, Value: []byte{0, 0, 0}},
	} {
		if _, err := ParseEndTxnMarker(r); !errors.Is(err, ErrCorruptRecords) {
			t.Errorf("%s: err %v, want ErrCorruptRecords", name, err)
		}
	}
	data := AppendBatch(nil, BatchHeader{ProducerID: -1, BaseSequence: -1}, []Record{{Value: []byte("x")}})
	b, _ := ReadBatch(data)
	if _, _, err := b.EndTxnMarker(); err == nil {
		t.Fatal("a data batch read as a marker")
	}
}
