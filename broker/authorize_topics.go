package broker

// Topic checks of the APIs whose entries name topics (Kafka's
// filterByAuthorized): the request is split, the authorized topics go to
// the handler as a request of their own, and the others are answered with
// the API's error response for TOPIC_AUTHORIZATION_FAILED and merged back.
// The handlers stay unaware of ACLs.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/acl"
	"github.com/zkafka/zkafka/quota"
)

// produceAuthorized handles a Produce: WRITE on the transactional id of a
// transactional request, else TRANSACTIONAL_ID_AUTHORIZATION_FAILED on
// every partition; WRITE on each topic.
func (s *Server) produceAuthorized(ctx context.Context, r *request, req *kmsg.ProduceRequest) *kmsg.ProduceResponse {
	if s.authorizer == nil {
		return s.handleProduce(ctx, req)
	}
	if req.TransactionID != nil && !s.authorize(r, acl.OpWrite, acl.ResourceTransactionalID, *req.TransactionID) {
		return s.apis[r.hdr.APIKey].errorResponse(req, kerr.TransactionalIDAuthorizationFailed.Code).(*kmsg.ProduceResponse)
	}
	ok := s.authorizeTopics(r, acl.OpWrite, topicsOf(req.Topics, func(t kmsg.ProduceRequestTopic) string { return t.Topic }))
	allowed, denied := *req, *req
	allowed.Topics, denied.Topics = splitTopics(req.Topics, ok, func(t kmsg.ProduceRequestTopic) string { return t.Topic })
	resp := s.handleProduce(ctx, &allowed)
	if len(denied.Topics) > 0 {
		resp.Topics = append(resp.Topics, s.apis[r.hdr.APIKey].errorResponse(&denied, kerr.TopicAuthorizationFailed.Code).(*kmsg.ProduceResponse).Topics...)
	}
	return resp
}

// fetchAuthorized handles a Fetch: a follower's needs CLUSTER_ACTION, else
// every partition is TOPIC_AUTHORIZATION_FAILED (as 2.8 answers); a
// consumer's needs READ on each topic.
func (s *Server) fetchAuthorized(ctx context.Context, r *request, req *kmsg.FetchRequest) *fetchResult {
	if s.authorizer == nil {
		return s.handleFetch(ctx, req, r.conn.zeroCopy)
	}
	name := func(t kmsg.FetchRequestTopic) string { return t.Topic }
	ok := map[string]bool{}
	if req.ReplicaID >= 0 {
		cluster := s.authorizeCluster(r, acl.OpClusterAction)
		for _, t := range req.Topics {
			ok[t.Topic] = cluster
		}
	} else {
		ok = s.authorizeTopics(r, acl.OpRead, topicsOf(req.Topics, name))
	}
	allowed, denied := *req, *req
	allowed.Topics, denied.Topics = splitTopics(req.Topics, ok, name)
	res := s.handleFetch(ctx, &allowed, r.conn.zeroCopy)
	if len(denied.Topics) > 0 {
		// After the allowed topics: the files' indexes stay right.
		res.resp.Topics = append(res.resp.Topics, s.apis[r.hdr.APIKey].errorResponse(&denied, kerr.TopicAuthorizationFailed.Code).(*kmsg.FetchResponse).Topics...)
	}
	return res
}

// metadataAuthorized handles a Metadata request: a requested topic the
// principal may not DESCRIBE is TOPIC_AUTHORIZATION_FAILED, and so is a
// missing one it may not CREATE (on the cluster or the topic) when the
// request would create it; a request for every topic lists only those it
// may describe. The authorized operations come from the authorizer, the
// cluster's only for a principal that may DESCRIBE the cluster.
func (s *Server) metadataAuthorized(r *request, req *kmsg.MetadataRequest, mutations *quota.Mutation) *kmsg.MetadataResponse {
	if s.authorizer == nil {
		return s.handleMetadata(req, r.listener, mutations)
	}
	name := func(t kmsg.MetadataRequestTopic) string { return derefString(t.Topic) }
	ok := s.authorizeTopics(r, acl.OpDescribe, topicsOf(req.Topics, name))
	autoCreate := s.cfg.AutoCreateTopicsEnable && (req.Version < 4 || req.AllowAutoTopicCreation)
	if autoCreate && !s.authorizeCluster(r, acl.OpCreate) {
		for t, described := range ok {
			if _, _, exists := s.metadata.Topic(t); described && !exists {
				ok[t] = s.authorize(r, acl.OpCreate, acl.ResourceTopic, t)
			}
		}
	}
	allowed, denied := *req, *req
	allowed.Topics, denied.Topics = splitTopics(req.Topics, ok, name)
	if req.Topics != nil && allowed.Topics == nil {
		allowed.Topics = []kmsg.MetadataRequestTopic{} // not "every topic"
	}
	resp := s.handleMetadata(&allowed, r.listener, mutations)
	if req.Topics == nil || (req.Version == 0 && len(req.Topics) == 0) {
		kept := resp.Topics[:0]
		for _, t := range resp.Topics {
			if s.authorize(r, acl.OpDescribe, acl.ResourceTopic, derefString(t.Topic)) {
				kept = append(kept, t)
			}
		}
		resp.Topics = kept
	}
	for _, t := range denied.Topics {
		mt := kmsg.NewMetadataResponseTopic()
		mt.Topic, mt.ErrorCode, mt.IsInternal = t.Topic, kerr.TopicAuthorizationFailed.Code, internalTopics[derefString(t.Topic)]
		resp.Topics = append(resp.Topics, mt)
	}
	if req.IncludeClusterAuthorizedOperations && req.Version >= 8 && req.Version <= 10 {
		resp.AuthorizedOperations = 0 // none without DESCRIBE, as 2.8 answers
		if s.authorizeCluster(r, acl.OpDescribe) {
			resp.AuthorizedOperations = s.authorizedOperations(r, acl.ResourceCluster, acl.ClusterName)
		}
	}
	if req.IncludeTopicAuthorizedOperations && req.Version >= 8 {
		for i, t := range resp.Topics {
			if t.ErrorCode != kerr.TopicAuthorizationFailed.Code {
				resp.Topics[i].AuthorizedOperations = s.authorizedOperations(r, acl.ResourceTopic, derefString(t.Topic))
			}
		}
	}
	return resp
}

func topicsOf[T any](ts []T, name func(T) string) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = name(t)
	}
	return out
}

// splitTopics divides a request's topics by the authorization of their names.
func splitTopics[T any](ts []T, ok map[string]bool, name func(T) string) (allowed, denied []T) {
	for _, t := range ts {
		if ok[name(t)] {
			allowed = append(allowed, t)
		} else {
			denied = append(denied, t)
		}
	}
	return allowed, denied
}
