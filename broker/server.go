package broker

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/acl"
	"github.com/zkafka/zkafka/brokerconfig"
	"github.com/zkafka/zkafka/controller"
	"github.com/zkafka/zkafka/coordinator"
	"github.com/zkafka/zkafka/internal/loglevels"
	"github.com/zkafka/zkafka/internal/zkclient"
	"github.com/zkafka/zkafka/kafka"
	"github.com/zkafka/zkafka/quota"
	"github.com/zkafka/zkafka/security"
	"github.com/zkafka/zkafka/storage"
	"github.com/zkafka/zkafka/transaction"
	"github.com/zkafka/zkafka/wire"
	"github.com/zkafka/zkafka/zkpaths"
)

// Server is one Kafka broker: its ZooKeeper session and registration, its
// logs and replicas, its listeners, and the controller component that acts
// only while this broker holds /controller.
type Server struct {
	cfg  *brokerconfig.Config
	log  *zap.Logger
	zk   *zkclient.Client
	logs *storage.Manager

	// clock is the broker's wall clock and timers: the system's, moved by
	// zkafka.clock.skew.ms (static, or the dynamic /config/brokers layers).
	clock *kafka.SkewedClock

	brokerID    int32
	clusterID   string
	brokerEpoch atomic.Int64            // czxid of /brokers/ids/<id>
	advertised  []brokerconfig.Listener // advertised listeners with bound ports filled in

	metadata   *MetadataCache
	configs    *configManager // dynamic configs: /config/brokers layers, /config/changes
	replicas   *ReplicaManager
	controller *controller.Controller
	// levels are the per-logger levels of the broker's logger (BROKER_LOGGER); nil without.
	levels *loglevels.Levels
	// features is /feature's finalized features, for ApiVersions (watchFeatures).
	features atomic.Pointer[finalizedFeatures]
	apis     map[int16]api

	// groupCoordinator serves the groups of the __consumer_offsets
	// partitions this broker leads.
	groupCoordinator *coordinator.Coordinator
	// txnCoordinator serves the transactional ids of the
	// __transaction_state partitions this broker leads, with producer ids
	// from producerIDs and markers sent through markerSender.
	txnCoordinator *transaction.Coordinator
	producerIDs    *producerIDManager
	markerSender   *markerSender

	listeners []*listener
	// interBroker is how this broker meets the inter-broker listener's
	// security protocol when it connects to other brokers (security.go).
	interBroker wire.Security
	// scram are the SCRAM credentials of /config/users.
	scram  scramCredentials
	quotas *connectionQuotas // max.connections and max.connections.per.ip over all listeners
	// clientQuotas are the produce, fetch and request quotas of users and
	// client ids (client_quotas.go).
	clientQuotas *quota.Manager
	// connectionRates are the IP connection-rate quotas the listeners obey.
	connectionRates *quota.ConnectionRates
	// replicationQuotas are the leader and follower replication throttles
	// (replication_quotas.go).
	replicationQuotas replicationQuotas
	// fetchSessions are the incremental fetch sessions of followers and consumers (fetch_session.go).
	fetchSessions *fetchSessionCache
	memoryPool    *memoryPool // queued.max.request.bytes; nil when unbounded
	// authorizer is authorizer.class.name's ACL authorizer; nil allows everything.
	authorizer *acl.Authorizer
	// tokens are the delegation tokens (KIP-48); disabled without a secret key.
	tokens *delegationTokens
	// fatal receives what must stop the broker at once, without a controlled shutdown (Fatal).
	fatal     chan error
	ctx       context.Context // cancelled at shutdown; parent of every request
	cancel    context.CancelFunc
	wg        sync.WaitGroup
	pprofAddr string // bound address of zkafka.pprof.listener, "" when off

	stopOnce sync.Once
	stopErr  error
}

// NewServer checks the configuration; Start brings the broker up.
func NewServer(cfg *brokerconfig.Config, logger *zap.Logger) *Server {
	if logger == nil {
		logger = zap.NewNop()
	}
	s := &Server{cfg: cfg, log: logger, brokerID: cfg.BrokerID, metadata: NewMetadataCache(), fatal: make(chan error, 1), clock: &kafka.SkewedClock{}}
	s.clock.SetSkew(cfg.ClockSkew)
	return s
}

