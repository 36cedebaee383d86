package broker

// ConsumerGroupHeartbeat (key 68), versions 0–1: KIP-848's consumer
// rebalance protocol (Kafka 4.0's), served only with
// group.coordinator.rebalance.protocols including consumer.
//
//	v0: member epochs, subscription by names, server-side assignors
//	v1: client-generated member ids, SubscribedTopicRegex (KIP-1082)
//
// The member needs READ on its group and DESCRIBE on every topic it names
// (TOPIC_AUTHORIZATION_FAILED otherwise, as Kafka answers).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/acl"
)

var consumerGroupHeartbeatAPI = api{
	key: 68, min: 0, max: 1,
	handle: func(_ context.Context, s *Server, r *request) kmsg.Response {
		req := r.body.(*kmsg.ConsumerGroupHeartbeatRequest)
		if resp := s.deniedOn(r, acl.OpRead, acl.ResourceGroup, req.Group, kerr.GroupAuthorizationFailed.Code); resp != nil {
			return resp
		}
		for _, t := range req.SubscribedTopicNames {
			if !s.authorize(r, acl.OpDescribe, acl.ResourceTopic, t) {
				resp := req.ResponseKind().(*kmsg.ConsumerGroupHeartbeatResponse)
				resp.ErrorCode, resp.MemberEpoch = kerr.TopicAuthorizationFailed.Code, -1
				return resp
			}
		}
		return s.groupCoordinator.ConsumerGroupHeartbeat(req, r.hdr.APIVersion, derefString(r.hdr.ClientID), r.clientHost())
	},
	errorResponse: func(req kmsg.Request, code int16) kmsg.Response {
		resp := req.ResponseKind().(*kmsg.ConsumerGroupHeartbeatResponse)
		resp.ErrorCode, resp.MemberEpoch = code, -1
		return resp
	},
}
