package wire

import (
	"encoding/binary"
	"fmt"
)

// Control records (Kafka's ControlRecordType and EndTransactionMarker). A control batch holds one record
// whose key says what it is and whose value carries its data:
//
//	key   int16 version (0), int16 type (0 ABORT, 1 COMMIT)
//	value int16 version (0), int32 coordinator epoch
//
// The transaction coordinator has partition leaders write one such batch per partition of a transaction
// when it ends (WriteTxnMarkers); it carries the transaction's producer id and epoch in its header, with
// the transactional and control attributes set and no sequence.

// Control record types.
const (
	ControlAbort  int16 = 0
	ControlCommit int16 = 1
)

const (
	controlKeySize   = 4
	endTxnMarkerSize = 6
)

// EndTxnMarker is the record of a COMMIT or ABORT control batch.
type EndTxnMarker struct {
	Commit           bool
	CoordinatorEpoch int32
}

func (m EndTxnMarker) String() string {
	if m.Commit {
		return "COMMIT"
	}
	return "ABORT"
}

// AppendEndTxnMarkerBatch appends the control batch that ends a producer's transaction in one partition, at
// base offset 0 (the log assigns it), with timestamp ts.
func AppendEndTxnMarkerBatch(dst []byte, producerID int64, producerEpoch int16, ts int64, m EndTxnMarker) []byte {
	typ := ControlAbort
	if m.Commit {
		typ = ControlCommit
	}
	key := binary.BigEndian.AppendUint16(make([]byte, 0, controlKeySize), 0)
	key = binary.BigEndian.AppendUint16(key, uint16(typ))
	value := binary.BigEndian.AppendUint16(make([]byte, 0, endTxnMarkerSize), 0)
	value = binary.BigEndian.AppendUint32(value, uint32(m.CoordinatorEpoch))
	h := BatchHeader{
		PartitionLeaderEpoch: -1, Attributes: AttrTransactional | AttrControl, FirstTimestamp: ts, MaxTimestamp: ts,
		ProducerID: producerID, ProducerEpoch: producerEpoch, BaseSequence: -1,
	}
	return AppendBatch(dst, h, []Record{{Key: key, Value: value}})
}

// ParseEndTxnMarker reads the record of a control batch as Kafka's EndTransactionMarker.deserialize: the
// key's type must be ABORT or COMMIT and the value must hold at least a version and an epoch (a later
// version may add fields). Errors unwrap to ErrCorruptRecords.
func ParseEndTxnMarker(r Record) (EndTxnMarker, error) {
	if len(r.Key) < controlKeySize {
		return EndTxnMarker{}, formatErrorf(ErrCorruptRecords, "control record key has %d bytes", len(r.Key))
	}
	var m EndTxnMarker
	switch typ := int16(binary.BigEndian.Uint16(r.Key[2:])); typ {
	case ControlAbort:
	case ControlCommit:
		m.Commit = true
	default:
		return EndTxnMarker{}, formatErrorf(ErrCorruptRecords, "control record type %d is not a transaction marker", typ)
	}
	if len(r.Value) < endTxnMarkerSize {
		return EndTxnMarker{}, formatErrorf(ErrCorruptRecords, "transaction marker value has %d bytes", len(r.Value))
	}
	m.CoordinatorEpoch = int32(binary.BigEndian.Uint32(r.Value[2:]))
	return m, nil
}

// EndTxnMarker returns the marker of a control batch: its one record parsed by ParseEndTxnMarker. ok is
// false for a control batch without records (the cleaner removed it).
func (b Batch) EndTxnMarker() (m EndTxnMarker, ok bool, err error) {
	if !b.Attributes.Control() {
		return EndTxnMarker{}, false, fmt.Errorf("batch at offset %d is not a control batch", b.BaseOffset)
	}
	for r, err := range b.Records() {
		if err != nil {
			return EndTxnMarker{}, false, err
		}
		m, err := ParseEndTxnMarker(r)
		return m, err == nil, err
	}
	return EndTxnMarker{}, false, nil
}
