package broker

// AlterIsr (key 56), versions 0–0 (broker → controller; KIP-497, flexible).
//
// With inter.broker.protocol.version 2.7-IV2 or later a partition leader does
// not write its ISR changes to ZooKeeper: it sends them here, to the active
// controller, which writes the state znode and answers with the leadership
// now stored (others answer NOT_CONTROLLER). Errors: STALE_BROKER_EPOCH for
// the whole request; UNKNOWN_TOPIC_OR_PARTITION, FENCED_LEADER_EPOCH and
// INVALID_UPDATE_VERSION per partition.

import (
	"context"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/acl"
	"github.com/zkafka/zkafka/controller"
	"github.com/zkafka/zkafka/kafka"
)

var alterIsrAPI = api{
	key: 56, min: 0, max: maxVersion(56),
	handle: func(ctx context.Context, s *Server, r *request) kmsg.Response {
		if resp := s.clusterDenied(r, acl.OpClusterAction); resp != nil {
			return resp
		}
		return s.handleAlterIsr(ctx, r.body.(*kmsg.AlterPartitionRequest))
	},
	errorResponse: func(req kmsg.Request, code int16) kmsg.Response {
		resp := req.ResponseKind().(*kmsg.AlterPartitionResponse)
		resp.ErrorCode = code
		return resp
	},
}

func (s *Server) handleAlterIsr(ctx context.Context, req *kmsg.AlterPartitionRequest) *kmsg.AlterPartitionResponse {
	resp := req.ResponseKind().(*kmsg.AlterPartitionResponse)
	proposals := map[kafka.TopicPartition]controller.IsrProposal{}
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			proposals[kafka.TopicPartition{Topic: t.Topic, Partition: p.Partition}] = controller.IsrProposal{
				LeaderEpoch: p.LeaderEpoch, ISR: p.NewISR, ZkVersion: p.PartitionEpoch,
			}
		}
	}
	results, err := s.controller.AlterIsr(ctx, req.BrokerID, req.BrokerEpoch, proposals)
	if err != nil {
		resp.ErrorCode = controllerErrorCode(err)
		return resp
	}
	tps := make([]kafka.TopicPartition, 0, len(results))
	for tp := range results {
		tps = append(tps, tp)
	}
	slices.SortFunc(tps, kafka.Compare)
	for _, tp := range tps {
		r := results[tp]
		if len(resp.Topics) == 0 || resp.Topics[len(resp.Topics)-1].Topic != tp.Topic {
			resp.Topics = append(resp.Topics, kmsg.AlterPartitionResponseTopic{Topic: tp.Topic})
		}
		rp := kmsg.AlterPartitionResponseTopicPartition{Partition: tp.Partition}
		if r.Err != nil {
			rp.ErrorCode = errorCode(r.Err)
		} else {
			rp.LeaderID, rp.LeaderEpoch, rp.ISR, rp.PartitionEpoch = r.Leader, r.LeaderEpoch, r.ISR, r.ZkVersion
		}
		t := &resp.Topics[len(resp.Topics)-1]
		t.Partitions = append(t.Partitions, rp)
	}
	return resp
}