// Start runs Kafka's startup sequence: connect to ZooKeeper and create the
// top-level paths, get or create the cluster id, resolve the broker id, recover
// the logs, bind the listeners, register /brokers/ids/<id>, write
// meta.properties, join the controller election and start serving.
func (s *Server) Start(ctx context.Context) (err error) {
	s.ctx, s.cancel = context.WithCancel(context.Background())
	defer func() {
		if err != nil {
			s.Shutdown()
		}
	}()
	for _, k := range s.cfg.Unknown {
		s.log.Warn("The configuration was supplied but isn't a known config", zap.String("key", k))
	}
	if err := s.connectZooKeeper(ctx); err != nil {
		return err
	}
	for _, p := range zkpaths.PersistentPaths {
		if err := s.zk.CreateIfMissing(p, nil); err != nil {
			return fmt.Errorf("create %s: %w", p, err)
		}
	}
	if s.clusterID, err = s.getOrCreateClusterID(); err != nil {
		return err
	}
	if err := s.resolveBrokerID(); err != nil {
		return err
	}
	// The controller adds the broker id to its own loggers.
	controllerLog := s.log
	s.log = s.log.With(zap.Int32("broker-id", s.brokerID))
	s.log.Info("Starting broker", zap.String("cluster-id", s.clusterID))
	s.configs = newConfigManager(s)
	s.replicationQuotas = newReplicationQuotas(s.cfg)
	s.fetchSessions = newFetchSessionCache(int(s.cfg.MaxIncrementalFetchSessions))
	if err := s.configs.loadBrokerConfigs(); err != nil {
		return err
	}
	s.clientQuotas = quota.New(quota.Config{Samples: int(s.cfg.QuotaWindowNum), Window: s.cfg.QuotaWindowSize})
	s.connectionRates = quota.NewConnectionRates(quota.Config{Samples: int(s.cfg.QuotaWindowNum), Window: s.cfg.QuotaWindowSize})
	if err := s.configs.loadQuotaConfigs(); err != nil {
		return err
	}
	if err := s.startDelegationTokens(); err != nil {
		return err
	}
	if err := s.startAuthorizer(); err != nil {
		return err
	}

	if s.logs, err = storage.NewManager(s.cfg.LogDirs, s.defaultLogConfig(), int(s.cfg.NumRecoveryThreadsPerDataDir), s.log); err != nil {
		return fmt.Errorf("load logs: %w", err)
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.logs.Run(s.ctx, s.clock.Now, s.cfg.LogRetentionCheckInterval, s.cfg.LogFlushOffsetCheckpointInterval, storage.ProducerExpiration{
			After: brokerconfig.NewReader(s.cfg.Properties).Ms("transactional.id.expiration.ms"), CheckInterval: storage.ProducerIDExpirationCheckInterval,
		})
	}()
	s.wg.Go(s.watchLogDirs)
	s.wg.Go(s.watchFeatures)
	if err := s.startPprof(); err != nil {
		return err
	}
	if err := s.bindListeners(); err != nil {
		return err
	}
	s.replicas = newReplicaManager(replicationConfigOf(s.cfg), s.brokerID, s.logs, s.zk, s.metadata, s.topicLogConfig, s.clock.Now, s.log.Named("replica-manager"))
	if s.cfg.AlterIsr {
		m := newAlterIsrManager(s.sendAlterIsr, s.log.Named("alter-isr"))
		s.replicas.stateWriter = m
		s.wg.Go(func() { m.run(s.ctx) })
	}
	s.replicas.followerQuota = s.replicationQuotas.follower
	s.replicas.interBroker = s.interBroker
	s.replicas.alterLogDirsQuota = s.replicationQuotas.alterLogDirs
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.replicas.run(s.ctx)
	}()
	s.apis = advertisedAPIs(s.cfg.BatchedCoordinatorAPIs, s.cfg.ConsumerGroupProtocol)
	if err := s.startGroupCoordinator(); err != nil {
		return err
	}
	if err := s.startTransactionCoordinator(); err != nil {
		return err
	}
	s.startLogCleaner()

	// The broker re-registers before the controller re-elects: callbacks run
	// in registration order.
	s.zk.OnNewSession(s.reregister)
	if err := s.register(ctx); err != nil {
		return err
	}
	for _, dir := range s.cfg.LogDirs {
		if err := storage.WriteMetaProperties(dir, storage.MetaProperties{BrokerID: s.brokerID, ClusterID: s.clusterID}); err != nil {
			return fmt.Errorf("write meta.properties: %w", err)
		}
	}
	s.controller = controller.New(controller.Config{
		BrokerID:                           s.brokerID,
		InterBrokerListener:                s.cfg.InterBrokerListenerName,
		UncleanLeaderElection:              s.configs.uncleanLeaderElection(),
		DeleteTopicEnable:                  s.cfg.DeleteTopicEnable,
		AutoLeaderRebalance:                s.cfg.AutoLeaderRebalanceEnable,
		LeaderImbalancePerBrokerPercentage: int(s.cfg.LeaderImbalancePerBrokerPercent),
		LeaderImbalanceCheckInterval:       s.cfg.LeaderImbalanceCheckInterval,
		FeatureVersioning:                  s.cfg.FeatureVersioning,
		AlterIsr:                           s.cfg.AlterIsr,
		Security:                           s.interBroker,
		Logger:                             controllerLog,
	}, s.zk)
	s.controller.Start(s.ctx)
	s.configs.start(s.ctx)
	for _, l := range s.listeners {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			l.serve()
		}()
	}
	s.log.Info("Started broker", zap.Stringers("advertised-listeners", listenerStringers(s.advertised)))
	return nil
}

