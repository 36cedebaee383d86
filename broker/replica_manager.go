package broker

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/brokerconfig"
	"github.com/zkafka/zkafka/internal/workers"
	"github.com/zkafka/zkafka/internal/zkclient"
	"github.com/zkafka/zkafka/kafka"
	"github.com/zkafka/zkafka/quota"
	"github.com/zkafka/zkafka/storage"
	"github.com/zkafka/zkafka/wire"
	"github.com/zkafka/zkafka/zkpaths"
)

// replicationConfig is the part of the broker configuration replication uses.
type replicationConfig struct {
	numFetchers             int
	alterLogDirsThreads     int // num.replica.alter.log.dirs.threads; 0: one per log dir
	fetchMaxBytes           int32
	fetchMinBytes           int32
	fetchWaitMax            time.Duration
	fetchBackoff            time.Duration
	lagTimeMax              time.Duration
	hwCheckpointInterval    time.Duration
	truncationMode          string
	truncateOnFetch         bool
	minInsyncReplicas       int32
	interBrokerListenerName string
}

func replicationConfigOf(c *brokerconfig.Config) replicationConfig {
	return replicationConfig{
		numFetchers:             int(max(c.NumReplicaFetchers, 1)),
		alterLogDirsThreads:     int(c.NumReplicaAlterLogDirsThreads),
		fetchMaxBytes:           c.ReplicaFetchMaxBytes,
		fetchMinBytes:           c.ReplicaFetchMinBytes,
		fetchWaitMax:            c.ReplicaFetchWaitMax,
		fetchBackoff:            c.ReplicaFetchBackoff,
		lagTimeMax:              c.ReplicaLagTimeMax,
		hwCheckpointInterval:    c.ReplicaHWCheckpointInterval,
		truncationMode:          c.ReplicaTruncationMode,
		truncateOnFetch:         c.TruncationOnFetch && c.ReplicaTruncationMode == brokerconfig.TruncateByEpoch,
		minInsyncReplicas:       c.MinInsyncReplicas,
		interBrokerListenerName: c.InterBrokerListenerName,
	}
}

// ReplicaManager owns this broker's replicas: it applies the controller's
// LeaderAndIsr decisions (creating logs as replicas appear, starting and
// stopping follower fetchers), serves the partitions to produce and fetch,
// shrinks the ISR of partitions it leads, writes ISR changes to ZooKeeper and
// checkpoints high watermarks. It is Kafka's ReplicaManager.
type ReplicaManager struct {
	brokerID int32
	cfg      replicationConfig
	// followerQuota is the follower replication throttle its fetchers obey.
	followerQuota *quota.Replication
	// interBroker is how its fetchers meet the leaders' inter-broker
	// listener security (TLS, SASL).
	interBroker wire.Security
	// alterLogDirsQuota throttles the copies between log dirs
	// (replica.alter.log.dirs.io.max.bytes.per.second).
	alterLogDirsQuota *quota.Replication
	logs              *storage.Manager
	zk                *zkclient.Client
	// stateWriter writes the ISR changes this broker makes as leader: to
	// ZooKeeper (with a notification), or through the controller's AlterIsr.
	stateWriter partitionStateWriter
	// now is the clock of the ISR rules (time.Now; tests control it).
	now      func() time.Time
	metadata *MetadataCache
	// logConfig returns the log configuration of a topic (broker defaults
	// overridden by /config/topics/<t>).
	logConfig func(topic string) (storage.LogConfig, error)
	log       *zap.Logger
	fetchers  *fetcherManager
	// alterLogDirs copies replicas being moved between log dirs.
	alterLogDirs *alterLogDirsManager
	isrChange    *isrChangePropagator

	// stateChangeMu serializes LeaderAndIsr, StopReplica and
	// AlterReplicaLogDirs (Kafka's replicaStateChangeLock).
	stateChangeMu sync.Mutex

	mu              sync.RWMutex
	controllerEpoch int32
	partitions      map[kafka.TopicPartition]*Partition
	// liveLeaders are the leaders' inter-broker endpoints the last
	// LeaderAndIsr named, for when the metadata cache does not know them yet.
	liveLeaders map[int32]string
}

