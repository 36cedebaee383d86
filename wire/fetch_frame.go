package wire

import (
	"encoding/binary"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Gap is where a partition's records belong in a frame that AppendFetchResponseFrame left them out of:
// at byte At of the frame, Len bytes, for Topics[Topic].Partitions[Partition] of the response.
type Gap struct {
	At, Len          int
	Topic, Partition int
}

// AppendFetchResponseFrame appends the size-prefixed frame of a Fetch response, byte for byte what
// AppendResponse writes, except that the records of each partition for which external returns n >= 0
// are left out: their length prefix says n bytes, the frame's size counts them, and the Gap says where
// the caller must send them (in order, between the frame's bytes). This is how a Fetch response's
// records go from a segment file to the socket without passing through memory (Kafka's
// FileRecords.writeTo); other partitions' RecordBatches are appended as usual.
//
// Unknown tagged fields are not written: the broker never sets them.
func AppendFetchResponseFrame(dst []byte, h RequestHeader, resp *kmsg.FetchResponse, external func(topic, partition int) int) ([]byte, []Gap) {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	dst = binary.BigEndian.AppendUint32(dst, uint32(h.CorrelationID))
	version := resp.Version
	flexible := version >= 12
	if flexible {
		dst = append(dst, 0)
	}
	if version >= 1 {
		dst = kbin.AppendInt32(dst, resp.ThrottleMillis)
	}
	if version >= 7 {
		dst = kbin.AppendInt16(dst, resp.ErrorCode)
		dst = kbin.AppendInt32(dst, resp.SessionID)
	}
	var gaps []Gap
	external0 := 0
	dst = appendArrayLen(dst, len(resp.Topics), flexible)
	for ti := range resp.Topics {
		t := &resp.Topics[ti]
		if flexible {
			dst = kbin.AppendCompactString(dst, t.Topic)
		} else {
			dst = kbin.AppendString(dst, t.Topic)
		}
		dst = appendArrayLen(dst, len(t.Partitions), flexible)
		for pi := range t.Partitions {
			p := &t.Partitions[pi]
			dst = kbin.AppendInt32(dst, p.Partition)
			dst = kbin.AppendInt16(dst, p.ErrorCode)
			dst = kbin.AppendInt64(dst, p.HighWatermark)
			if version >= 4 {
				dst = kbin.AppendInt64(dst, p.LastStableOffset)
			}
			if version >= 5 {
				dst = kbin.AppendInt64(dst, p.LogStartOffset)
			}
			if version >= 4 {
				aborted := p.AbortedTransactions
				if flexible {
					dst = kbin.AppendCompactNullableArrayLen(dst, len(aborted), aborted == nil)
				} else {
					dst = kbin.AppendNullableArrayLen(dst, len(aborted), aborted == nil)
				}
				for _, a := range aborted {
					dst = kbin.AppendInt64(dst, a.ProducerID)
					dst = kbin.AppendInt64(dst, a.FirstOffset)
					if flexible {
						dst = append(dst, 0)
					}
				}
			}
			if version >= 11 {
				dst = kbin.AppendInt32(dst, p.PreferredReadReplica)
			}
			if n := external(ti, pi); n >= 0 {
				if flexible {
					dst = kbin.AppendUvarint(dst, uint32(n)+1)
				} else {
					dst = kbin.AppendInt32(dst, int32(n))
				}
				gaps = append(gaps, Gap{At: len(dst) - start, Len: n, Topic: ti, Partition: pi})
				external0 += n
			} else if flexible {
				dst = kbin.AppendCompactNullableBytes(dst, p.RecordBatches)
			} else {
				dst = kbin.AppendNullableBytes(dst, p.RecordBatches)
			}
			if flexible {
				dst = appendPartitionTags(dst, p)
			}
		}
		if flexible {
			dst = append(dst, 0)
		}
	}
	if flexible {
		dst = append(dst, 0)
	}
	binary.BigEndian.PutUint32(dst[start:], uint32(len(dst)-start-4+external0))
	return dst, gaps
}

func appendArrayLen(dst []byte, n int, flexible bool) []byte {
	if flexible {
		return kbin.AppendCompactArrayLen(dst, n)
	}
	return kbin.AppendArrayLen(dst, n)
}

// appendPartitionTags writes a v12+ partition's tagged fields as kmsg does: the diverging epoch (tag 0),
// current leader (1) and snapshot id (2), each only when it differs from its default.
func appendPartitionTags(dst []byte, p *kmsg.FetchResponseTopicPartition) []byte {
	diverging := p.DivergingEpoch.Epoch != -1 || p.DivergingEpoch.EndOffset != -1
	leader := p.CurrentLeader.LeaderID != -1 || p.CurrentLeader.LeaderEpoch != -1
	snapshot := p.SnapshotID.EndOffset != -1 || p.SnapshotID.Epoch != -1
	n := 0
	for _, set := range []bool{diverging, leader, snapshot} {
		if set {
			n++
		}
	}
	dst = kbin.AppendUvarint(dst, uint32(n))
	// Each tag's value is a struct of fixed fields and an empty tag section: its size is known.
	if diverging {
		dst = append(dst, 0, 4+8+1)
		dst = kbin.AppendInt32(dst, p.DivergingEpoch.Epoch)
		dst = kbin.AppendInt64(dst, p.DivergingEpoch.EndOffset)
		dst = append(dst, 0)
	}
	if leader {
		dst = append(dst, 1, 4+4+1)
		dst = kbin.AppendInt32(dst, p.CurrentLeader.LeaderID)
		dst = kbin.AppendInt32(dst, p.CurrentLeader.LeaderEpoch)
		dst = append(dst, 0)
	}
	if snapshot {
		dst = append(dst, 2, 8+4+1)
		dst = kbin.AppendInt64(dst, p.SnapshotID.EndOffset)
		dst = kbin.AppendInt32(dst, p.SnapshotID.Epoch)
		dst = append(dst, 0)
	}
	return dst
}
