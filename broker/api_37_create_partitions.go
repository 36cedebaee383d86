package broker

// CreatePartitions (key 37), versions 0–3.
//
//	v1: same as v0
//	v2: flexible
//	v3: same as v2
//
// Only the active controller serves it (others answer NOT_CONTROLLER). The new
// partitions' replicas come from the request or from Kafka's placement for
// added partitions; the whole assignment is rewritten into /brokers/topics/<t>
// (by adminzk, conditional on the version read), and the controller's data watch brings
// the new partitions online. The response waits until this broker's metadata
// cache shows a leader for every partition or the timeout passes.

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/controller"
	"github.com/zkafka/zkafka/internal/reqclock"
	"github.com/zkafka/zkafka/quota"
	"github.com/zkafka/zkafka/zkpaths"
)

var createPartitionsAPI = api{
	key: 37, min: 0, max: maxVersion(37),
	handle: func(ctx context.Context, s *Server, r *request) kmsg.Response {
		mutations := s.mutationQuota(r, 3)
		resp := s.createPartitionsAuthorized(ctx, r, r.body.(*kmsg.CreatePartitionsRequest), mutations)
		resp.ThrottleMillis = s.mutationThrottle(r, mutations)
		return resp
	},
	errorResponse: func(req kmsg.Request, code int16) kmsg.Response {
		cr := req.(*kmsg.CreatePartitionsRequest)
		resp := cr.ResponseKind().(*kmsg.CreatePartitionsResponse)
		for _, t := range cr.Topics {
			resp.Topics = append(resp.Topics, kmsg.CreatePartitionsResponseTopic{Topic: t.Topic, ErrorCode: code})
		}
		return resp
	},
}

func (s *Server) handleCreatePartitions(ctx context.Context, req *kmsg.CreatePartitionsRequest, mutations *quota.Mutation) *kmsg.CreatePartitionsResponse {
	resp := req.ResponseKind().(*kmsg.CreatePartitionsResponse)
	count := map[string]int{}
	for _, t := range req.Topics {
		count[t.Topic]++
	}
	var created []int
	for _, t := range req.Topics {
		rt := kmsg.NewCreatePartitionsResponseTopic()
		rt.Topic = t.Topic
		var err error
		switch {
		case !s.controller.IsActive():
			err = errNotController
		case count[t.Topic] > 1:
			err = topicErr(kerr.InvalidRequest, "Duplicate topic in request.")
		default:
			err = s.createPartitions(t, req.ValidateOnly, mutations)
		}
		var te *topicError
		switch {
		case errors.As(err, &te):
			rt.ErrorCode, rt.ErrorMessage = te.code.Code, te.message()
		case err != nil:
			s.log.Error("Partition creation failed", zap.String("topic", t.Topic), zap.Error(err))
			rt.ErrorCode, rt.ErrorMessage = kerr.UnknownServerError.Code, kmsg.StringPtr(err.Error())
		case !req.ValidateOnly:
			created = append(created, len(resp.Topics))
		}
		resp.Topics = append(resp.Topics, rt)
	}
	s.awaitPartitionLeaders(ctx, req, resp, created)
	return resp
}

// createPartitions validates one topic's request and, unless validateOnly,
// writes the grown assignment through adminzk, which re-validates against
// the new assignment when the topic changed meanwhile.
func (s *Server) createPartitions(t kmsg.CreatePartitionsRequestTopic, validateOnly bool, mutations *quota.Mutation) error {
	if zkpaths.ValidateTopicName(t.Topic) != nil {
		return topicErr(kerr.UnknownTopicOrPartition, "The topic '%s' does not exist.", t.Topic)
	}
	admin := s.adminZk()
	recorded := false // the function runs again when another writer got in first
	_, err := admin.AddPartitions(t.Topic, func(a zkpaths.TopicAssignment) (map[int32][]int32, error) {
		if marked, err := admin.MarkedForDeletion(t.Topic); err != nil {
			return nil, err
		} else if marked {
			return nil, topicErr(kerr.InvalidTopicException, "The topic '%s' is queued for deletion.", t.Topic)
		}
		if len(a.AddingReplicas) > 0 || len(a.RemovingReplicas) > 0 {
			return nil, topicErr(kerr.ReassignmentInProgress, "A partition reassignment is in progress for topic '%s'.", t.Topic)
		}
		current := int32(len(a.Partitions))
		switch {
		case t.Count < current:
			return nil, topicErr(kerr.InvalidPartitions, "Topic currently has %d partitions, which is higher than the requested %d.", current, t.Count)
		case t.Count == current:
			return nil, topicErr(kerr.InvalidPartitions, "Topic already has %d partitions.", current)
		}
		added, err := s.newPartitionsAssignment(a.Partitions, t)
		if err == nil && !validateOnly && !recorded {
			if mutations.Record(len(added)) != nil {
				return nil, throttlingQuotaExceeded()
			}
			recorded = true
		}
		return added, err
	}, validateOnly)
	return fromAdmin(err)
}

