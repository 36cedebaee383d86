package broker

// Checks of the admin APIs on topics and configs (2.8's KafkaApis): the
// refused entries are answered here, the others go to the handler as a
// request of their own, so the handlers stay unaware of ACLs. Entries the
// handler refuses before any check in Kafka (a duplicate topic, a broker
// that is not the controller) go to the handler as they are.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/acl"
	"github.com/zkafka/zkafka/quota"
)

// createTopicsAuthorized handles a CreateTopics: CREATE on the cluster, or
// else on each topic, else TOPIC_AUTHORIZATION_FAILED ("Authorization
// failed."); a created topic the principal may not DESCRIBE_CONFIGS is
// answered without its partitions, replication factor, configs and id,
// with TOPIC_AUTHORIZATION_FAILED as its config error. Answers keep the
// request's order.
func (s *Server) createTopicsAuthorized(ctx context.Context, r *request, req *kmsg.CreateTopicsRequest, mutations *quota.Mutation) *kmsg.CreateTopicsResponse {
	if s.authorizer == nil || !s.controller.IsActive() {
		return s.handleCreateTopics(ctx, req, mutations)
	}
	name := func(t kmsg.CreateTopicsRequestTopic) string { return t.Topic }
	names := topicsOf(req.Topics, name)
	creatable := s.authorizeTopics(r, acl.OpCreate, names)
	count := map[string]int{}
	for _, t := range names {
		count[t]++
	}
	cluster := s.authorizeCluster(r, acl.OpCreate)
	for t := range creatable {
		creatable[t] = creatable[t] || cluster || count[t] > 1
	}
	describable := s.authorizeTopics(r, acl.OpDescribeConfigs, names)
	allowed := *req
	allowed.Topics, _ = splitTopics(req.Topics, creatable, name)
	created := s.handleCreateTopics(ctx, &allowed, mutations)
	resp := *created
	resp.Topics = nil
	next := 0
	for _, t := range req.Topics {
		var rt kmsg.CreateTopicsResponseTopic
		if creatable[t.Topic] {
			rt, next = created.Topics[next], next+1
			if rt.ErrorCode == 0 && !describable[t.Topic] {
				rt.NumPartitions, rt.ReplicationFactor, rt.Configs, rt.TopicID = -1, -1, nil, [16]byte{}
			}
		} else {
			rt = kmsg.NewCreateTopicsResponseTopic()
			rt.Topic, rt.ErrorCode, rt.ErrorMessage = t.Topic, kerr.TopicAuthorizationFailed.Code, kmsg.StringPtr("Authorization failed.")
		}
		if !describable[t.Topic] && (rt.ErrorCode == 0 || !creatable[t.Topic]) {
			rt.ConfigErrorCode = kerr.TopicAuthorizationFailed.Code
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return &resp
}

// createPartitionsAuthorized handles a CreatePartitions: ALTER on each
// topic, else TOPIC_AUTHORIZATION_FAILED ("The topic authorization is
// failed.", as 2.8 words it).
func (s *Server) createPartitionsAuthorized(ctx context.Context, r *request, req *kmsg.CreatePartitionsRequest, mutations *quota.Mutation) *kmsg.CreatePartitionsResponse {
	if s.authorizer == nil || !s.controller.IsActive() {
		return s.handleCreatePartitions(ctx, req, mutations)
	}
	name := func(t kmsg.CreatePartitionsRequestTopic) string { return t.Topic }
	alterable := s.authorizeTopics(r, acl.OpAlter, topicsOf(req.Topics, name))
	count := map[string]int{}
	for _, t := range req.Topics {
		count[t.Topic]++
	}
	for t := range alterable {
		alterable[t] = alterable[t] || count[t] > 1 // the handler answers duplicates
	}
	allowed, denied := *req, *req
	allowed.Topics, denied.Topics = splitTopics(req.Topics, alterable, name)
	resp := s.handleCreatePartitions(ctx, &allowed, mutations)
	for _, t := range denied.Topics {
		rt := kmsg.NewCreatePartitionsResponseTopic()
		rt.Topic, rt.ErrorCode, rt.ErrorMessage = t.Topic, kerr.TopicAuthorizationFailed.Code, kmsg.StringPtr("The topic authorization is failed.")
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// deleteTopicDenied is DeleteTopics' check of one topic, 0 when it may be
// deleted: DELETE on the topic, else TOPIC_AUTHORIZATION_FAILED — before
// an unknown topic's UNKNOWN_TOPIC_OR_PARTITION, as 2.8 orders them — and
// for a topic asked by id without DESCRIBE, no name in the answer either.
// Topic deletion being disabled comes first.
func (s *Server) deleteTopicDenied(r *request, topic string, byID bool) (code int16, hideName bool) {
	if s.authorizer == nil || !s.cfg.DeleteTopicEnable {
		return 0, false
	}
	if byID && !s.authorize(r, acl.OpDescribe, acl.ResourceTopic, topic) {
		return kerr.TopicAuthorizationFailed.Code, true
	}
	if !s.authorize(r, acl.OpDelete, acl.ResourceTopic, topic) {
		return kerr.TopicAuthorizationFailed.Code, false
	}
	return 0, false
}

// configResourceDenied is the error of a config resource the principal may
// not perform op (DESCRIBE_CONFIGS or ALTER_CONFIGS) on: a broker or a
// broker's loggers need it on the cluster (CLUSTER_AUTHORIZATION_FAILED), a
// topic on the topic (TOPIC_AUTHORIZATION_FAILED). 0 when it may, and for
// other types, which the handlers refuse.
func (s *Server) configResourceDenied(r *request, op acl.Operation, typ kmsg.ConfigResourceType, name string) int16 {
	switch int8(typ) {
	case configResourceBroker, configResourceBrokerLogger:
		if !s.authorizeCluster(r, op) {
			return kerr.ClusterAuthorizationFailed.Code
		}
	case configResourceTopic:
		if !s.authorize(r, op, acl.ResourceTopic, name) {
			return kerr.TopicAuthorizationFailed.Code
		}
	}
	return 0
}

// refusedConfigResource is a config resource the principal may not act on,
// with its error.
type refusedConfigResource struct {
	typ  kmsg.ConfigResourceType
	name string
	code int16
}

// splitConfigResources keeps the resources of a config request the
// principal may perform op on and lists the others with their errors.
func splitConfigResources[R any](s *Server, r *request, op acl.Operation, resources []R, id func(R) (kmsg.ConfigResourceType, string)) (allowed []R, refused []refusedConfigResource) {
	for _, res := range resources {
		typ, name := id(res)
		if code := s.configResourceDenied(r, op, typ, name); code != 0 {
			refused = append(refused, refusedConfigResource{typ, name, code})
			continue
		}
		allowed = append(allowed, res)
	}
	return allowed, refused
}

// describeConfigsAuthorized handles a DescribeConfigs: a refused resource
// answers its error with Kafka's message for it and no configs.
func (s *Server) describeConfigsAuthorized(r *request, req *kmsg.DescribeConfigsRequest) *kmsg.DescribeConfigsResponse {
	if s.authorizer == nil {
		return s.handleDescribeConfigs(req)
	}
	allowed := *req
	var refused []refusedConfigResource
	allowed.Resources, refused = splitConfigResources(s, r, acl.OpDescribeConfigs, req.Resources,
		func(res kmsg.DescribeConfigsRequestResource) (kmsg.ConfigResourceType, string) {
			return res.ResourceType, res.ResourceName
		})
	resp := s.handleDescribeConfigs(&allowed)
	for _, f := range refused {
		rr := kmsg.NewDescribeConfigsResponseResource()
		rr.ResourceType, rr.ResourceName, rr.ErrorCode = f.typ, f.name, f.code
		rr.ErrorMessage = kmsg.StringPtr("Cluster authorization failed.")
		if f.code == kerr.TopicAuthorizationFailed.Code {
			rr.ErrorMessage = kmsg.StringPtr("Topic authorization failed.")
		}
		resp.Resources = append(resp.Resources, rr)
	}
	return resp
}

// alterConfigsAuthorized handles an AlterConfigs: a refused resource
// answers its error, without a message, and is left alone.
func (s *Server) alterConfigsAuthorized(r *request, req *kmsg.AlterConfigsRequest) *kmsg.AlterConfigsResponse {
	if s.authorizer == nil {
		return s.handleAlterConfigs(req)
	}
	allowed := *req
	var refused []refusedConfigResource
	allowed.Resources, refused = splitConfigResources(s, r, acl.OpAlterConfigs, req.Resources,
		func(res kmsg.AlterConfigsRequestResource) (kmsg.ConfigResourceType, string) {
			return res.ResourceType, res.ResourceName
		})
	resp := s.handleAlterConfigs(&allowed)
	for _, f := range refused {
		rr := kmsg.NewAlterConfigsResponseResource()
		rr.ResourceType, rr.ResourceName, rr.ErrorCode = f.typ, f.name, f.code
		resp.Resources = append(resp.Resources, rr)
	}
	return resp
}

// incrementalAlterConfigsAuthorized is alterConfigsAuthorized for
// IncrementalAlterConfigs.
func (s *Server) incrementalAlterConfigsAuthorized(r *request, req *kmsg.IncrementalAlterConfigsRequest) *kmsg.IncrementalAlterConfigsResponse {
	if s.authorizer == nil {
		return s.handleIncrementalAlterConfigs(req)
	}
	allowed := *req
	var refused []refusedConfigResource
	allowed.Resources, refused = splitConfigResources(s, r, acl.OpAlterConfigs, req.Resources,
		func(res kmsg.IncrementalAlterConfigsRequestResource) (kmsg.ConfigResourceType, string) {
			return res.ResourceType, res.ResourceName
		})
	resp := s.handleIncrementalAlterConfigs(&allowed)
	for _, f := range refused {
		rr := kmsg.NewIncrementalAlterConfigsResponseResource()
		rr.ResourceType, rr.ResourceName, rr.ErrorCode = f.typ, f.name, f.code
		resp.Resources = append(resp.Resources, rr)
	}
	return resp
}
