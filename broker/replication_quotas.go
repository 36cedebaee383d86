package broker

// Replication throttles (Kafka's ReplicationQuotaManager, one for this
// broker's leaders and one for its followers). The rates are
// leader.replication.throttled.rate and follower.replication.throttled.rate
// in this broker's /config/brokers/<id> (the default entity does not set
// them, as in Kafka's BrokerConfigHandler); which partitions are throttled
// is each topic's leader.replication.throttled.replicas and
// follower.replication.throttled.replicas, the entries naming this broker
// (or "*"), read when a partition is created here and on each topic config
// change.
//
// A leader answers a follower outside the ISR with no records for a
// throttled partition while the leader rate is exceeded, and counts the
// bytes of every throttled partition it sends (readFetch, fetchAPI); a
// follower that has not caught up to its leader's high watermark leaves a
// throttled partition out of its fetch while the follower rate is exceeded,
// and counts the bytes it receives for every throttled partition
// (buildFetch, processFetch). Replicas in sync are never held back, so a
// throttle cannot shrink the ISR.

import (
	"strconv"

	"go.uber.org/zap"

	"github.com/zkafka/zkafka/brokerconfig"
	"github.com/zkafka/zkafka/quota"
)

type replicationQuotas struct {
	leader, follower *quota.Replication
	// alterLogDirs throttles every copy between this broker's log dirs
	// (Kafka's ReplicationQuotaManager of type AlterLogDirs): no partition
	// list, every move counts.
	alterLogDirs *quota.Replication
}

// replicaAlterLogDirsIoMaxBytesPerSecond is the per-broker dynamic rate of
// the copies between log dirs (Kafka 2.8's DynamicConfig.Broker).
const replicaAlterLogDirsIoMaxBytesPerSecond = "replica.alter.log.dirs.io.max.bytes.per.second"

// newReplicationQuotas measures every throttle over replication.quota.window.num
// × .size.seconds; Kafka's alter.log.dirs.replication.quota.window.* for the
// log-dir copies, which zkafka does not define, have the same defaults.
func newReplicationQuotas(cfg *brokerconfig.Config) replicationQuotas {
	qc := quota.Config{Samples: int(cfg.ReplicationQuotaWindowNum), Window: cfg.ReplicationQuotaWindowSize}
	return replicationQuotas{leader: quota.NewReplication(qc), follower: quota.NewReplication(qc), alterLogDirs: quota.NewReplication(qc)}
}

// applyReplicationThrottleRates sets the three rates from this broker's
// dynamic config (/config/brokers/<id>); a rate not set there is unbounded.
func (m *configManager) applyReplicationThrottleRates(layer map[string]string) {
	for key, q := range map[string]*quota.Replication{
		quota.LeaderReplicationThrottledRate:   m.s.replicationQuotas.leader,
		quota.FollowerReplicationThrottledRate: m.s.replicationQuotas.follower,
		replicaAlterLogDirsIoMaxBytesPerSecond: m.s.replicationQuotas.alterLogDirs,
	} {
		rate := int64(quota.Unbounded)
		if v, ok := layer[key]; ok {
			// Validated before it reached the layer.
			rate, _ = strconv.ParseInt(v, 10, 64)
		}
		if rate != q.Rate() {
			q.SetRate(rate)
			m.log.Info("Replication throttle rate", zap.String("config", key), zap.Int64("bytes-per-second", rate))
		}
	}
}

// applyReplicationThrottles sets which of the topic's partitions are
// throttled on this broker from its config; a list that does not parse
// (validation keeps them out of ZooKeeper) leaves the throttle as it was.
func (s *Server) applyReplicationThrottles(topic string, overrides map[string]string) {
	for key, q := range map[string]*quota.Replication{
		quota.LeaderReplicationThrottledReplicas:   s.replicationQuotas.leader,
		quota.FollowerReplicationThrottledReplicas: s.replicationQuotas.follower,
	} {
		list, err := quota.ParseThrottledReplicas(overrides[key], s.brokerID)
		if err != nil {
			s.log.Error("Ignoring an invalid throttled replicas list", zap.String("topic", topic), zap.String("config", key), zap.Error(err))
			continue
		}
		q.MarkThrottled(topic, list)
	}
}
