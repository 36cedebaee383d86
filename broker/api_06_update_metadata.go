package broker

// UpdateMetadata (key 6), versions 0–7 (controller → broker).
//
//	v1: endpoints per broker
//	v2: rack
//	v3: listener names in endpoints
//	v4: offline replicas
//	v5: broker epoch (KIP-380); partitions grouped by topic
//	v6: flexible
//	v7: topic ids
//
// The live broker list replaces the cached one; partition states replace
// cached ones; leader -2 (LeaderDuringDelete) removes a partition.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
)

var updateMetadataAPI = api{
	key: 6, min: 0, max: maxVersion(6),
	handle: func(_ context.Context, s *Server, r *request) kmsg.Response {
		return s.handleUpdateMetadata(r.body.(*kmsg.UpdateMetadataRequest))
	},
	errorResponse: func(req kmsg.Request, code int16) kmsg.Response {
		resp := req.ResponseKind().(*kmsg.UpdateMetadataResponse)
		resp.ErrorCode = code
		return resp
	},
}

func (s *Server) handleUpdateMetadata(req *kmsg.UpdateMetadataRequest) *kmsg.UpdateMetadataResponse {
	resp := req.ResponseKind().(*kmsg.UpdateMetadataResponse)
	log := s.log.Named("state-change").With(zap.Int32("controller-id", req.ControllerID), zap.Int32("controller-epoch", req.ControllerEpoch))
	if err := s.checkBrokerEpoch(req.Version >= 5, req.BrokerEpoch); err != nil {
		log.Warn("Ignoring UpdateMetadata with a stale broker epoch", zap.Int64("request-broker-epoch", req.BrokerEpoch))
		resp.ErrorCode = kerr.StaleBrokerEpoch.Code
		return resp
	}
	if err := s.replicas.checkControllerEpoch(req.ControllerEpoch); err != nil {
		log.Warn("Ignoring UpdateMetadata from an old controller", zap.Int32("latest-controller-epoch", s.replicas.ControllerEpoch()))
		resp.ErrorCode = kerr.StaleControllerEpoch.Code
		return resp
	}
	deleted := s.metadata.Update(req)
	log.Debug("Cached metadata", zap.Int("live-brokers", len(req.LiveBrokers)), zap.Strings("deleted-topics", deleted))
	return resp
}
