package broker

// OffsetDelete (key 47), version 0 (KIP-496).
//
// Deletes a group's committed offsets of topics it is not subscribed to
// (GROUP_SUBSCRIBED_TO_TOPIC for the others); any offset of an Empty group.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/acl"
)

var offsetDeleteAPI = api{
	key: 47, min: 0, max: maxVersion(47),
	handle: func(_ context.Context, s *Server, r *request) kmsg.Response {
		if resp := s.deniedOn(r, acl.OpDelete, acl.ResourceGroup, r.body.(*kmsg.OffsetDeleteRequest).Group, kerr.GroupAuthorizationFailed.Code); resp != nil {
			return resp
		}
		return s.offsetDeleteAuthorized(r, r.body.(*kmsg.OffsetDeleteRequest))
	},
	errorResponse: func(req kmsg.Request, code int16) kmsg.Response {
		resp := req.ResponseKind().(*kmsg.OffsetDeleteResponse)
		resp.ErrorCode = code
		return resp
	},
}

// offsetDeleteAuthorized asks the coordinator about the topics the principal
// may READ; the others answer TOPIC_AUTHORIZATION_FAILED unless the group
// itself has an error, as 2.8.
func (s *Server) offsetDeleteAuthorized(r *request, req *kmsg.OffsetDeleteRequest) *kmsg.OffsetDeleteResponse {
	if s.authorizer == nil {
		return s.groupCoordinator.OffsetDelete(req)
	}
	name := func(t kmsg.OffsetDeleteRequestTopic) string { return t.Topic }
	allowed, denied := *req, *req
	allowed.Topics, denied.Topics = splitTopics(req.Topics, s.authorizeTopics(r, acl.OpRead, topicsOf(req.Topics, name)), name)
	resp := s.groupCoordinator.OffsetDelete(&allowed)
	if resp.ErrorCode != 0 {
		return resp
	}
	for _, t := range denied.Topics {
		rt := kmsg.NewOffsetDeleteResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetDeleteResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, kerr.TopicAuthorizationFailed.Code
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}