// newReplicaManager builds the replica manager. now is the broker's wall
// clock: replica lag is measured on it, as Kafka's Partition measures it on
// time.milliseconds, so a clock step shows in the ISR.
func newReplicaManager(cfg replicationConfig, brokerID int32, logs *storage.Manager, zk *zkclient.Client, metadata *MetadataCache,
	logConfig func(string) (storage.LogConfig, error), now func() time.Time, log *zap.Logger) *ReplicaManager {
	rm := &ReplicaManager{
		brokerID: brokerID, cfg: cfg, logs: logs, zk: zk, now: now,
		metadata: metadata, logConfig: logConfig, log: log,
		partitions: map[kafka.TopicPartition]*Partition{}, liveLeaders: map[int32]string{},
	}
	rm.fetchers = newFetcherManager(rm)
	threads := len(logs.Dirs()) // Kafka's default: one per log dir
	if cfg.alterLogDirsThreads > 0 {
		threads = cfg.alterLogDirsThreads
	}
	rm.alterLogDirs = newAlterLogDirsManager(rm, threads)
	rm.isrChange = newIsrChangePropagator(zk, log.Named("isr-change"))
	rm.stateWriter = zkPartitionStateWriter{zk: zk, isrChange: rm.isrChange, now: now}
	return rm
}

// run does the replica manager's periodic work until ctx ends: the ISR
// expiration check every replica.lag.time.max.ms/2, ISR change propagation,
// and the high-watermark checkpoint.
func (rm *ReplicaManager) run(ctx context.Context) {
	expire := time.NewTicker(max(rm.cfg.lagTimeMax/2, 10*time.Millisecond))
	defer expire.Stop()
	checkpoint := time.NewTicker(max(rm.cfg.hwCheckpointInterval, 10*time.Millisecond))
	defer checkpoint.Stop()
	propagate := time.NewTicker(isrChangeCheckInterval)
	defer propagate.Stop()
	idleAlterLogDirs := time.NewTicker(shutdownIdleAlterLogDirsInterval)
	defer idleAlterLogDirs.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-idleAlterLogDirs.C:
			rm.alterLogDirs.shutdownIdle()
		case now := <-expire.C:
			rm.maybeShrinkIsr(now)
		case now := <-propagate.C:
			rm.isrChange.maybePropagate(now)
		case <-checkpoint.C:
			if err := rm.logs.Checkpoint(); err != nil && !errors.Is(err, storage.ErrManagerClosed) {
				rm.log.Error("Writing the high-watermark checkpoint failed", zap.Error(err))
			}
		}
	}
}

// shutdownIdleAlterLogDirsInterval is how often the copies between log
// dirs that have nothing left to copy stop (Kafka's fixed 10 s).
const shutdownIdleAlterLogDirsInterval = 10 * time.Second

// shutdown stops every fetcher; run has returned.
func (rm *ReplicaManager) shutdown() {
	rm.fetchers.shutdown()
	rm.alterLogDirs.shutdown()
}

// Partition returns the local replica of a partition, if this broker has one.
func (rm *ReplicaManager) Partition(topic string, partition int32) (*Partition, bool) {
	rm.mu.RLock()
	defer rm.mu.RUnlock()
	p, ok := rm.partitions[kafka.TopicPartition{Topic: topic, Partition: partition}]
	return p, ok
}

func (rm *ReplicaManager) allPartitions() []*Partition {
	rm.mu.RLock()
	defer rm.mu.RUnlock()
	out := make([]*Partition, 0, len(rm.partitions))
	for _, p := range rm.partitions {
		out = append(out, p)
	}
	return out
}

// leaderPartition returns the partition if this broker leads it, with
// Kafka's error otherwise.
func (rm *ReplicaManager) leaderPartition(topic string, partition, currentLeaderEpoch int32) (*Partition, int32, error) {
	p, ok := rm.Partition(topic, partition)
	if !ok {
		return nil, -1, rm.notHostedError(topic, partition)
	}
	epoch, err := p.checkLeader(currentLeaderEpoch)
	return p, epoch, err
}

// checkControllerEpoch rejects a request from a controller older than the
// newest one seen. A newer epoch is believed only once /controller_epoch
// confirms it: any client can send a control request, and one adopted forged
// epoch would make this broker refuse the real controller until it restarts.
// Kafka 2.8 without an authorizer trusts the request (docs/DESIGN.md). The
// ZooKeeper read happens only when the epoch rises, and outside rm.mu, which
// request paths take to look partitions up.
func (rm *ReplicaManager) checkControllerEpoch(epoch int32) error {
	rm.mu.RLock()
	current := rm.controllerEpoch
	rm.mu.RUnlock()
	switch {
	case epoch < current:
		return fmt.Errorf("controller epoch %d is older than %d: %w", epoch, current, kerr.StaleControllerEpoch)
	case epoch == current:
		return nil
	}
	stored, err := rm.storedControllerEpoch(false)
	if err == nil && epoch > stored {
		// This session's server may lag the ensemble's leader, which the new
		// controller was elected through: catch up, then read again.
		stored, err = rm.storedControllerEpoch(true)
	}
	if err != nil {
		return fmt.Errorf("confirm controller epoch %d: %w (%w)", epoch, kerr.StaleControllerEpoch, err)
	}
	if epoch > stored {
		return fmt.Errorf("controller epoch %d is above %s %d: %w", epoch, zkpaths.ControllerEpoch, stored, kerr.StaleControllerEpoch)
	}
	rm.mu.Lock()
	defer rm.mu.Unlock()
	if epoch < rm.controllerEpoch {
		return fmt.Errorf("controller epoch %d is older than %d: %w", epoch, rm.controllerEpoch, kerr.StaleControllerEpoch)
	}
	rm.controllerEpoch = epoch
	return nil
}

