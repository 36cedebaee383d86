package broker

// ListPartitionReassignments (key 46), version 0 (KIP-455), flexible.
//
// Only the active controller serves it (NOT_CONTROLLER otherwise). Null
// topics lists every ongoing reassignment; partitions without one are left
// out.

import (
	"context"
	"maps"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/acl"
	"github.com/zkafka/zkafka/kafka"
)

var listPartitionReassignmentsAPI = api{
	key: 46, min: 0, max: maxVersion(46),
	handle: func(ctx context.Context, s *Server, r *request) kmsg.Response {
		if resp := s.clusterDenied(r, acl.OpDescribe); resp != nil {
			return resp
		}
		return s.handleListPartitionReassignments(ctx, r.body.(*kmsg.ListPartitionReassignmentsRequest))
	},
	errorResponse: func(req kmsg.Request, code int16) kmsg.Response {
		resp := req.ResponseKind().(*kmsg.ListPartitionReassignmentsResponse)
		resp.ErrorCode = code
		return resp
	},
}

func (s *Server) handleListPartitionReassignments(ctx context.Context, req *kmsg.ListPartitionReassignmentsRequest) *kmsg.ListPartitionReassignmentsResponse {
	resp := req.ResponseKind().(*kmsg.ListPartitionReassignmentsResponse)
	var partitions []kafka.TopicPartition
	if req.Topics != nil {
		partitions = []kafka.TopicPartition{}
		for _, t := range req.Topics {
			for _, p := range t.Partitions {
				partitions = append(partitions, kafka.TopicPartition{Topic: t.Topic, Partition: p})
			}
		}
	}
	ctx, cancel := context.WithTimeout(ctx, time.Duration(req.TimeoutMillis)*time.Millisecond)
	defer cancel()
	ongoing, err := s.controller.ListPartitionReassignments(ctx, partitions)
	if err != nil {
		resp.ErrorCode, resp.ErrorMessage = controllerErrorCode(err), errorMessage(err)
		return resp
	}
	byTopic := map[string][]kmsg.ListPartitionReassignmentsResponseTopicPartition{}
	for tp, r := range ongoing {
		byTopic[tp.Topic] = append(byTopic[tp.Topic], kmsg.ListPartitionReassignmentsResponseTopicPartition{
			Partition: tp.Partition, Replicas: r.Replicas, AddingReplicas: r.AddingReplicas, RemovingReplicas: r.RemovingReplicas,
		})
	}
	for _, topic := range slices.Sorted(maps.Keys(byTopic)) {
		ps := byTopic[topic]
		slices.SortFunc(ps, func(a, b kmsg.ListPartitionReassignmentsResponseTopicPartition) int {
			return int(a.Partition - b.Partition)
		})
		resp.Topics = append(resp.Topics, kmsg.ListPartitionReassignmentsResponseTopic{Topic: topic, Partitions: ps})
	}
	return resp
}
