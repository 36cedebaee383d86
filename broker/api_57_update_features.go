package broker

// UpdateFeatures (key 57), versions 0–0 (KIP-584, flexible): finalize, raise, lower or delete
// cluster-wide feature versions in /feature. Only the active controller serves it (others answer
// NOT_CONTROLLER); with inter.broker.protocol.version below 2.7 the answer is INVALID_REQUEST
// "Feature versioning system is disabled.". A Kafka 2.8 broker supports no feature, so every
// upgrade is refused per feature with 2.8's message, and only features someone put into /feature
// can be lowered or deleted.

import (
	"context"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/acl"
	"github.com/zkafka/zkafka/controller"
)

var updateFeaturesAPI = api{
	key: 57, min: 0, max: maxVersion(57),
	handle: func(ctx context.Context, s *Server, r *request) kmsg.Response {
		if resp := s.clusterDenied(r, acl.OpAlter); resp != nil {
			return resp
		}
		return s.handleUpdateFeatures(ctx, r.body.(*kmsg.UpdateFeaturesRequest))
	},
	errorResponse: func(req kmsg.Request, code int16) kmsg.Response {
		resp := req.ResponseKind().(*kmsg.UpdateFeaturesResponse)
		resp.ErrorCode = code
		return resp
	},
}

func (s *Server) handleUpdateFeatures(ctx context.Context, req *kmsg.UpdateFeaturesRequest) *kmsg.UpdateFeaturesResponse {
	resp := req.ResponseKind().(*kmsg.UpdateFeaturesResponse)
	updates := make([]controller.FeatureUpdate, 0, len(req.FeatureUpdates))
	for _, u := range req.FeatureUpdates {
		updates = append(updates, controller.FeatureUpdate{Feature: u.Feature, MaxVersionLevel: u.MaxVersionLevel, AllowDowngrade: u.AllowDowngrade})
	}
	results, err := s.controller.UpdateFeatures(ctx, updates)
	if err != nil {
		resp.ErrorCode = controllerErrorCode(err)
		resp.ErrorMessage = errorMessage(err)
		if ke := kerr.ErrorForCode(resp.ErrorCode); ke == kerr.NotController {
			resp.ErrorMessage = kmsg.StringPtr(kerr.NotController.Description)
		}
		return resp
	}
	features := make([]string, 0, len(results))
	for f := range results {
		features = append(features, f)
	}
	slices.Sort(features)
	for _, f := range features {
		err := results[f]
		resp.Results = append(resp.Results, kmsg.UpdateFeaturesResponseResult{Feature: f, ErrorCode: errorCode(err), ErrorMessage: errorMessage(err)})
	}
	return resp
}