// storedControllerEpoch reads /controller_epoch, after a sync if asked.
func (rm *ReplicaManager) storedControllerEpoch(sync bool) (int32, error) {
	if sync {
		if err := rm.zk.Sync(zkpaths.ControllerEpoch); err != nil {
			return 0, err
		}
	}
	data, _, err := rm.zk.Get(zkpaths.ControllerEpoch)
	if err != nil {
		return 0, err
	}
	return zkpaths.DecodeControllerEpoch(data)
}

// ControllerEpoch returns the newest controller epoch this broker accepted.
func (rm *ReplicaManager) ControllerEpoch() int32 {
	rm.mu.RLock()
	defer rm.mu.RUnlock()
	return rm.controllerEpoch
}

// lisPartition is one LeaderAndIsr partition state, whatever the version.
type lisPartition struct {
	topic string
	state kmsg.LeaderAndISRRequestTopicPartition
}

func leaderAndIsrPartitions(req *kmsg.LeaderAndISRRequest) []lisPartition {
	var out []lisPartition
	for _, p := range req.PartitionStates {
		out = append(out, lisPartition{topic: p.Topic, state: p})
	}
	for _, t := range req.TopicStates {
		for _, p := range t.PartitionStates {
			out = append(out, lisPartition{topic: t.Topic, state: p})
		}
	}
	return out
}

// becomeLeaderOrFollower applies a LeaderAndIsr request (the controller epoch
// already checked) and returns each partition's error code. A partition state
// is taken only when its leader epoch is newer than the local one.
func (rm *ReplicaManager) becomeLeaderOrFollower(req *kmsg.LeaderAndISRRequest) map[kafka.TopicPartition]int16 {
	rm.stateChangeMu.Lock()
	defer rm.stateChangeMu.Unlock()
	rm.mu.Lock()
	for _, l := range req.LiveLeaders {
		rm.liveLeaders[l.BrokerID] = net.JoinHostPort(l.Host, strconv.Itoa(int(l.Port)))
	}
	rm.mu.Unlock()
	parts := leaderAndIsrPartitions(req)
	codes := make(map[kafka.TopicPartition]int16, len(parts))
	settings := &topicSettings{rm: rm}
	// The partitions are independent; applied by several workers, their file-system work (creating
	// a log's files, replacing its leader-epoch checkpoint) overlaps instead of queueing one behind
	// the other, which after a failover or a controlled shutdown is what the cluster waits for.
	results := make([]int16, len(parts))
	workers.ForEach(stateChangeWorkers, len(parts), func(i int) {
		lp := parts[i]
		tp := kafka.TopicPartition{Topic: lp.topic, Partition: lp.state.Partition}
		results[i] = rm.applyPartitionState(tp, lp.state, req.ControllerID, settings)
		if results[i] == 0 {
			rm.maybeAddLogDirFetcher(tp)
		}
	})
	for i, lp := range parts {
		codes[kafka.TopicPartition{Topic: lp.topic, Partition: lp.state.Partition}] = results[i]
	}
	rm.fetchers.shutdownIdle()
	rm.alterLogDirs.shutdownIdle()
	return codes
}

// maybeAddLogDirFetcher resumes the move of a replica whose future log was
// found at startup, once the replica exists (Kafka's
// maybeAddLogDirFetchers); the copy first truncates the future log by
// leader epoch, falling back to the current log's high watermark.
func (rm *ReplicaManager) maybeAddLogDirFetcher(tp kafka.TopicPartition) {
	future, ok := rm.logs.Future(tp.Topic, tp.Partition)
	p, hosted := rm.Partition(tp.Topic, tp.Partition)
	if !ok || !hosted || rm.alterLogDirs.moving(tp) {
		return
	}
	rm.alterLogDirs.addPartition(tp, p, future, p.HighWatermark())
}

