package coordinator

// The records of __consumer_offsets in Kafka 2.8's schemas
// (GroupMetadataManager): keys start with an int16 version that says what
// the record is.
//
//	offset commit key v1     group, topic, partition
//	offset commit value v3   offset, leader epoch, metadata, commit timestamp
//	                         (v1, with an expire timestamp, when the client
//	                         set a retention time: OffsetCommit v2-v4)
//	group metadata key v2    group
//	group metadata value v3  protocol type, generation, protocol, leader,
//	                         state timestamp, members (id, instance id,
//	                         client id and host, timeouts, subscription,
//	                         assignment)
//
// A null value is a tombstone: the offset or the group is gone, and the
// log cleaner eventually drops the key.

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/wire"
)

// Key versions, as Kafka writes them.
const (
	offsetCommitKeyVersion  = 1
	groupMetadataKeyVersion = 2
)

// Record is one key and value of a coordinator's batch (nil value: a
// tombstone).
type Record struct {
	Key, Value []byte
}

func offsetCommitKey(group, topic string, partition int32) []byte {
	k := kmsg.OffsetCommitKey{Version: offsetCommitKeyVersion, Group: group, Topic: topic, Partition: partition}
	return k.AppendTo(nil)
}

func offsetCommitValue(o OffsetAndMetadata) []byte {
	v := kmsg.NewOffsetCommitValue()
	v.Offset, v.Metadata, v.CommitTimestamp = o.Offset, o.Metadata, o.CommitTimestamp
	if o.ExpireTimestamp >= 0 {
		v.Version, v.ExpireTimestamp = 1, o.ExpireTimestamp
	} else {
		v.Version, v.LeaderEpoch = 3, o.LeaderEpoch
	}
	return v.AppendTo(nil)
}

func groupMetadataKey(group string) []byte {
	k := kmsg.GroupMetadataKey{Version: groupMetadataKeyVersion, Group: group}
	return k.AppendTo(nil)
}

// groupMetadataValue is the group as it is stored: members with their
// subscription to the chosen protocol and the given assignment.
func groupMetadataValue(g *group, assignment map[string][]byte, now int64) []byte {
	v := kmsg.NewGroupMetadataValue()
	v.Version = 3
	v.ProtocolType = g.protocolType
	v.Generation = g.generation
	if g.protocolName != "" {
		v.Protocol = kmsg.StringPtr(g.protocolName)
	}
	if g.leaderID != "" {
		v.Leader = kmsg.StringPtr(g.leaderID)
	}
	v.CurrentStateTimestamp = now
	for _, id := range g.order {
		m := g.members[id]
		gm := kmsg.NewGroupMetadataValueMember()
		gm.MemberID, gm.ClientID, gm.ClientHost = m.id, m.clientID, m.clientHost
		if m.instanceID != "" {
			gm.InstanceID = kmsg.StringPtr(m.instanceID)
		}
		gm.RebalanceTimeoutMillis = int32(m.rebalanceTimeout.Milliseconds())
		gm.SessionTimeoutMillis = int32(m.sessionTimeout.Milliseconds())
		gm.Subscription = m.metadata(g.protocolName)
		gm.Assignment = assignment[m.id]
		if gm.Assignment == nil {
			gm.Assignment = []byte{}
		}
		v.Members = append(v.Members, gm)
	}
	return v.AppendTo(nil)
}

// EncodeBatch builds one uncompressed v2 record batch at base offset 0, as
// the group and transaction coordinators write their topics: the log
// assigns offsets and the leader epoch.
func EncodeBatch(records []Record, timestamp int64) []byte {
	return encodeProducerBatch(records, timestamp, -1, -1)
}

// encodeProducerBatch is EncodeBatch for a transactional producer's offset
// commits (TxnOffsetCommit): the batch carries the producer's id and epoch
// and the transactional attribute, and sequence 0, as Kafka writes it.
func encodeProducerBatch(records []Record, timestamp, producerID int64, producerEpoch int16) []byte {
	recs := make([]wire.Record, len(records))
	for i, r := range records {
		recs[i] = wire.Record{OffsetDelta: int32(i), Key: r.Key, Value: r.Value}
	}
	h := wire.BatchHeader{
		PartitionLeaderEpoch: -1, LastOffsetDelta: int32(len(records) - 1), FirstTimestamp: timestamp,
		MaxTimestamp: timestamp, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1,
	}
	if producerID >= 0 {
		h.ProducerID, h.ProducerEpoch, h.BaseSequence, h.Attributes = producerID, producerEpoch, 0, wire.AttrTransactional
	}
	return wire.AppendBatch(nil, h, recs)
}

// storedRecord is one record read back from the log, with its offset: a
// key and value, or the marker of a control batch.
type storedRecord struct {
	offset     int64
	key, value []byte // value nil for a tombstone
	// producerID is the batch's producer (-1 for the coordinator's own
	// records); transactional marks a TxnOffsetCommit's records.
	producerID    int64
	transactional bool
	marker        *wire.EndTxnMarker
}

// decodeBatches walks record batches as the log returns them and calls fn
// for each record and each transaction marker. It returns the offset after
// the last whole batch; bytes that do not frame a batch end the walk.
func decodeBatches(data []byte, fn func(storedRecord)) (int64, error) {
	next := int64(-1)
	for b, err := range wire.Batches(data) {
		if err != nil {
			break
		}
		next = b.LastOffset() + 1
		if b.Attributes.Control() {
			m, ok, err := b.EndTxnMarker()
			if err != nil {
				return next, fmt.Errorf("control batch at offset %d: %w", b.BaseOffset, err)
			}
			if ok {
				fn(storedRecord{offset: b.BaseOffset, producerID: b.ProducerID, marker: &m})
			}
			continue
		}
		// The coordinator writes uncompressed batches; anyone else's are
		// read all the same.
		for r, err := range b.Records() {
			if err != nil {
				return next, fmt.Errorf("batch at offset %d: %w", b.BaseOffset, err)
			}
			fn(storedRecord{offset: b.RecordOffset(r), key: r.Key, value: r.Value, producerID: b.ProducerID, transactional: b.Attributes.Transactional()})
		}
	}
	return next, nil
}