// Fatal delivers the error that must stop the broker at once, as Kafka's Exit.halt(1) does: no
// controlled shutdown, no goodbye to ZooKeeper (the session expires), the logs recovered at the next
// start. The process running the broker exits on it.
func (s *Server) Fatal() <-chan error { return s.fatal }

// watchLogDirs takes log directories offline as they fail (storage.Manager.OfflineDirs). Once every
// one has failed the broker cannot serve anything, and like Kafka's LogManager it halts: a full disk
// stops the broker instead of leaving it leader of partitions it cannot write. With directories
// left Kafka also moves the failed one's partitions offline and tells the controller through
// /log_dir_event_notification; zkafka does not: their logs refuse writes with KAFKA_STORAGE_ERROR.
func (s *Server) watchLogDirs() {
	offline := 0 // OfflineDirs delivers each directory once
	for {
		select {
		case <-s.ctx.Done():
			return
		case dir := <-s.logs.OfflineDirs():
			offline++
			s.log.Warn("Stopping serving logs in dir", zap.String("dir", dir))
			if dirs := s.logs.Dirs(); offline == len(dirs) {
				s.log.Error("Shutdown broker because all log dirs have failed", zap.Strings("log-dirs", dirs))
				s.fatal <- fmt.Errorf("all log dirs in %s have failed", strings.Join(dirs, ", "))
				return
			}
		}
	}
}

func listenerStringers(ls []brokerconfig.Listener) []fmt.Stringer {
	out := make([]fmt.Stringer, len(ls))
	for i, l := range ls {
		out[i] = l
	}
	return out
}

// connectZooKeeper retries until zookeeper.connection.timeout.ms, logging each
// failure, so a broker started before ZooKeeper waits instead of dying.
// A refused SASL login ends the start at once, as 2.8's ZooKeeperClientAuthFailedException does.
func (s *Server) connectZooKeeper(ctx context.Context) error {
	zkSec, err := security.ZooKeeperClientSecurity(s.cfg.Properties, &s.cfg.ZooKeeperSetACL)
	if err != nil {
		if errors.Is(err, security.ErrConfig) {
			return err
		}
		return fmt.Errorf("%w: %w", err, brokerconfig.ErrConfig)
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.ZooKeeperConnectionTimeout)
	defer cancel()
	backoff := 100 * time.Millisecond
	for {
		attempt, cancelAttempt := context.WithTimeout(ctx, 5*time.Second)
		zkc, err := zkclient.Connect(attempt, zkclient.Config{
			Connect: s.cfg.ZooKeeperConnect, SessionTimeout: s.cfg.ZooKeeperSessionTimeout, Logger: s.log,
			SASL: zkSec.Login, TLS: zkSec.TLS, SecureACLs: zkSec.SecureACLs,
		})
		cancelAttempt()
		if err == nil {
			s.zk = zkc
			return nil
		}
		if errors.Is(err, zkclient.ErrSASLAuthFailed) {
			return fmt.Errorf("connect to ZooKeeper %s: %w", s.cfg.ZooKeeperConnect, err)
		}
		s.log.Warn("Waiting for ZooKeeper", zap.String("zookeeper.connect", s.cfg.ZooKeeperConnect), zap.Error(err))
		select {
		case <-ctx.Done():
			return fmt.Errorf("connect to ZooKeeper %s: %w", s.cfg.ZooKeeperConnect, err)
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 2*time.Second)
	}
}

