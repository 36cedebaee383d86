package broker

// DescribeProducers (key 61), version 0 (Kafka 2.8, KIP-664): the leader's
// idempotent-producer state of each partition — producer id, epoch, last
// sequence and the timestamp of the last batch. There are no transactions, so
// the coordinator epoch and the transaction start offset are always -1.

import (
	"context"
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"
)

var describeProducersAPI = api{
	key: 61, min: 0, max: maxVersion(61),
	handle: func(_ context.Context, s *Server, r *request) kmsg.Response {
		return s.handleDescribeProducers(r.body.(*kmsg.DescribeProducersRequest))
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

func (s *Server) handleDescribeProducers(req *kmsg.DescribeProducersRequest) *kmsg.DescribeProducersResponse {
	return describeProducersResponse(req, func(topic string, partition int32) kmsg.DescribeProducersResponseTopicPartition {
		rp := kmsg.NewDescribeProducersResponseTopicPartition()
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
			ap.CoordinatorEpoch, ap.CurrentTxnStartOffset = -1, -1
			if n := len(e.Batches); n > 0 {
				ap.LastSequence, ap.LastTimestamp = e.Batches[n-1].LastSeq, e.Batches[n-1].MaxTimestamp
			}
			rp.ActiveProducers = append(rp.ActiveProducers, ap)
		}
		return rp
	})
}
