package broker

// CreateTopics (key 19), versions 0–7 (Kafka 2.8).
//
//	v1: validate_only, error messages
//	v2: throttle time
//	v3: same as v2
//	v4: num_partitions and replication_factor may be -1 (broker defaults, KIP-464)
//	v5: flexible; the response carries partitions, replication factor, configs
//	v6: same as v5; a controller_mutation_rate quota is strict (KIP-599):
//	    topics beyond it get THROTTLING_QUOTA_EXCEEDED, where older
//	    versions are created and only throttled
//	v7: topic id in the response (KIP-516)
//
// In ZooKeeper mode only the active controller serves it (others answer
// NOT_CONTROLLER). The topic is written to ZooKeeper; the response waits until
// this broker's metadata cache shows a leader for every partition or the
// request timeout passes (then REQUEST_TIMED_OUT, the topic still exists).

import (
	"context"
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/internal/reqclock"
	"github.com/zkafka/zkafka/quota"
	"github.com/zkafka/zkafka/zkpaths"
)

var createTopicsAPI = api{
	key: 19, min: 0, max: maxVersion(19),
	handle: func(ctx context.Context, s *Server, r *request) kmsg.Response {
		mutations := s.mutationQuota(r, 6)
		resp := s.createTopicsAuthorized(ctx, r, r.body.(*kmsg.CreateTopicsRequest), mutations)
		resp.ThrottleMillis = s.mutationThrottle(r, mutations)
		return resp
	},
	errorResponse: func(req kmsg.Request, code int16) kmsg.Response {
		cr := req.(*kmsg.CreateTopicsRequest)
		resp := cr.ResponseKind().(*kmsg.CreateTopicsResponse)
		for _, t := range cr.Topics {
			rt := kmsg.NewCreateTopicsResponseTopic()
			rt.Topic, rt.ErrorCode = t.Topic, code
			resp.Topics = append(resp.Topics, rt)
		}
		return resp
	},
}

func (s *Server) handleCreateTopics(ctx context.Context, req *kmsg.CreateTopicsRequest, mutations *quota.Mutation) *kmsg.CreateTopicsResponse {
	resp := req.ResponseKind().(*kmsg.CreateTopicsResponse)
	seen := map[string]int{}
	for _, t := range req.Topics {
		seen[t.Topic]++
	}
	var created []int // indexes into resp.Topics awaiting leaders
	for _, t := range req.Topics {
		rt := kmsg.NewCreateTopicsResponseTopic()
		rt.Topic = t.Topic
		err := s.createOneTopic(t, req.ValidateOnly, seen[t.Topic] > 1, mutations, &rt)
		if err != nil {
			var te *topicError
			if errors.As(err, &te) {
				rt.ErrorCode, rt.ErrorMessage = te.code.Code, te.message()
			} else {
				s.log.Error("Topic creation failed", zap.String("topic", t.Topic), zap.Error(err))
				rt.ErrorCode, rt.ErrorMessage = kerr.UnknownServerError.Code, kmsg.StringPtr(err.Error())
			}
		} else if !req.ValidateOnly {
			created = append(created, len(resp.Topics))
		}
		resp.Topics = append(resp.Topics, rt)
	}
	s.awaitLeaders(ctx, resp, created, time.Duration(req.TimeoutMillis)*time.Millisecond)
	return resp
}

func (s *Server) createOneTopic(t kmsg.CreateTopicsRequestTopic, validateOnly, duplicate bool, mutations *quota.Mutation, rt *kmsg.CreateTopicsResponseTopic) error {
	// Kafka 2.8's order: a broker that is not the controller answers every
	// topic NOT_CONTROLLER, before any other check.
	if !s.controller.IsActive() {
		return errNotController
	}
	if duplicate {
		return topicErr(kerr.InvalidRequest, "Found multiple entries for this topic.")
	}
	nt := newTopic{name: t.Topic, numPartitions: t.NumPartitions, replicationFactor: t.ReplicationFactor, configs: map[string]string{}, mutations: mutations}
	for _, c := range t.Configs {
		if c.Value == nil {
			return topicErr(kerr.InvalidConfig, "Null value not supported for topic configs: %s", c.Name)
		}
		nt.configs[c.Name] = *c.Value
	}
	if len(t.ReplicaAssignment) > 0 {
		if t.NumPartitions != -1 || t.ReplicationFactor != -1 {
			return topicErr(kerr.InvalidRequest, "Both numPartitions or replicationFactor and replicasAssignments were set. Both cannot be used at the same time.")
		}
		nt.assignment = map[int32][]int32{}
		for _, a := range t.ReplicaAssignment {
			nt.assignment[a.Partition] = a.Replicas
		}
	} else {
		if nt.numPartitions == -1 {
			nt.numPartitions = s.cfg.NumPartitions
		}
		if nt.replicationFactor == -1 {
			nt.replicationFactor = s.cfg.DefaultReplicationFactor
		}
	}
	assignment, err := s.createTopic(nt, validateOnly)
	if err != nil {
		return err
	}
	rt.NumPartitions = int32(len(assignment))
	rt.ReplicationFactor = int16(len(assignment[0]))
	// Every config of the new topic, as Kafka 2.8 answers from v5 on (never
	// null: Java's admin client reads the list whenever there is no error).
	rt.Configs = []kmsg.CreateTopicsResponseTopicConfig{}
	for _, e := range s.topicConfigEntries(nt.configs, false, false) {
		rt.Configs = append(rt.Configs, kmsg.CreateTopicsResponseTopicConfig{
			Name: e.Name, Value: e.Value, ReadOnly: e.ReadOnly, Source: int8(e.Source), IsSensitive: e.IsSensitive})
	}
	return nil
}

// awaitLeaders holds the response until every created topic has leaders in
// this broker's metadata cache, as Kafka's DelayedCreatePartitions does.
func (s *Server) awaitLeaders(ctx context.Context, resp *kmsg.CreateTopicsResponse, created []int, timeout time.Duration) {
	if len(created) == 0 {
		return
	}
	ready := func() bool {
		for _, i := range created {
			if !s.metadata.HasLeaders(resp.Topics[i].Topic, resp.Topics[i].NumPartitions) {
				return false
			}
		}
		return true
	}
	if timeout > 0 {
		defer reqclock.Waited(ctx, time.Now())
		deadline := time.NewTimer(timeout)
		defer deadline.Stop()
		for !ready() {
			select {
			case <-s.metadata.changed():
			case <-deadline.C:
				for _, i := range created {
					if !s.metadata.HasLeaders(resp.Topics[i].Topic, resp.Topics[i].NumPartitions) {
						resp.Topics[i].ErrorCode = kerr.RequestTimedOut.Code
						resp.Topics[i].ErrorMessage = kmsg.StringPtr("Timed out waiting for the topic's partitions to get leaders.")
					}
				}
				return
			case <-ctx.Done():
				return
			}
		}
	}
	for _, i := range created {
		data, _, err := s.zk.Get(zkpaths.TopicPath(resp.Topics[i].Topic))
		if err != nil {
			continue
		}
		if ta, err := zkpaths.DecodeTopicAssignment(data); err == nil {
			resp.Topics[i].TopicID, _ = zkpaths.ParseUUID(ta.TopicID)
		}
	}
}
