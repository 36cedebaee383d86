package broker

import (
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/acl"
	"github.com/zkafka/zkafka/adminzk"
	"github.com/zkafka/zkafka/zkpaths"
)

// aclAuthorizerClasses are the authorizer.class.name values of Kafka 2.8's
// ZooKeeper ACL authorizer: its class and the deprecated one it replaced.
var aclAuthorizerClasses = []string{"kafka.security.authorizer.AclAuthorizer", "kafka.security.auth.SimpleAclAuthorizer"}

// startAuthorizer configures the authorizer authorizer.class.name names, if
// any, as AclAuthorizer.configure does: it creates the ACL paths, starts
// listening to change notifications, then loads every ACL — in that order,
// so no change falls between the load and the listener.
func (s *Server) startAuthorizer() error {
	class := strings.TrimSpace(s.cfg.Properties["authorizer.class.name"])
	if class == "" {
		return nil
	}
	if !slices.Contains(aclAuthorizerClasses, class) {
		return fmt.Errorf("authorizer.class.name %s is not supported: this broker has kafka.security.authorizer.AclAuthorizer", class)
	}
	superUsers, err := acl.ParseSuperUsers(strings.TrimSpace(s.cfg.Properties["super.users"]))
	if err != nil {
		return fmt.Errorf("super.users: %w", err)
	}
	store := s.adminZk().ACLStore()
	if err := store.CreatePaths(); err != nil {
		return err
	}
	s.authorizer = acl.New(store, acl.Config{
		SuperUsers:           superUsers,
		AllowEveryoneIfNoACL: strings.EqualFold(strings.TrimSpace(s.cfg.Properties["allow.everyone.if.no.acl.found"]), "true"),
	}, s.log.Named("kafka.authorizer.logger"))
	for _, changes := range []string{zkpaths.ACLLiteralChanges, zkpaths.ACLExtendedChanges} {
		s.startChangeListener(s.ctx, s.log.Named("acl-change-listener"), changes, time.Now, func(data []byte) error {
			r, err := adminzk.DecodeACLChange(changes, data)
			if err != nil {
				s.log.Error("Ignoring a malformed ACL change notification", zap.String("path", changes), zap.Error(err))
				return nil
			}
			return s.authorizer.Refresh(r)
		})
	}
	return s.authorizer.Load()
}

// clientIP is the client's address as the authorizer matches hosts
// (InetAddress.getHostAddress: no port, no slash).
func (r *request) clientIP() string {
	host, _, err := net.SplitHostPort(r.remote)
	if err != nil {
		return r.remote
	}
	return host
}

// authorize reports whether the request's principal may perform op on the
// named resource; everything is allowed without an authorizer.
func (s *Server) authorize(r *request, op acl.Operation, typ acl.ResourceType, name string) bool {
	return s.authorizer == nil || s.authorizer.Authorize(r.principal(), r.clientIP(), op, typ, name)
}

// authorizeCluster is authorize on the Cluster resource.
func (s *Server) authorizeCluster(r *request, op acl.Operation) bool {
	return s.authorize(r, op, acl.ResourceCluster, acl.ClusterName)
}

// authorizeTopics splits topics into those the principal may perform op on
// and the others (Kafka's filterByAuthorized).
func (s *Server) authorizeTopics(r *request, op acl.Operation, topics []string) map[string]bool {
	ok := make(map[string]bool, len(topics))
	for _, t := range topics {
		if _, seen := ok[t]; !seen {
			ok[t] = s.authorize(r, op, acl.ResourceTopic, t)
		}
	}
	return ok
}

// deniedOn answers the request with code on every entry, in its own shape,
// when the principal may not perform op on the resource; nil when it may.
// It is the check of the APIs whose every entry shares one resource: the
// cluster (the inter-broker APIs need CLUSTER_ACTION, so a client without
// it changes nothing), a group, a transactional id.
func (s *Server) deniedOn(r *request, op acl.Operation, typ acl.ResourceType, name string, code int16) kmsg.Response {
	if s.authorize(r, op, typ, name) {
		return nil
	}
	return s.apis[r.hdr.APIKey].errorResponse(r.body, code)
}

// clusterDenied is deniedOn the cluster, with CLUSTER_AUTHORIZATION_FAILED.
func (s *Server) clusterDenied(r *request, op acl.Operation) kmsg.Response {
	return s.deniedOn(r, op, acl.ResourceCluster, acl.ClusterName, kerr.ClusterAuthorizationFailed.Code)
}

// findCoordinatorDenied is FindCoordinator's check before the batched v4:
// DESCRIBE on the group or the transactional id it looks up.
func (s *Server) findCoordinatorDenied(r *request, req *kmsg.FindCoordinatorRequest) kmsg.Response {
	if req.Version >= 4 {
		return nil
	}
	if code := s.coordinatorKeyDenied(r, req.CoordinatorType, req.CoordinatorKey); code != 0 {
		return s.apis[r.hdr.APIKey].errorResponse(req, code)
	}
	return nil
}

// coordinatorKeyDenied is the error of a FindCoordinator key the principal
// may not DESCRIBE (a group, or with key type 1 a transactional id), 0 if
// it may.
func (s *Server) coordinatorKeyDenied(r *request, keyType int8, key string) int16 {
	switch {
	case keyType == 0 && !s.authorize(r, acl.OpDescribe, acl.ResourceGroup, key):
		return kerr.GroupAuthorizationFailed.Code
	case keyType == 1 && !s.authorize(r, acl.OpDescribe, acl.ResourceTransactionalID, key):
		return kerr.TransactionalIDAuthorizationFailed.Code
	}
	return 0
}

// initProducerIDDenied is InitProducerId's check: WRITE on the
// transactional id, or for an idempotent producer IDEMPOTENT_WRITE on the
// cluster or WRITE on some topic.
func (s *Server) initProducerIDDenied(r *request, req *kmsg.InitProducerIDRequest) kmsg.Response {
	if req.TransactionalID != nil {
		return s.deniedOn(r, acl.OpWrite, acl.ResourceTransactionalID, *req.TransactionalID, kerr.TransactionalIDAuthorizationFailed.Code)
	}
	if s.authorizer == nil || s.authorizeCluster(r, acl.OpIdempotentWrite) ||
		s.authorizer.AuthorizeByResourceType(r.principal(), r.clientIP(), acl.OpWrite, acl.ResourceTopic) {
		return nil
	}
	return s.apis[r.hdr.APIKey].errorResponse(r.body, kerr.ClusterAuthorizationFailed.Code)
}

// topicSet is the topics of a request the principal may act on, for the
// handlers that check each topic themselves: nil allows every topic, which
// is what a broker without an authorizer passes (and allocates nothing).
type topicSet map[string]bool

func (ts topicSet) allows(topic string) bool { return ts == nil || ts[topic] }

// topicFilter is authorizeTopics as a topicSet: nil without an authorizer.
func (s *Server) topicFilter(r *request, op acl.Operation, topics []string) topicSet {
	if s.authorizer == nil {
		return nil
	}
	return s.authorizeTopics(r, op, topics)
}
