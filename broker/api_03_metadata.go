package broker

// Metadata (key 3), versions 0–11 (Kafka 2.8).
//
//	v0: topics and partitions; an empty topic list means all topics
//	v1: controller id, rack, internal flag; a null list means all, empty none
//	v2: cluster id
//	v3: throttle time
//	v4: allow_auto_topic_creation (earlier versions always allow)
//	v5: offline replicas
//	v7: leader epoch
//	v8: authorized operations
//	v9: flexible (KIP-482)
//	v10: topic ids
//	v11: cluster authorized operations removed
//
// Brokers are described with the endpoint of the listener the request came
// in on, so each client gets addresses it can reach.

import (
	"context"
	"errors"
	"math"
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/quota"
)

var metadataAPI = api{
	key: 3, min: 0, max: maxVersion(3),
	handle: func(_ context.Context, s *Server, r *request) kmsg.Response {
		// Auto-created topics count against a permissive controller
		// mutation quota, whose throttle the Metadata response does not
		// carry (Kafka 2.8's AutoTopicCreationManager).
		return s.metadataAuthorized(r, r.body.(*kmsg.MetadataRequest), s.mutationQuota(r, math.MaxInt16))
	},
	errorResponse: func(req kmsg.Request, code int16) kmsg.Response {
		mr := req.(*kmsg.MetadataRequest)
		resp := mr.ResponseKind().(*kmsg.MetadataResponse)
		for _, t := range mr.Topics {
			resp.Topics = append(resp.Topics, kmsg.MetadataResponseTopic{Topic: t.Topic, ErrorCode: code})
		}
		return resp
	},
}

func (s *Server) handleMetadata(req *kmsg.MetadataRequest, listener string, mutations *quota.Mutation) *kmsg.MetadataResponse {
	resp := req.ResponseKind().(*kmsg.MetadataResponse)
	for _, b := range s.metadata.AliveBrokers() {
		ep, ok := b.Endpoints[listener]
		if !ok {
			continue
		}
		resp.Brokers = append(resp.Brokers, kmsg.MetadataResponseBroker{NodeID: b.ID, Host: ep.Host, Port: ep.Port, Rack: b.Rack})
	}
	clusterID := s.clusterID
	resp.ClusterID = &clusterID
	resp.ControllerID = s.metadata.ControllerID()
	if req.IncludeClusterAuthorizedOperations && req.Version >= 8 && req.Version <= 10 {
		resp.AuthorizedOperations = clusterAuthorizedOperations
	}
	if req.IncludeTopicAuthorizedOperations && req.Version >= 8 {
		defer func() { // on every return below, once the topics are in
			for i := range resp.Topics {
				resp.Topics[i].AuthorizedOperations = topicAuthorizedOperations
			}
		}()
	}

	allTopics := req.Topics == nil || (req.Version == 0 && len(req.Topics) == 0)
	autoCreate := s.cfg.AutoCreateTopicsEnable && (req.Version < 4 || req.AllowAutoTopicCreation)
	if allTopics {
		for _, t := range s.metadata.Topics() {
			resp.Topics = append(resp.Topics, s.topicMetadata(t, listener))
		}
		return resp
	}
	for _, rt := range req.Topics {
		if rt.Topic == nil {
			resp.Topics = append(resp.Topics, s.topicMetadataByID(rt.TopicID, listener))
			continue
		}
		name := *rt.Topic
		if _, _, ok := s.metadata.Topic(name); ok {
			resp.Topics = append(resp.Topics, s.topicMetadata(name, listener))
			continue
		}
		resp.Topics = append(resp.Topics, s.missingTopic(name, autoCreate, mutations))
	}
	return resp
}

// missingTopic answers for a topic the cache does not know: auto-created
// (LEADER_NOT_AVAILABLE until the controller elects leaders) or unknown.
func (s *Server) missingTopic(name string, autoCreate bool, mutations *quota.Mutation) kmsg.MetadataResponseTopic {
	t := kmsg.NewMetadataResponseTopic()
	t.Topic = &name
	if !autoCreate || internalTopics[name] {
		t.ErrorCode = kerr.UnknownTopicOrPartition.Code
		return t
	}
	_, err := s.createTopic(newTopic{
		name: name, numPartitions: s.cfg.NumPartitions, replicationFactor: s.cfg.DefaultReplicationFactor, mutations: mutations,
	}, false)
	var te *topicError
	switch {
	case err == nil, errors.Is(err, kerr.TopicAlreadyExists):
		t.ErrorCode = kerr.LeaderNotAvailable.Code
	case errors.As(err, &te):
		t.ErrorCode = te.code.Code
	default:
		s.log.Warn("Auto topic creation failed", zap.String("topic", name), zap.Error(err))
		t.ErrorCode = kerr.UnknownServerError.Code
	}
	return t
}

func (s *Server) topicMetadataByID(id [16]byte, listener string) kmsg.MetadataResponseTopic {
	if name, ok := s.metadata.TopicName(id); ok {
		return s.topicMetadata(name, listener)
	}
	t := kmsg.NewMetadataResponseTopic()
	t.TopicID = id
	t.ErrorCode = kerr.UnknownTopicID.Code
	return t
}

func (s *Server) topicMetadata(name, listener string) kmsg.MetadataResponseTopic {
	t := kmsg.NewMetadataResponseTopic()
	t.Topic = &name
	t.IsInternal = internalTopics[name]
	id, parts, _ := s.metadata.Topic(name)
	t.TopicID = id
	alive := map[int32]bool{}
	for _, b := range s.metadata.AliveBrokers() {
		if _, ok := b.Endpoints[listener]; ok {
			alive[b.ID] = true
		}
	}
	for p, m := range parts {
		mp := kmsg.NewMetadataResponseTopicPartition()
		mp.Partition = p
		mp.Leader = m.Leader
		mp.LeaderEpoch = m.LeaderEpoch
		mp.Replicas = m.Replicas
		mp.ISR = m.ISR
		mp.OfflineReplicas = m.OfflineReplicas
		if m.Leader < 0 || !alive[m.Leader] {
			mp.ErrorCode = kerr.LeaderNotAvailable.Code
			mp.Leader = -1
		}
		t.Partitions = append(t.Partitions, mp)
	}
	sort.Slice(t.Partitions, func(i, j int) bool { return t.Partitions[i].Partition < t.Partitions[j].Partition })
	return t
}