// stateChangeWorkers apply a LeaderAndIsr request's partitions side by side. Each mostly waits on
// the file system; on the project's machine, moving 1,666 leaderships took 6.2 and 5.9 s with 8
// workers and 4.8 and 4.6 s with 32, when each new leader still fsynced its leader-epoch checkpoint
// (`zkafka bench partitions 5000`, controlled shutdown, two runs each).
const stateChangeWorkers = 32

// topicSettings reads each topic's configuration once per LeaderAndIsr request: after a failover one
// request carries thousands of partitions of a few topics, and each read is a ZooKeeper round trip.
type topicSettings struct {
	rm         *ReplicaManager
	logConfigs perTopic[logConfigRead]
	minInsync  perTopic[int32]
}

type logConfigRead struct {
	cfg storage.LogConfig
	err error
}

func (ts *topicSettings) logConfig(topic string) (storage.LogConfig, error) {
	r := ts.logConfigs.get(topic, func() logConfigRead {
		cfg, err := ts.rm.logConfig(topic)
		return logConfigRead{cfg, err}
	})
	return r.cfg, r.err
}

func (ts *topicSettings) minInsyncReplicas(topic string) int32 {
	return ts.minInsync.get(topic, func() int32 { return ts.rm.topicMinInsync(topic) })
}

// perTopic remembers one value per topic, read the first time it is asked for; the workers of
// a request share it. The lock is held across the read (a ZooKeeper call) on purpose: workers
// asking for the same topic wait for the one read instead of each making it, and the lock
// belongs to one request, so nothing else waits.
type perTopic[V any] struct {
	mu     sync.Mutex
	values map[string]V
}

func (m *perTopic[V]) get(topic string, read func() V) V {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.values[topic]
	if !ok {
		v = read()
		if m.values == nil {
			m.values = map[string]V{}
		}
		m.values[topic] = v
	}
	return v
}

func (rm *ReplicaManager) applyPartitionState(tp kafka.TopicPartition, s kmsg.LeaderAndISRRequestTopicPartition, controllerID int32, settings *topicSettings) int16 {
	log := rm.log.With(zap.Stringer("partition", tp), zap.Int32("controller-id", controllerID), zap.Int32("leader-epoch", s.LeaderEpoch))
	if !containsID(s.Replicas, rm.brokerID) {
		log.Warn("Ignoring LeaderAndIsr for a partition this broker does not replicate", zap.Int32s("replicas", s.Replicas))
		return kerr.UnknownTopicOrPartition.Code
	}
	p, err := rm.getOrCreatePartition(tp, settings)
	if err != nil {
		log.Error("Cannot create the log for a new replica", zap.Error(err))
		return kerr.KafkaStorageError.Code
	}
	if current := p.LeaderEpoch(); s.LeaderEpoch <= current {
		// After a controller failover the same epochs are resent: harmless.
		log.Info("Ignoring LeaderAndIsr with a leader epoch not newer than the current one", zap.Int32("current-leader-epoch", current))
		return kerr.StaleControllerEpoch.Code
	}
	state := partitionState{
		leader: s.Leader, leaderEpoch: s.LeaderEpoch, controllerEpoch: s.ControllerEpoch,
		zkVersion: s.ZKVersion, isr: s.ISR, replicas: s.Replicas,
	}
	// Whichever role it takes, the partition stops fetching first, so no
	// fetch response is appended under the new state.
	rm.fetchers.removePartition(tp)
	if s.Leader == rm.brokerID {
		if err := p.makeLeader(state, settings.minInsyncReplicas(tp.Topic), rm.now()); err != nil {
			log.Error("Recording the new leader epoch failed", zap.Error(err))
			return kerr.KafkaStorageError.Code
		}
		log.Info("Became leader", zap.Int32s("isr", s.ISR), zap.Int64("log-end-offset", p.log.LogEndOffset()),
			zap.Int64("high-watermark", p.HighWatermark()))
		return 0
	}
	p.makeFollower(state)
	truncating := true
	if rm.cfg.truncationMode == brokerconfig.TruncateToHighWatermark {
		// Before KIP-101 a new follower trusted its own high watermark and
		// cut everything above it, then fetched from there.
		hw := p.HighWatermark()
		if err := p.truncateTo(hw); err != nil {
			log.Error("Truncating to the high watermark failed", zap.Error(err))
			return kerr.KafkaStorageError.Code
		}
		log.Info("Truncated to the high watermark", zap.Int64("high-watermark", hw))
		truncating = false
	}
	if s.Leader >= 0 {
		rm.fetchers.addPartition(tp, p, s.Leader, s.LeaderEpoch, truncating)
	}
	log.Info("Became follower", zap.Int32("leader", s.Leader), zap.Int64("log-end-offset", p.log.LogEndOffset()))
	return 0
}

