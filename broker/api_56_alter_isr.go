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
	"errors"
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/acl"
	"github.com/zkafka/zkafka/controller"
	"github.com/zkafka/zkafka/kafka"
	"github.com/zkafka/zkafka/zkpaths"
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

// alterIsrWriter is the leader's side of AlterIsr: an ISR change goes to the
// active controller (found in ZooKeeper) as a one-partition AlterIsr, and the
// state the controller stored comes back. Kafka's AlterIsrManager batches and
// sends asynchronously; one change at a time, while the partition's isrMu is
// held as for the ZooKeeper write it replaces, keeps the pending ISR's rules
// the same on both paths.
type alterIsrWriter struct{ s *Server }

// alterIsrVersion is the AlterIsr version a 2.8 broker sends.
const alterIsrVersion = 0

func (w alterIsrWriter) writePartitionState(topic string, partition int32, state zkpaths.LeaderAndIsr, zkVersion int32) (int32, error) {
	s := w.s
	ctx, cancel := context.WithTimeout(s.ctx, s.cfg.ControllerSocketTimeout)
	defer cancel()
	cl, addr, err := s.dialController(ctx)
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	req := kmsg.NewPtrAlterPartitionRequest()
	req.BrokerID, req.BrokerEpoch = s.brokerID, s.brokerEpoch.Load()
	req.Topics = []kmsg.AlterPartitionRequestTopic{{Topic: topic, Partitions: []kmsg.AlterPartitionRequestTopicPartition{{
		Partition: partition, LeaderEpoch: state.LeaderEpoch, NewISR: state.ISR, PartitionEpoch: zkVersion,
	}}}}
	raw, err := cl.RequestVersion(ctx, req, alterIsrVersion)
	if err != nil {
		return 0, fmt.Errorf("AlterIsr to %s: %w", addr, err)
	}
	resp := raw.(*kmsg.AlterPartitionResponse)
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return 0, fmt.Errorf("AlterIsr to %s: %w", addr, err)
	}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if t.Topic != topic || p.Partition != partition {
				continue
			}
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				return 0, fmt.Errorf("AlterIsr to %s: %w", addr, err)
			}
			// The stored state must be the one proposed: it is, unless another change won.
			if p.LeaderEpoch != state.LeaderEpoch || !slices.Equal(p.ISR, state.ISR) || p.PartitionEpoch < zkVersion {
				s.log.Info("Ignoring an AlterIsr answer for another state", zap.String("topic", topic), zap.Int32("partition", partition),
					zap.Int32("leader-epoch", p.LeaderEpoch), zap.Int32s("isr", p.ISR), zap.Int32("zk-version", p.PartitionEpoch))
				return 0, errors.New("the controller stored another ISR")
			}
			return p.PartitionEpoch, nil
		}
	}
	return 0, fmt.Errorf("AlterIsr to %s: no answer for %s-%d", addr, topic, partition)
}