// newPartitionsAssignment returns the replicas of the added partitions: the
// request's, checked as Kafka checks them, or Kafka's placement.
func (s *Server) newPartitionsAssignment(existing map[int32][]int32, t kmsg.CreatePartitionsRequestTopic) (map[int32][]int32, error) {
	brokers, err := s.registeredBrokers()
	if err != nil {
		return nil, err
	}
	current := int32(len(existing))
	if t.Assignment == nil {
		added, err := controller.AssignNewPartitions(brokers, existing, t.Count)
		switch {
		case errors.Is(err, controller.ErrInvalidReplicationFactor):
			return nil, topicErr(kerr.InvalidReplicationFactor, "%v", err)
		case errors.Is(err, controller.ErrInvalidPartitions):
			return nil, topicErr(kerr.InvalidPartitions, "%v", err)
		}
		return added, err
	}
	if int32(len(t.Assignment)) != t.Count-current {
		return nil, topicErr(kerr.InvalidReplicaAssignment, "Increasing the number of partitions by %d but %d assignments provided.", t.Count-current, len(t.Assignment))
	}
	rf := len(existing[0])
	added := map[int32][]int32{}
	for i, a := range t.Assignment {
		p := current + int32(i)
		if len(a.Replicas) != rf {
			return nil, topicErr(kerr.InvalidReplicaAssignment, "Inconsistent replication factor between partitions, partition 0 has %d while partition %d has %d.", rf, p, len(a.Replicas))
		}
		if len(slices.Compact(slices.Sorted(slices.Values(a.Replicas)))) != len(a.Replicas) {
			return nil, topicErr(kerr.InvalidReplicaAssignment, "Duplicate brokers not allowed in replica assignment: %v for partition %d.", a.Replicas, p)
		}
		for _, r := range a.Replicas {
			if !slices.Contains(brokers, r) {
				return nil, topicErr(kerr.InvalidReplicaAssignment, "Unknown broker(s) in replica assignment: %d.", r)
			}
		}
		added[p] = slices.Clone(a.Replicas)
	}
	return added, nil
}

// awaitPartitionLeaders holds the response until every grown topic has a
// leader for each partition in this broker's metadata cache.
func (s *Server) awaitPartitionLeaders(ctx context.Context, req *kmsg.CreatePartitionsRequest, resp *kmsg.CreatePartitionsResponse, created []int) {
	counts := map[string]int32{}
	for _, t := range req.Topics {
		counts[t.Topic] = t.Count
	}
	ready := func(i int) bool { return s.metadata.HasLeaders(resp.Topics[i].Topic, counts[resp.Topics[i].Topic]) }
	defer reqclock.Waited(ctx, time.Now())
	timeout := time.NewTimer(time.Duration(req.TimeoutMillis) * time.Millisecond)
	defer timeout.Stop()
	for {
		created = slices.DeleteFunc(created, ready)
		if len(created) == 0 {
			return
		}
		select {
		case <-s.metadata.changed():
		case <-timeout.C:
			for _, i := range created {
				resp.Topics[i].ErrorCode = kerr.RequestTimedOut.Code
				resp.Topics[i].ErrorMessage = kmsg.StringPtr("Timed out waiting for the new partitions to get leaders.")
			}
			return
		case <-ctx.Done():
			return
		}
	}
}
