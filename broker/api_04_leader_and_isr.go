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
// newest seen, or newer but above /controller_epoch (a forgery: zkafka's
// addition), gets STALE_CONTROLLER_EPOCH and nothing is applied; then each
// partition is taken only if its leader epoch is newer than the local one.

import (
	"context"
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/acl"
	"github.com/zkafka/zkafka/kafka"
)

var leaderAndIsrAPI = api{
	key: 4, min: 0, max: maxVersion(4),
	handle: func(_ context.Context, s *Server, r *request) kmsg.Response {
		if resp := s.clusterDenied(r, acl.OpClusterAction); resp != nil {
			return resp
		}
		return s.handleLeaderAndIsr(r.body.(*kmsg.LeaderAndISRRequest), r.remote)
	},
	errorResponse: func(req kmsg.Request, code int16) kmsg.Response {
		resp := req.ResponseKind().(*kmsg.LeaderAndISRResponse)
		resp.ErrorCode = code
		return resp
	},
}

func (s *Server) handleLeaderAndIsr(req *kmsg.LeaderAndISRRequest, remote string) *kmsg.LeaderAndISRResponse {
	resp := req.ResponseKind().(*kmsg.LeaderAndISRResponse)
	if resp.ErrorCode = s.fenceControllerRequest("LeaderAndIsr", remote, req.ControllerID, req.ControllerEpoch, req.Version >= 2, req.BrokerEpoch); resp.ErrorCode != 0 {
		return resp
	}
	codes := s.replicas.becomeLeaderOrFollower(req)
	s.onCoordinatorLeadershipChange(codes)
	if req.Version >= 5 {
		for _, t := range req.TopicStates {
			rt := kmsg.LeaderAndISRResponseTopic{TopicID: t.TopicID}
			for _, p := range t.PartitionStates {
				rt.Partitions = append(rt.Partitions, kmsg.LeaderAndISRResponseTopicPartition{
					Partition: p.Partition, ErrorCode: codes[kafka.TopicPartition{Topic: t.Topic, Partition: p.Partition}],
				})
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp
	}
	for tp, code := range codes {
		resp.Partitions = append(resp.Partitions, kmsg.LeaderAndISRResponseTopicPartition{Topic: tp.Topic, Partition: tp.Partition, ErrorCode: code})
	}
	sort.Slice(resp.Partitions, func(i, j int) bool {
		a, b := resp.Partitions[i], resp.Partitions[j]
		return a.Topic < b.Topic || a.Topic == b.Topic && a.Partition < b.Partition
	})
	return resp
}

// fenceControllerRequest checks a controller request before anything is
// applied: a broker epoch (KIP-380; -1 means the sender did not know) older
// than this broker's registration gets STALE_BROKER_EPOCH, a controller epoch
// older than the newest accepted, or newer but not in /controller_epoch, gets
// STALE_CONTROLLER_EPOCH. It returns the error code, 0 when the request may
// proceed.
func (s *Server) fenceControllerRequest(name, remote string, controllerID, controllerEpoch int32, hasBrokerEpoch bool, brokerEpoch int64) int16 {
	log := s.log.Named("state-change").With(zap.String("request", name), zap.Int32("controller-id", controllerID), zap.Int32("controller-epoch", controllerEpoch))
	if hasBrokerEpoch && brokerEpoch != -1 && brokerEpoch < s.brokerEpoch.Load() {
		log.Warn("Ignoring a controller request with a stale broker epoch", zap.Int64("request-broker-epoch", brokerEpoch))
		return kerr.StaleBrokerEpoch.Code
	}
	if err := s.replicas.checkControllerEpoch(controllerEpoch); err != nil {
		log.Warn("Ignoring a request from an old or unconfirmed controller", zap.Int32("latest-controller-epoch", s.replicas.ControllerEpoch()),
			zap.String("client-address", remote), zap.Error(err))
		return kerr.StaleControllerEpoch.Code
	}
	return 0
}
