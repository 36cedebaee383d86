package broker

// ListOffsets (key 2), versions 0–6 (Kafka 2.8).
//
//	v0: old-style list of offsets (max_num_offsets)
//	v1: a single offset and its timestamp
//	v2: isolation level
//	v3: same as v2
//	v4: current leader epoch in the request, leader epoch in the response
//	v5: same as v4
//	v6: flexible
//
// Timestamp -1 is the latest offset: the high watermark for consumers, the
// last stable offset for read_committed ones (isolation level 1, v2+), the
// log end offset for a replica. -2 is the earliest (log start offset). Any
// other value finds the first offset whose timestamp is at least it, below
// the consumer's latest offset (UNSUPPORTED_FOR_MESSAGE_FORMAT in a topic
// whose message.format.version stores v0 messages, which have no
// timestamps). Replica
// id -2, Kafka's debugging consumer, may ask any replica, not only the
// leader: that shows each replica's log end offset.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/acl"
	"github.com/zkafka/zkafka/storage"
	"github.com/zkafka/zkafka/wire"
)

var listOffsetsAPI = api{
	key: 2, min: 0, max: maxVersion(2),
	handle: func(_ context.Context, s *Server, r *request) kmsg.Response {
		req := r.body.(*kmsg.ListOffsetsRequest)
		return s.handleListOffsets(req, s.topicFilter(r, acl.OpDescribe, topicsOf(req.Topics, func(t kmsg.ListOffsetsRequestTopic) string { return t.Topic })))
	},
	errorResponse: func(req kmsg.Request, code int16) kmsg.Response {
		return listOffsetsResponse(req.(*kmsg.ListOffsetsRequest), func(string, kmsg.ListOffsetsRequestTopicPartition) kmsg.ListOffsetsResponseTopicPartition {
			rp := kmsg.NewListOffsetsResponseTopicPartition()
			rp.ErrorCode = code
			return rp
		})
	},
}

func listOffsetsResponse(req *kmsg.ListOffsetsRequest, fn func(string, kmsg.ListOffsetsRequestTopicPartition) kmsg.ListOffsetsResponseTopicPartition) *kmsg.ListOffsetsResponse {
	resp := req.ResponseKind().(*kmsg.ListOffsetsResponse)
	for _, t := range req.Topics {
		rt := kmsg.ListOffsetsResponseTopic{Topic: t.Topic}
		for _, p := range t.Partitions {
			rp := fn(t.Topic, p)
			rp.Partition = p.Partition
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// handleListOffsets answers TOPIC_AUTHORIZATION_FAILED for a topic not in
// describable (nil: every topic).
func (s *Server) handleListOffsets(req *kmsg.ListOffsetsRequest, describable topicSet) *kmsg.ListOffsetsResponse {
	return listOffsetsResponse(req, func(topic string, lp kmsg.ListOffsetsRequestTopicPartition) kmsg.ListOffsetsResponseTopicPartition {
		rp := kmsg.NewListOffsetsResponseTopicPartition()
		rp.Timestamp, rp.Offset = -1, -1
		if !describable.allows(topic) {
			rp.ErrorCode = kerr.TopicAuthorizationFailed.Code
			return rp
		}
		p, epoch, err := s.replicas.listOffsetsPartition(req.ReplicaID, topic, lp.Partition, lp.CurrentLeaderEpoch)
		if err != nil {
			rp.ErrorCode = errorCode(err)
			return rp
		}
		rp.LeaderEpoch = epoch
		fetchable := p.HighWatermark()
		if req.IsolationLevel == 1 {
			fetchable = p.log.LastStableOffset()
		}
		switch lp.Timestamp {
		case storage.LatestTimestamp:
			rp.Offset = fetchable
			if req.ReplicaID != consumerReplicaID {
				rp.Offset = p.log.LogEndOffset()
			}
		case storage.EarliestTimestamp:
			rp.Offset = p.log.LogStartOffset()
		default:
			if lp.Timestamp < 0 {
				rp.ErrorCode = kerr.UnsupportedVersion.Code
				return rp
			}
			if req.Version > 0 && p.log.Config().MessageFormat == wire.MagicV0 {
				// v0 messages have no timestamps (Kafka's Log.fetchOffsetByTimestamp).
				rp.ErrorCode = kerr.UnsupportedForMessageFormat.Code
				return rp
			}
			offset, ts, ok := p.log.FetchOffsetByTimestamp(lp.Timestamp)
			if ok && offset < fetchable {
				rp.Offset, rp.Timestamp = offset, ts
			}
		}
		if req.Version == 0 {
			if rp.Offset >= 0 && lp.MaxNumOffsets > 0 {
				rp.OldStyleOffsets = []int64{rp.Offset}
			}
		}
		return rp
	})
}
