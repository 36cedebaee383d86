package broker

// ConsumerGroupDescribe (key 69), versions 0–1: a consumer-protocol group's
// state, epochs, assignor and members (Kafka 4.0's), served only with
// group.coordinator.rebalance.protocols including consumer.
//
//	v1: each member's type (1: the consumer protocol)
//
// A group needs DESCRIBE; a classic group is GROUP_ID_NOT_FOUND, as Kafka
// answers (DescribeGroups describes it).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/acl"
)

var consumerGroupDescribeAPI = api{
	key: 69, min: 0, max: 1,
	handle: func(_ context.Context, s *Server, r *request) kmsg.Response {
		req := r.body.(*kmsg.ConsumerGroupDescribeRequest)
		resp := req.ResponseKind().(*kmsg.ConsumerGroupDescribeResponse)
		var allowed []string
		for _, g := range req.Groups {
			if s.authorize(r, acl.OpDescribe, acl.ResourceGroup, g) {
				allowed = append(allowed, g)
			}
		}
		described := s.groupCoordinator.ConsumerGroupDescribe(allowed)
		for _, g := range req.Groups {
			if len(described) == 0 || described[0].Group != g {
				d := kmsg.NewConsumerGroupDescribeResponseGroup()
				d.Group, d.ErrorCode = g, kerr.GroupAuthorizationFailed.Code
				resp.Groups = append(resp.Groups, d)
				continue
			}
			d := described[0]
			described = described[1:]
			if req.IncludeAuthorizedOperations && d.ErrorCode == 0 {
				d.AuthorizedOperations = s.authorizedOperations(r, acl.ResourceGroup, g)
			}
			resp.Groups = append(resp.Groups, d)
		}
		return resp
	},
	errorResponse: func(req kmsg.Request, code int16) kmsg.Response {
		r := req.(*kmsg.ConsumerGroupDescribeRequest)
		resp := r.ResponseKind().(*kmsg.ConsumerGroupDescribeResponse)
		for _, g := range r.Groups {
			d := kmsg.NewConsumerGroupDescribeResponseGroup()
			d.Group, d.ErrorCode = g, code
			resp.Groups = append(resp.Groups, d)
		}
		return resp
	},
}
