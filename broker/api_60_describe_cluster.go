package broker

// DescribeCluster (key 60), version 0 (Kafka 2.8, KIP-700; flexible): the
// cluster id, the controller and the live brokers with the endpoint of the
// listener the request came on, as Metadata gives them, without topics.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/acl"
)

var describeClusterAPI = api{
	key: 60, min: 0, max: maxVersion(60),
	handle: func(_ context.Context, s *Server, r *request) kmsg.Response {
		req := r.body.(*kmsg.DescribeClusterRequest)
		resp := s.handleDescribeCluster(req, r.listener)
		if req.IncludeClusterAuthorizedOperations && s.authorizer != nil {
			// Only a principal that may describe the cluster learns what
			// else it may do there; others are told none (2.8's
			// handleDescribeCluster).
			resp.ClusterAuthorizedOperations = 0
			if s.authorizeCluster(r, acl.OpDescribe) {
				resp.ClusterAuthorizedOperations = s.authorizedOperations(r, acl.ResourceCluster, acl.ClusterName)
			}
		}
		return resp
	},
	errorResponse: func(req kmsg.Request, code int16) kmsg.Response {
		resp := req.ResponseKind().(*kmsg.DescribeClusterResponse)
		resp.ErrorCode = code
		return resp
	},
}

func (s *Server) handleDescribeCluster(req *kmsg.DescribeClusterRequest, listener string) *kmsg.DescribeClusterResponse {
	resp := req.ResponseKind().(*kmsg.DescribeClusterResponse)
	resp.ClusterID, resp.ControllerID = s.clusterID, s.metadata.ControllerID()
	if req.IncludeClusterAuthorizedOperations {
		resp.ClusterAuthorizedOperations = clusterAuthorizedOperations
	}
	for _, b := range s.metadata.AliveBrokers() {
		if ep, ok := b.Endpoints[listener]; ok {
			resp.Brokers = append(resp.Brokers, kmsg.DescribeClusterResponseBroker{NodeID: b.ID, Host: ep.Host, Port: ep.Port, Rack: b.Rack})
		}
	}
	return resp
}
