package broker

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
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

// aclChangeExpiration is how old an ACL change notification must be
// before a broker deletes it (ZkNodeChangeNotificationListener's default).
const aclChangeExpiration = 15 * time.Minute

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
	n := &aclNotifications{s: s, log: s.log.Named("acl-change-listener"), wake: make(chan struct{}, 1),
		lastExecuted: map[string]int64{zkpaths.ACLLiteralChanges: -1, zkpaths.ACLExtendedChanges: -1}}
	s.zk.OnNewSession(n.wakeUp)
	s.wg.Go(func() { n.run(s.ctx) })
	return s.authorizer.Load()
}

// aclNotifications is Kafka's ZkNodeChangeNotificationListener for the two
// ACL change stores: one goroutine re-reads the resource each new
// notification names, then deletes notifications older than
// aclChangeExpiration. Watches and new sessions only wake it.
type aclNotifications struct {
	s            *Server
	log          *zap.Logger
	wake         chan struct{}
	lastExecuted map[string]int64 // per change path; only run touches it
	now          func() time.Time // tests move time forward; nil is time.Now
}

func (n *aclNotifications) wakeUp() {
	select {
	case n.wake <- struct{}{}:
	default:
	}
}

func (n *aclNotifications) run(ctx context.Context) {
	for {
		var watches []<-chan zk.Event
		var retry <-chan time.Time
		for _, p := range []string{zkpaths.ACLLiteralChanges, zkpaths.ACLExtendedChanges} {
			w, err := n.process(p)
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				n.log.Warn("Cannot process ACL change notifications; retrying", zap.String("path", p), zap.Error(err))
				retry = time.After(time.Second)
			}
			watches = append(watches, w)
		}
		select {
		case <-ctx.Done():
			return
		case <-watches[0]:
		case <-watches[1]:
		case <-n.wake:
		case <-retry:
		}
	}
}

// process lists one change path (setting its watch), refreshes the
// resource of each notification not seen yet, in sequence order, and
// purges the expired ones.
func (n *aclNotifications) process(changes string) (<-chan zk.Event, error) {
	children, _, watch, err := n.s.zk.ChildrenW(changes)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", changes, err)
	}
	seqs := map[string]int64{}
	for _, c := range children {
		if seq, err := zkpaths.SequenceNumber(c); err == nil && strings.HasPrefix(c, zkpaths.ACLChangeSequencePrefix) {
			seqs[c] = seq
		}
	}
	sort.Slice(children, func(i, j int) bool { return seqs[children[i]] < seqs[children[j]] })
	now := time.Now
	if n.now != nil {
		now = n.now
	}
	for _, c := range children {
		seq, ok := seqs[c]
		if !ok || seq <= n.lastExecuted[changes] {
			continue
		}
		path := changes + "/" + c
		data, _, err := n.s.zk.Get(path)
		if errors.Is(err, zk.ErrNoNode) {
			continue // purged by another broker meanwhile
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		if r, err := adminzk.DecodeACLChange(changes, data); err != nil {
			n.log.Error("Ignoring a malformed ACL change notification", zap.String("path", path), zap.Error(err))
		} else if err := n.s.authorizer.Refresh(r); err != nil {
			return nil, err
		}
		n.lastExecuted[changes] = seq
	}
	// Every broker purges, so losing a race to delete is fine.
	for c := range seqs {
		path := changes + "/" + c
		exists, stat, err := n.s.zk.Exists(path)
		if err != nil || !exists || now().Sub(time.UnixMilli(stat.Ctime)) <= aclChangeExpiration {
			continue
		}
		if err := n.s.zk.Delete(path, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
			n.log.Warn("Cannot delete an expired ACL change notification", zap.String("path", path), zap.Error(err))
		}
	}
	return watch, nil
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