// topicMinInsync returns min.insync.replicas for a topic: its override in
// /config/topics/<t>, else the broker's.
func (rm *ReplicaManager) topicMinInsync(topic string) int32 {
	n := rm.cfg.minInsyncReplicas
	if rm.zk == nil {
		return n
	}
	data, _, err := rm.zk.Get(zkpaths.TopicConfigPath(topic))
	if err != nil {
		if !errors.Is(err, zk.ErrNoNode) {
			rm.log.Warn("Cannot read the topic config; using the broker's min.insync.replicas", zap.String("topic", topic), zap.Error(err))
		}
		return n
	}
	ec, err := zkpaths.DecodeEntityConfig(data)
	if err != nil {
		return n
	}
	if v, ok := ec.Config["min.insync.replicas"]; ok {
		if m, err := strconv.ParseInt(v, 10, 32); err == nil && m > 0 {
			return int32(m)
		}
	}
	return n
}

// brokerAddr returns a broker's inter-broker listener address: from the
// metadata cache, else from the last LeaderAndIsr's live leaders.
func (rm *ReplicaManager) brokerAddr(id int32) (string, bool) {
	for _, b := range rm.metadata.AliveBrokers() {
		if b.ID != id {
			continue
		}
		if ep, ok := b.Endpoints[rm.cfg.interBrokerListenerName]; ok {
			return net.JoinHostPort(ep.Host, strconv.Itoa(int(ep.Port))), true
		}
	}
	rm.mu.RLock()
	defer rm.mu.RUnlock()
	addr, ok := rm.liveLeaders[id]
	return addr, ok
}

func (rm *ReplicaManager) getOrCreatePartition(tp kafka.TopicPartition, settings *topicSettings) (*Partition, error) {
	if p, ok := rm.Partition(tp.Topic, tp.Partition); ok {
		return p, nil
	}
	cfg, err := settings.logConfig(tp.Topic)
	if err != nil {
		return nil, err
	}
	l, err := rm.logs.GetOrCreate(tp.Topic, tp.Partition, cfg)
	if err != nil {
		return nil, err
	}
	rm.mu.Lock()
	defer rm.mu.Unlock()
	if p, ok := rm.partitions[tp]; ok {
		return p, nil
	}
	p := newPartition(tp.Topic, tp.Partition, rm.brokerID, l, rm.cfg.lagTimeMax)
	p.now = rm.now
	p.isrEligible = rm.metadata.HasAliveBroker
	p.onTruncate = func(offset int64) { rm.alterLogDirs.markForTruncation(tp, offset) }
	rm.partitions[tp] = p
	return p, nil
}

func containsID(ids []int32, id int32) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// ReplicaManager returns the broker's replica manager (tools and tests read
// each replica's log end offset and high watermark through it).
func (s *Server) ReplicaManager() *ReplicaManager { return s.replicas }

// Replica ids of requests from clients rather than brokers.
const (
	consumerReplicaID  = -1
	debuggingReplicaID = -2 // Kafka's DebuggingConsumerId: may read from followers
)

// listOffsetsPartition is the partition a ListOffsets may use: the leader's,
// or for the debugging replica id any local replica.
func (rm *ReplicaManager) listOffsetsPartition(replicaID int32, topic string, partition, currentLeaderEpoch int32) (*Partition, int32, error) {
	if replicaID != debuggingReplicaID {
		return rm.leaderPartition(topic, partition, currentLeaderEpoch)
	}
	p, ok := rm.Partition(topic, partition)
	if !ok {
		return nil, -1, rm.notHostedError(topic, partition)
	}
	return p, p.LeaderEpoch(), nil
}

// notHostedError is Kafka's answer for a partition with no replica here:
// NOT_LEADER_OR_FOLLOWER when the partition exists (this broker has not yet
// applied the LeaderAndIsr that makes it a replica, or no longer is one),
// which clients retry after refreshing metadata; UNKNOWN_TOPIC_OR_PARTITION
// only when the cluster's metadata does not know it either.
func (rm *ReplicaManager) notHostedError(topic string, partition int32) error {
	if rm.metadata.Contains(topic, partition) {
		return kerr.NotLeaderForPartition
	}
	return kerr.UnknownTopicOrPartition
}
