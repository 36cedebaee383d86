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

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/acl"
	"go.uber.org/zap"
)

var updateMetadataAPI = api{
	key: 6, min: 0, max: maxVersion(6),
	handle: func(_ context.Context, s *Server, r *request) kmsg.Response {
		if resp := s.clusterDenied(r, acl.OpClusterAction); resp != nil {
			return resp
		}
		return s.handleUpdateMetadata(r.body.(*kmsg.UpdateMetadataRequest), r.remote)
	},
	errorResponse: func(req kmsg.Request, code int16) kmsg.Response {
		resp := req.ResponseKind().(*kmsg.UpdateMetadataResponse)
		resp.ErrorCode = code
		return resp
	},
}

func (s *Server) handleUpdateMetadata(req *kmsg.UpdateMetadataRequest, remote string) *kmsg.UpdateMetadataResponse {
	resp := req.ResponseKind().(*kmsg.UpdateMetadataResponse)
	if resp.ErrorCode = s.fenceControllerRequest("UpdateMetadata", remote, req.ControllerID, req.ControllerEpoch, req.Version >= 5, req.BrokerEpoch); resp.ErrorCode != 0 {
		return resp
	}
	deleted := s.metadata.Update(req)
	s.log.Named("state-change").Debug("Cached metadata", zap.Int("live-brokers", len(req.LiveBrokers)), zap.Strings("deleted-topics", deleted))
	return resp
}
