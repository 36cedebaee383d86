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
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Key versions, as Kafka writes them.
const (
	offsetCommitKeyVersion  = 1
	groupMetadataKeyVersion = 2
)

// record is one key and value (nil value: a tombstone).
type record struct {
	key, value []byte
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

// encodeBatch builds one uncompressed v2 record batch (magic 2) at base
// offset 0: the log assigns offsets and the leader epoch.
func encodeBatch(records []record, timestamp int64) []byte {
	var body []byte
	for i, r := range records {
		var rec []byte
		rec = append(rec, 0) // attributes
		rec = kbin.AppendVarlong(rec, 0)
		rec = kbin.AppendVarint(rec, int32(i))
		rec = kbin.AppendVarint(rec, int32(len(r.key)))
		rec = append(rec, r.key...)
		if r.value == nil {
			rec = kbin.AppendVarint(rec, -1)
		} else {
			rec = kbin.AppendVarint(rec, int32(len(r.value)))
			rec = append(rec, r.value...)
		}
		rec = kbin.AppendVarint(rec, 0) // headers
		body = kbin.AppendVarint(body, int32(len(rec)))
		body = append(body, rec...)
	}
	b := kmsg.RecordBatch{
		PartitionLeaderEpoch: -1, Magic: 2, LastOffsetDelta: int32(len(records) - 1),
		FirstTimestamp: timestamp, MaxTimestamp: timestamp, ProducerID: -1, ProducerEpoch: -1,
		FirstSequence: -1, NumRecords: int32(len(records)), Records: body,
	}
	out := b.AppendTo(nil)
	binary.BigEndian.PutUint32(out[8:], uint32(len(out)-12))
	crc := crc32.Checksum(out[21:], crc32.MakeTable(crc32.Castagnoli))
	binary.BigEndian.PutUint32(out[17:], crc)
	return out
}

// storedRecord is one record read back from the log, with its offset.
type storedRecord struct {
	offset     int64
	key, value []byte // value nil for a tombstone
}

// Batch attributes this reader cares about.
const (
	attrCompressionMask = 0x07
	attrTransactional   = 0x10
	attrControl         = 0x20
)

var decompressor = kgo.DefaultDecompressor()

// decodeBatches walks record batches as the log returns them and calls fn
// for each record, skipping control batches. It returns the offset after
// the last whole batch.
func decodeBatches(data []byte, fn func(storedRecord)) (next int64, err error) {
	next = -1
	for len(data) >= 12 {
		size := int(int32(binary.BigEndian.Uint32(data[8:]))) + 12
		if size < 61 || size > len(data) {
			break
		}
		var b kmsg.RecordBatch
		if err := b.ReadFrom(data[:size]); err != nil {
			return next, fmt.Errorf("decode batch: %w", err)
		}
		data = data[size:]
		next = b.FirstOffset + int64(b.LastOffsetDelta) + 1
		if b.Attributes&attrControl != 0 {
			continue
		}
		recs := b.Records
		if codec := b.Attributes & attrCompressionMask; codec != 0 {
			// The coordinator writes uncompressed batches; anyone else's
			// are read all the same.
			var err error
			if recs, err = decompressor.Decompress(recs, kgo.CompressionCodecType(codec)); err != nil {
				return next, fmt.Errorf("batch at offset %d: %w", b.FirstOffset, err)
			}
		}
		for i := int32(0); i < b.NumRecords && len(recs) > 0; i++ {
			length, n := binary.Varint(recs)
			if n <= 0 || int(length) > len(recs)-n || length < 0 {
				return next, fmt.Errorf("batch at offset %d: bad record length", b.FirstOffset)
			}
			var r kmsg.Record
			if err := r.ReadFrom(recs[:n+int(length)]); err != nil {
				return next, fmt.Errorf("batch at offset %d: %w", b.FirstOffset, err)
			}
			recs = recs[n+int(length):]
			fn(storedRecord{offset: b.FirstOffset + int64(r.OffsetDelta), key: r.Key, value: r.Value})
		}
	}
	return next, nil
}