func (s *Server) getOrCreateClusterID() (string, error) {
	for {
		data, _, err := s.zk.Get(zkpaths.ClusterID)
		if err == nil {
			c, err := zkpaths.DecodeClusterIDData(data)
			if err != nil {
				return "", fmt.Errorf("read %s: %w", zkpaths.ClusterID, err)
			}
			return c.ID, nil
		}
		if !errors.Is(err, zk.ErrNoNode) {
			return "", fmt.Errorf("read %s: %w", zkpaths.ClusterID, err)
		}
		id := zkpaths.NewClusterID()
		err = s.zk.CreateIfMissing(zkpaths.ClusterID, zkpaths.ClusterIDData{ID: id}.Encode())
		if err != nil {
			return "", fmt.Errorf("create %s: %w", zkpaths.ClusterID, err)
		}
		// Re-read: another broker may have created it first.
	}
}

// resolveBrokerID checks meta.properties in every log dir against the cluster
// id and broker.id, and generates an id through /brokers/seqid when broker.id
// is -1 and no log dir remembers one.
func (s *Server) resolveBrokerID() error {
	stored := int32(-1)
	for _, dir := range s.cfg.LogDirs {
		meta, err := storage.ReadMetaProperties(dir)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("log dir %s: %w", dir, err)
		}
		if meta.ClusterID != "" && meta.ClusterID != s.clusterID {
			return fmt.Errorf("the cluster id %s does not match the stored cluster id %s in %s/meta.properties: the broker is trying to join the wrong cluster", s.clusterID, meta.ClusterID, dir)
		}
		if stored >= 0 && meta.BrokerID != stored {
			return fmt.Errorf("log dirs disagree on broker.id: %d and %d", stored, meta.BrokerID)
		}
		stored = meta.BrokerID
	}
	switch {
	case s.brokerID >= 0 && stored >= 0 && s.brokerID != stored:
		return fmt.Errorf("configured broker.id %d doesn't match stored broker.id %d in meta.properties", s.brokerID, stored)
	case s.brokerID >= 0:
		return nil
	case stored >= 0:
		s.brokerID = stored
		return nil
	case !s.cfg.BrokerIDGenerationEnable:
		return fmt.Errorf("broker.id is not set and broker.id.generation.enable is false: %w", brokerconfig.ErrConfig)
	}
	stat, err := s.zk.Set(zkpaths.BrokerSeqID, nil, -1)
	if err != nil {
		return fmt.Errorf("generate a broker id through %s: %w", zkpaths.BrokerSeqID, err)
	}
	s.brokerID = stat.Version + s.cfg.ReservedBrokerMaxID
	return nil
}

// defaultLogConfig is the log config of a topic without overrides: the
// broker's effective log.* configs, dynamic ones included.
func (s *Server) defaultLogConfig() storage.LogConfig {
	return s.configs.logDefaults()
}

