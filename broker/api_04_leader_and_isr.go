package broker

// LeaderAndIsr (key 4), versions 0–5 (controller → broker).
//
//	v1: is_new per partition
//	v2: broker epoch (KIP-380); partitions grouped by topic
//	v3: adding and removing replicas (KIP-455)
//	v4: flexible
//	v5: type and topic ids (KIP-516); the response groups by topic id
//
// Fencing, in Kafka's order: a broker epoch older than this broker's
// registration gets STALE_BROKER_EPOCH; a controller epoch older than the
// newest seen gets STALE_CONTROLLER_EPOCH and nothing is applied; then each
// partition is taken only if its leader epoch is newer than the local one.

import (
	"context"
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
)

var leaderAndIsrAPI = api{
	key: 4, min: 0, max: maxVersion(4),
	handle: func(_ context.Context, s *Server, r *request) kmsg.Response {
		return s.handleLeaderAndIsr(r.body.(*kmsg.LeaderAndISRRequest))
	},
	errorResponse: func(req kmsg.Request, code int16) kmsg.Response {
		resp := req.ResponseKind().(*kmsg.LeaderAndISRResponse)
		resp.ErrorCode = code
		return resp
	},
}

func (s *Server) handleLeaderAndIsr(req *kmsg.LeaderAndISRRequest) *kmsg.LeaderAndISRResponse {
	resp := req.ResponseKind().(*kmsg.LeaderAndISRResponse)
	log := s.log.Named("state-change").With(zap.Int32("controller-id", req.ControllerID), zap.Int32("controller-epoch", req.ControllerEpoch))
	if err := s.checkBrokerEpoch(req.Version >= 2, req.BrokerEpoch); err != nil {
		log.Warn("Ignoring LeaderAndIsr with a stale broker epoch", zap.Int64("request-broker-epoch", req.BrokerEpoch))
		resp.ErrorCode = kerr.StaleBrokerEpoch.Code
		return resp
	}
	if err := s.replicas.checkControllerEpoch(req.ControllerEpoch); err != nil {
		log.Warn("Ignoring LeaderAndIsr from an old controller", zap.Int32("latest-controller-epoch", s.replicas.ControllerEpoch()))
		resp.ErrorCode = kerr.StaleControllerEpoch.Code
		return resp
	}
	codes := s.replicas.becomeLeaderOrFollower(req)
	if req.Version >= 5 {
		for _, t := range req.TopicStates {
			rt := kmsg.LeaderAndISRResponseTopic{TopicID: t.TopicID}
			for _, p := range t.PartitionStates {
				rt.Partitions = append(rt.Partitions, kmsg.LeaderAndISRResponseTopicPartition{
					Partition: p.Partition, ErrorCode: codes[topicPartition{t.Topic, p.Partition}],
				})
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp
	}
	for tp, code := range codes {
		resp.Partitions = append(resp.Partitions, kmsg.LeaderAndISRResponseTopicPartition{Topic: tp.topic, Partition: tp.partition, ErrorCode: code})
	}
	sort.Slice(resp.Partitions, func(i, j int) bool {
		a, b := resp.Partitions[i], resp.Partitions[j]
		return a.Topic < b.Topic || a.Topic == b.Topic && a.Partition < b.Partition
	})
	return resp
}

// checkBrokerEpoch rejects a controller request addressed to an older
// registration of this broker (KIP-380). -1 means the sender did not know.
func (s *Server) checkBrokerEpoch(hasEpoch bool, epoch int64) error {
	if hasEpoch && epoch != -1 && epoch < s.brokerEpoch.Load() {
		return kerr.StaleBrokerEpoch
	}
	return nil
}
