package broker

// DescribeProducers (key 61), version 0 (Kafka 2.8, KIP-664): the leader's
// producer state of each partition — producer id, epoch, last sequence,
// the timestamp of the last batch or marker, the coordinator epoch of the
// last marker and the first offset of the open transaction (-1 when none).

import (
	"context"
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/acl"
)

var describeProducersAPI = api{
	key: 61, min: 0, max: maxVersion(61),
	handle: func(_ context.Context, s *Server, r *request) kmsg.Response {
		req := r.body.(*kmsg.DescribeProducersRequest)
		return s.handleDescribeProducers(req, s.topicFilter(r, acl.OpRead, topicsOf(req.Topics, func(t kmsg.DescribeProducersRequestTopic) string { return t.Topic })))
	},
	errorResponse: func(req kmsg.Request, code int16) kmsg.Response {
		return describeProducersResponse(req.(*kmsg.DescribeProducersRequest), func(string, int32) kmsg.DescribeProducersResponseTopicPartition {
			rp := kmsg.NewDescribeProducersResponseTopicPartition()
			rp.ErrorCode = code
			return rp
		})
	},
}

func describeProducersResponse(req *kmsg.DescribeProducersRequest, fn func(string, int32) kmsg.DescribeProducersResponseTopicPartition) *kmsg.DescribeProducersResponse {
	resp := req.ResponseKind().(*kmsg.DescribeProducersResponse)
	for _, t := range req.Topics {
		rt := kmsg.NewDescribeProducersResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := fn(t.Topic, p)
			rp.Partition = p
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// handleDescribeProducers answers TOPIC_AUTHORIZATION_FAILED for a topic
// not in readable (nil: every topic).
func (s *Server) handleDescribeProducers(req *kmsg.DescribeProducersRequest, readable topicSet) *kmsg.DescribeProducersResponse {
	return describeProducersResponse(req, func(topic string, partition int32) kmsg.DescribeProducersResponseTopicPartition {
		rp := kmsg.NewDescribeProducersResponseTopicPartition()
		if !readable.allows(topic) {
			rp.ErrorCode = kerr.TopicAuthorizationFailed.Code
			return rp
		}
		p, _, err := s.replicas.leaderPartition(topic, partition, -1)
		if err != nil {
			rp.ErrorCode = errorCode(err)
			return rp
		}
		states := p.log.ProducerStates()
		for _, id := range slices.Sorted(maps.Keys(states)) {
			e := states[id]
			ap := kmsg.NewDescribeProducersResponseTopicPartitionActiveProducer()
			ap.ProducerID, ap.ProducerEpoch = id, int32(e.Epoch)
			ap.CoordinatorEpoch, ap.CurrentTxnStartOffset, ap.LastTimestamp = e.CoordinatorEpoch, e.CurrentTxnFirstOffset, e.LastTimestamp
			ap.LastSequence = -1
			if n := len(e.Batches); n > 0 {
				ap.LastSequence = e.Batches[n-1].LastSeq
			}
			rp.ActiveProducers = append(rp.ActiveProducers, ap)
		}
		return rp
	})
}