// topicLogConfig merges /config/topics/<t> over the broker defaults, for a
// partition created here; the topic's replication throttles are applied
// from the same read.
func (s *Server) topicLogConfig(topic string) (storage.LogConfig, error) {
	c := s.defaultLogConfig()
	data, _, err := s.zk.Get(zkpaths.TopicConfigPath(topic))
	if errors.Is(err, zk.ErrNoNode) {
		s.applyReplicationThrottles(topic, nil)
		return c, nil
	}
	if err != nil {
		return c, fmt.Errorf("read config of topic %s: %w", topic, err)
	}
	ec, err := zkpaths.DecodeEntityConfig(data)
	if err != nil {
		return c, fmt.Errorf("config of topic %s: %w", topic, err)
	}
	if err := brokerconfig.ApplyTopicConfig(&c, ec.Config); err != nil {
		return c, fmt.Errorf("config of topic %s: %w", topic, err)
	}
	s.applyReplicationThrottles(topic, ec.Config)
	return c, nil
}

// bindListeners opens every listener; an advertised port of 0 (tests bind
// port 0) takes the bound port of the listener of the same name.
func (s *Server) bindListeners() error {
	quotas, err := newConnectionQuotas(s.cfg, s.connectionRates)
	if err != nil {
		return err
	}
	s.quotas, s.memoryPool = quotas, newMemoryPool(s.cfg.QueuedMaxRequestBytes)
	if s.interBroker, err = interBrokerSecurity(s.cfg); err != nil {
		return err
	}
	bound := map[string]int32{}
	for _, cfgL := range s.cfg.Listeners {
		sec, err := newListenerSecurity(s.cfg, cfgL)
		if err != nil {
			return err
		}
		ln, err := net.Listen("tcp", net.JoinHostPort(cfgL.Host, strconv.Itoa(int(cfgL.Port))))
		if err != nil {
			return fmt.Errorf("listener %s: %w", cfgL, err)
		}
		port := int32(ln.Addr().(*net.TCPAddr).Port)
		bound[cfgL.Name] = port
		s.listeners = append(s.listeners, newListener(s, cfgL.Name, ln, sec))
	}
	for _, a := range s.cfg.AdvertisedListeners {
		if a.Port == 0 {
			a.Port = bound[a.Name]
		}
		if a.Host == "" {
			// Kafka advertises the canonical host name for an empty host.
			if h, err := os.Hostname(); err == nil {
				a.Host = h
			}
		}
		s.advertised = append(s.advertised, a)
	}
	return nil
}

// ListenerAddr returns the bound address of the named listener.
func (s *Server) ListenerAddr(name string) (string, bool) {
	for _, l := range s.listeners {
		if l.name == name {
			return l.ln.Addr().String(), true
		}
	}
	return "", false
}

// BrokerID returns the broker's id (resolved at start when broker.id is -1).
func (s *Server) BrokerID() int32 { return s.brokerID }

// ClusterID returns the cluster id from /cluster/id.
func (s *Server) ClusterID() string { return s.clusterID }

// Controller returns the broker's controller component.
func (s *Server) Controller() *controller.Controller { return s.controller }

// ZooKeeper returns the broker's ZooKeeper session (tests expire it).
func (s *Server) ZooKeeper() *zkclient.Client { return s.zk }

// Shutdown stops serving, leaves the controller election, deregisters
// /brokers/ids/<id>, closes the logs cleanly and closes the ZooKeeper session.
func (s *Server) Shutdown() error {
	s.stopOnce.Do(func() {
		s.log.Info("Shutting down broker")
		s.controlledShutdown()
		for _, l := range s.listeners {
			l.close()
		}
		if s.controller != nil {
			s.controller.Stop()
		}
		if s.cancel != nil {
			s.cancel()
		}
		s.wg.Wait()
		if s.groupCoordinator != nil {
			s.groupCoordinator.Shutdown()
		}
		if s.txnCoordinator != nil {
			s.txnCoordinator.Shutdown()
			s.markerSender.close()
		}
		if s.replicas != nil {
			s.replicas.shutdown()
		}
		var errs []error
		if s.zk != nil && s.brokerEpoch.Load() != 0 {
			if err := s.deregister(); err != nil {
				errs = append(errs, err)
			}
		}
		if s.logs != nil {
			errs = append(errs, s.logs.Close())
		}
		if s.zk != nil {
			errs = append(errs, s.zk.Close())
		}
		s.stopErr = errors.Join(errs...)
		s.log.Info("Shut down completed")
	})
	return s.stopErr
}
