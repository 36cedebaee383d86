package broker

// ElectLeaders (key 43), versions 0–2 (KIP-183, KIP-460).
//
//	v1: election type (0 preferred, 1 unclean); a top-level error code
//	v2: flexible
//
// Only the active controller serves it. Null topics means every partition;
// then partitions that need no election are left out of the answer, as Kafka
// does. Per partition: ELECTION_NOT_NEEDED, PREFERRED_LEADER_NOT_AVAILABLE,
// ELIGIBLE_LEADERS_NOT_AVAILABLE, UNKNOWN_TOPIC_OR_PARTITION or
// INVALID_TOPIC_EXCEPTION (topic being deleted).

import (
	"context"
	"errors"
	"maps"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/acl"
	"github.com/zkafka/zkafka/controller"
	"github.com/zkafka/zkafka/kafka"
)

var electLeadersAPI = api{
	key: 43, min: 0, max: maxVersion(43),
	handle: func(ctx context.Context, s *Server, r *request) kmsg.Response {
		if resp := s.clusterDenied(r, acl.OpAlter); resp != nil {
			return resp
		}
		return s.handleElectLeaders(ctx, r.body.(*kmsg.ElectLeadersRequest))
	},
	// The error is top-level (v1+) and on every partition asked, as 2.8's
	// getErrorResponse: v0 has only the latter.
	errorResponse: func(req kmsg.Request, code int16) kmsg.Response {
		r := req.(*kmsg.ElectLeadersRequest)
		resp := r.ResponseKind().(*kmsg.ElectLeadersResponse)
		resp.ErrorCode = code
		for _, t := range r.Topics {
			rt := kmsg.ElectLeadersResponseTopic{Topic: t.Topic}
			for _, p := range t.Partitions {
				rt.Partitions = append(rt.Partitions, kmsg.ElectLeadersResponseTopicPartition{Partition: p, ErrorCode: code})
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp
	},
}

func (s *Server) handleElectLeaders(ctx context.Context, req *kmsg.ElectLeadersRequest) *kmsg.ElectLeadersResponse {
	resp := req.ResponseKind().(*kmsg.ElectLeadersResponse)
	typ := controller.PreferredElection
	if req.Version >= 1 {
		typ = controller.ElectionType(req.ElectionType)
	}
	var partitions []kafka.TopicPartition
	if req.Topics != nil {
		partitions = []kafka.TopicPartition{}
		for _, t := range req.Topics {
			for _, p := range t.Partitions {
				partitions = append(partitions, kafka.TopicPartition{Topic: t.Topic, Partition: p})
			}
		}
	}
	results := map[kafka.TopicPartition]error{}
	switch {
	case typ != controller.PreferredElection && typ != controller.UncleanElection:
		resp.ErrorCode = kerr.InvalidRequest.Code
		for _, tp := range partitions {
			results[tp] = kerr.InvalidRequest
		}
	default:
		ctx, cancel := context.WithTimeout(ctx, time.Duration(req.TimeoutMillis)*time.Millisecond)
		defer cancel()
		var err error
		if results, err = s.controller.ElectLeaders(ctx, typ, partitions); err != nil {
			resp.ErrorCode = controllerErrorCode(err)
			results = map[kafka.TopicPartition]error{}
			for _, tp := range partitions {
				results[tp] = err
			}
		}
	}
	byTopic := map[string][]kmsg.ElectLeadersResponseTopicPartition{}
	for tp, err := range results {
		if req.Topics == nil && errors.Is(err, kerr.ElectionNotNeeded) {
			continue
		}
		byTopic[tp.Topic] = append(byTopic[tp.Topic], kmsg.ElectLeadersResponseTopicPartition{
			Partition: tp.Partition, ErrorCode: controllerErrorCode(err), ErrorMessage: errorMessage(err),
		})
	}
	for _, topic := range slices.Sorted(maps.Keys(byTopic)) {
		ps := byTopic[topic]
		slices.SortFunc(ps, func(a, b kmsg.ElectLeadersResponseTopicPartition) int { return int(a.Partition - b.Partition) })
		resp.Topics = append(resp.Topics, kmsg.ElectLeadersResponseTopic{Topic: topic, Partitions: ps})
	}
	return resp
}
