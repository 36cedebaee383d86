package broker

// StopReplica (key 5), versions 0–3 (controller → broker).
//
//	v1: broker epoch (KIP-380); partitions grouped by topic
//	v2: flexible
//	v3: a leader epoch and a delete flag per partition (KIP-570)
//
// Fencing is LeaderAndIsr's: a broker epoch older than this broker's
// registration gets STALE_BROKER_EPOCH, a controller epoch older than the
// newest seen gets STALE_CONTROLLER_EPOCH, and nothing is stopped.

import (
	"context"
	"sort"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/acl"
)

var stopReplicaAPI = api{
	key: 5, min: 0, max: maxVersion(5),
	handle: func(_ context.Context, s *Server, r *request) kmsg.Response {
		if resp := s.clusterDenied(r, acl.OpClusterAction); resp != nil {
			return resp
		}
		return s.handleStopReplica(r.body.(*kmsg.StopReplicaRequest), r.remote)
	},
	errorResponse: func(req kmsg.Request, code int16) kmsg.Response {
		resp := req.ResponseKind().(*kmsg.StopReplicaResponse)
		resp.ErrorCode = code
		return resp
	},
}

func (s *Server) handleStopReplica(req *kmsg.StopReplicaRequest, remote string) *kmsg.StopReplicaResponse {
	resp := req.ResponseKind().(*kmsg.StopReplicaResponse)
	if resp.ErrorCode = s.fenceControllerRequest("StopReplica", remote, req.ControllerID, req.ControllerEpoch, req.Version >= 1, req.BrokerEpoch); resp.ErrorCode != 0 {
		return resp
	}
	for tp, code := range s.replicas.stopReplicas(req) {
		resp.Partitions = append(resp.Partitions, kmsg.StopReplicaResponsePartition{Topic: tp.Topic, Partition: tp.Partition, ErrorCode: code})
	}
	sort.Slice(resp.Partitions, func(i, j int) bool {
		a, b := resp.Partitions[i], resp.Partitions[j]
		return a.Topic < b.Topic || a.Topic == b.Topic && a.Partition < b.Partition
	})
	return resp
}
