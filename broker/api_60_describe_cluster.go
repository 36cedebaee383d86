package broker

// DescribeCluster (key 60), version 0 (Kafka 2.8, KIP-700; flexible): the
// cluster id, the controller and the live brokers with the endpoint of the
// listener the request came on, as Metadata gives them, without topics.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

var describeClusterAPI = api{
	key: 60, min: 0, max: maxVersion(60),
	handle: func(_ context.Context, s *Server, r *request) kmsg.Response {
		return s.handleDescribeCluster(r.body.(*kmsg.DescribeClusterRequest), r.listener)
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
