package broker

// OffsetForLeaderEpoch (key 23), versions 0–4 (Kafka 2.8's range), answered
// by the partition leader from its leader-epoch cache (KIP-101).
//
//	v1: the epoch the end offset belongs to (KIP-279)
//	v2: current leader epoch per partition (KIP-320), throttle time
//	v3: replica id (followers send their broker id, consumers -1)
//	v4: flexible
//
// For the requested epoch the answer is its end offset: the LEO when it is
// the leader's latest epoch, else where the next known epoch starts, paired
// with the largest epoch not above the requested one; (-1, -1) when the
// leader cannot place it.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/acl"
)

var offsetForLeaderEpochAPI = api{
	key: 23, min: 0, max: maxVersion(23),
	handle: func(_ context.Context, s *Server, r *request) kmsg.Response {
		req := r.body.(*kmsg.OffsetForLeaderEpochRequest)
		var describable topicSet
		if s.authorizer != nil && !s.authorizeCluster(r, acl.OpClusterAction) {
			describable = s.authorizeTopics(r, acl.OpDescribe, topicsOf(req.Topics, func(t kmsg.OffsetForLeaderEpochRequestTopic) string { return t.Topic }))
		}
		return s.handleOffsetForLeaderEpoch(req, describable)
	},
	errorResponse: func(req kmsg.Request, code int16) kmsg.Response {
		return offsetForLeaderEpochResponse(req.(*kmsg.OffsetForLeaderEpochRequest), func(string, kmsg.OffsetForLeaderEpochRequestTopicPartition) kmsg.OffsetForLeaderEpochResponseTopicPartition {
			rp := kmsg.NewOffsetForLeaderEpochResponseTopicPartition()
			rp.ErrorCode = code
			return rp
		})
	},
}

func offsetForLeaderEpochResponse(req *kmsg.OffsetForLeaderEpochRequest, fn func(string, kmsg.OffsetForLeaderEpochRequestTopicPartition) kmsg.OffsetForLeaderEpochResponseTopicPartition) *kmsg.OffsetForLeaderEpochResponse {
	resp := req.ResponseKind().(*kmsg.OffsetForLeaderEpochResponse)
	for _, t := range req.Topics {
		rt := kmsg.OffsetForLeaderEpochResponseTopic{Topic: t.Topic}
		for _, p := range t.Partitions {
			rp := fn(t.Topic, p)
			rp.Partition = p.Partition
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// handleOffsetForLeaderEpoch answers TOPIC_AUTHORIZATION_FAILED for a topic
// not in describable (nil: every topic). As in 2.8, a principal with
// CLUSTER_ACTION (a follower) may ask of every topic, any other needs
// DESCRIBE on each.
func (s *Server) handleOffsetForLeaderEpoch(req *kmsg.OffsetForLeaderEpochRequest, describable topicSet) *kmsg.OffsetForLeaderEpochResponse {
	return offsetForLeaderEpochResponse(req, func(topic string, rp kmsg.OffsetForLeaderEpochRequestTopicPartition) kmsg.OffsetForLeaderEpochResponseTopicPartition {
		out := kmsg.NewOffsetForLeaderEpochResponseTopicPartition()
		out.LeaderEpoch, out.EndOffset = -1, -1
		if !describable.allows(topic) {
			out.ErrorCode = kerr.TopicAuthorizationFailed.Code
			return out
		}
		current := rp.CurrentLeaderEpoch
		if req.Version < 2 {
			current = -1
		}
		p, _, err := s.replicas.leaderPartition(topic, rp.Partition, current)
		if err != nil {
			out.ErrorCode = errorCode(err)
			return out
		}
		out.LeaderEpoch, out.EndOffset = p.log.EndOffsetForEpoch(rp.LeaderEpoch)
		return out
	})
}
