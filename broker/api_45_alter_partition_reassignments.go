package broker

// AlterPartitionReassignments (key 45), version 0 (KIP-455), flexible.
//
// Only the active controller serves it (top-level NOT_CONTROLLER otherwise).
// Each partition gets a target replica list, or null to cancel its
// reassignment; errors per partition: UNKNOWN_TOPIC_OR_PARTITION,
// INVALID_REPLICA_ASSIGNMENT, NO_REASSIGNMENT_IN_PROGRESS.

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/acl"
	"github.com/zkafka/zkafka/kafka"
)

var alterPartitionReassignmentsAPI = api{
	key: 45, min: 0, max: maxVersion(45),
	handle: func(ctx context.Context, s *Server, r *request) kmsg.Response {
		if resp := s.clusterDenied(r, acl.OpAlter); resp != nil {
			return resp
		}
		return s.handleAlterPartitionReassignments(ctx, r.body.(*kmsg.AlterPartitionAssignmentsRequest))
	},
	// As 2.8's AlterPartitionReassignmentsRequest.getErrorResponse: the error at the top and on
	// every partition asked for.
	errorResponse: func(req kmsg.Request, code int16) kmsg.Response {
		resp := req.ResponseKind().(*kmsg.AlterPartitionAssignmentsResponse)
		resp.ErrorCode = code
		for _, t := range req.(*kmsg.AlterPartitionAssignmentsRequest).Topics {
			rt := kmsg.NewAlterPartitionAssignmentsResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewAlterPartitionAssignmentsResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p.Partition, code
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp
	},
}

func (s *Server) handleAlterPartitionReassignments(ctx context.Context, req *kmsg.AlterPartitionAssignmentsRequest) *kmsg.AlterPartitionAssignmentsResponse {
	resp := req.ResponseKind().(*kmsg.AlterPartitionAssignmentsResponse)
	targets := map[kafka.TopicPartition][]int32{}
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			targets[kafka.TopicPartition{Topic: t.Topic, Partition: p.Partition}] = p.Replicas
		}
	}
	ctx, cancel := context.WithTimeout(ctx, time.Duration(req.TimeoutMillis)*time.Millisecond)
	defer cancel()
	results, err := s.controller.AlterPartitionReassignments(ctx, targets)
	if err != nil {
		resp.ErrorCode, resp.ErrorMessage = controllerErrorCode(err), errorMessage(err)
	}
	for _, t := range req.Topics {
		rt := kmsg.AlterPartitionAssignmentsResponseTopic{Topic: t.Topic}
		for _, p := range t.Partitions {
			perr := err
			if perr == nil {
				perr = results[kafka.TopicPartition{Topic: t.Topic, Partition: p.Partition}]
			}
			rt.Partitions = append(rt.Partitions, kmsg.AlterPartitionAssignmentsResponseTopicPartition{
				Partition: p.Partition, ErrorCode: controllerErrorCode(perr), ErrorMessage: errorMessage(perr),
			})
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}
