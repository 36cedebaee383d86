package broker

// The broker's side of the group coordinator: the coordinator package's Log
// over this broker's __consumer_offsets partitions (appends wait for
// acks=all the way a produce does), its configuration from
// server.properties, the leadership hook, and the creation of
// __consumer_offsets on first use.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/brokerconfig"
	"github.com/zkafka/zkafka/coordinator"
	"github.com/zkafka/zkafka/kafka"
)

// offsetsTopic is Kafka's internal topic for group metadata and offsets.
const offsetsTopic = "__consumer_offsets"

// consumerTopics is the metadata cache as the consumer protocol's
// assignment reads it: topics by name with their ids and partition counts.
// A topic without an id (which the controller adds at creation) is left
// out, since the protocol names topics by id.
type consumerTopics struct{ cache *MetadataCache }

func (t consumerTopics) Topic(name string) ([16]byte, int32, bool) {
	id, n, ok := t.cache.PartitionCount(name)
	return id, n, ok && id != [16]byte{}
}

func (t consumerTopics) TopicName(id [16]byte) (string, bool) { return t.cache.TopicName(id) }
func (t consumerTopics) TopicNames() []string                 { return t.cache.Topics() }

// groupConfigOf reads the coordinator's settings (Kafka's names and
// defaults, which brokerconfig holds) from the broker config.
func groupConfigOf(c *brokerconfig.Config, log *zap.Logger) (coordinator.Config, error) {
	p := brokerconfig.NewReader(c.Properties)
	cfg := coordinator.Config{
		OffsetsTopicPartitions:        c.OffsetsTopicNumPartitions,
		InitialRebalanceDelay:         c.GroupInitialRebalanceDelay,
		MinSessionTimeout:             p.Ms("group.min.session.timeout.ms"),
		MaxSessionTimeout:             p.Ms("group.max.session.timeout.ms"),
		MaxGroupSize:                  int(p.Int32("group.max.size")),
		OffsetMetadataMaxBytes:        int(p.Int32("offset.metadata.max.bytes")),
		OffsetsRetention:              time.Duration(p.Int64("offsets.retention.minutes")) * time.Minute,
		OffsetsRetentionCheckInterval: p.Ms("offsets.retention.check.interval.ms"),
		OffsetCommitTimeout:           p.Ms("offsets.commit.timeout.ms"),
		ConsumerSessionTimeout:        p.Ms("group.consumer.session.timeout.ms"),
		ConsumerHeartbeatInterval:     p.Ms("group.consumer.heartbeat.interval.ms"),
		ConsumerMaxSize:               int(p.Int32("group.consumer.max.size")),
		ConsumerAssignors:             p.List("group.consumer.assignors"),
		Logger:                        log,
	}
	if err := p.Err(); err != nil {
		return cfg, err
	}
	if cfg.OffsetsTopicPartitions <= 0 {
		return cfg, fmt.Errorf("offsets.topic.num.partitions must be at least 1: %w", brokerconfig.ErrConfig)
	}
	return cfg, nil
}

// coordinatorLog is coordinator.Log over the replica manager's partitions
// of one internal topic (__consumer_offsets for the group coordinator,
// __transaction_state for the transaction coordinator). Appends are the
// coordinator's (Kafka's AppendOrigin.Coordinator).
type coordinatorLog struct {
	rm    *ReplicaManager
	topic string
}

func (l coordinatorLog) Append(partition int32, batch []byte) (int64, func(context.Context) error, error) {
	p, _, err := l.rm.leaderPartition(l.topic, partition, -1)
	if err != nil {
		return 0, nil, err
	}
	info, epoch, err := p.appendAsCoordinator(batch)
	if err != nil {
		return 0, nil, err
	}
	required := info.LastOffset + 1
	// Kafka's DelayedProduce for a coordinator append: done when the high
	// watermark passes the records, failed when leadership moves.
	await := func(ctx context.Context) error { return p.awaitHighWatermark(ctx, required, epoch) }
	return info.FirstOffset, await, nil
}

func (l coordinatorLog) Read(partition int32, offset int64, maxBytes int32) ([]byte, error) {
	p, ok := l.rm.Partition(l.topic, partition)
	if !ok {
		return nil, kerr.NotLeaderForPartition
	}
	return p.Log().Read(offset, maxBytes, p.Log().LogEndOffset(), true)
}

func (l coordinatorLog) Bounds(partition int32) (int64, int64, error) {
	p, ok := l.rm.Partition(l.topic, partition)
	if !ok {
		return 0, 0, kerr.NotLeaderForPartition
	}
	return p.Log().LogStartOffset(), p.Log().LogEndOffset(), nil
}

func (l coordinatorLog) IsLeader(partition int32) bool {
	_, _, err := l.rm.leaderPartition(l.topic, partition, -1)
	return err == nil
}

// startGroupCoordinator builds and starts the coordinator (KafkaServer
// starts it after the replica manager).
func (s *Server) startGroupCoordinator() error {
	cfg, err := groupConfigOf(s.cfg, s.log.Named("group-coordinator"))
	if err != nil {
		return err
	}
	cfg.Topics = consumerTopics{s.metadata}
	cfg.Clock = s.clock
	s.groupCoordinator = coordinator.New(cfg, coordinatorLog{s.replicas, offsetsTopic})
	s.groupCoordinator.Start()
	return nil
}

// GroupCoordinator returns the broker's group coordinator.
func (s *Server) GroupCoordinator() *coordinator.Coordinator { return s.groupCoordinator }

// onCoordinatorLeadershipChange is Kafka's onLeadershipChange callback of a
// LeaderAndIsr: each coordinator loads the partitions of its topic this
// broker now leads (the transaction coordinator at the leader epoch, its
// coordinator epoch) and unloads those it now follows.
func (s *Server) onCoordinatorLeadershipChange(codes map[kafka.TopicPartition]int16) {
	for tp, code := range codes {
		if code != 0 || tp.Topic != offsetsTopic && tp.Topic != transactionTopic {
			continue
		}
		p, ok := s.replicas.Partition(tp.Topic, tp.Partition)
		if !ok {
			continue
		}
		leader := p.Leader() == s.brokerID
		switch {
		case tp.Topic == offsetsTopic && s.groupCoordinator != nil && leader:
			s.groupCoordinator.OnBecomeLeader(tp.Partition, p.LeaderEpoch())
		case tp.Topic == offsetsTopic && s.groupCoordinator != nil:
			s.groupCoordinator.OnResign(tp.Partition)
		case tp.Topic == transactionTopic && s.txnCoordinator != nil && leader:
			s.txnCoordinator.OnBecomeLeader(tp.Partition, p.LeaderEpoch())
		case tp.Topic == transactionTopic && s.txnCoordinator != nil:
			s.txnCoordinator.OnResign(tp.Partition)
		}
	}
}

// internalTopicSpec is how an internal topic is created on first use.
type internalTopicSpec struct {
	name              string
	partitions        int32
	replicationFactor int16
	rfConfig          string // the config naming the replication factor, for the warning
	configs           map[string]string
	// minInsync, when set, is the topic's min.insync.replicas, lowered to
	// the replication factor when there are fewer live brokers than asked
	// for: a topic no write can satisfy would stop its coordinator for good.
	minInsync int32
}

// offsetsTopicSpec is __consumer_offsets: offsets.topic.num.partitions
// partitions, offsets.topic.replication.factor replicas, compacted.
func (s *Server) offsetsTopicSpec() internalTopicSpec {
	p := brokerconfig.NewReader(s.cfg.Properties)
	return internalTopicSpec{
		name: offsetsTopic, partitions: s.cfg.OffsetsTopicNumPartitions, replicationFactor: s.cfg.OffsetsTopicReplicationFactor,
		rfConfig: "offsets.topic.replication.factor",
		configs: map[string]string{
			"cleanup.policy":   "compact",
			"compression.type": "producer",
			"segment.bytes":    strconv.FormatInt(p.Int64("offsets.topic.segment.bytes"), 10),
		},
	}
}

// ensureInternalTopic creates an internal topic if it does not exist yet
// (Kafka does so on the first FindCoordinator), with every live broker as a
// replica when there are fewer than its replication factor. It reports
// whether the topic is known to the metadata cache.
func (s *Server) ensureInternalTopic(spec internalTopicSpec) bool {
	if _, _, ok := s.metadata.Topic(spec.name); ok {
		return true
	}
	// The brokers counted are those ZooKeeper lists, from which the replicas are assigned, not this
	// broker's metadata cache: a broker just started knows no broker until the controller's first
	// UpdateMetadata, and a client asking it then would have the topic created with one replica.
	brokers, err := s.registeredBrokers()
	if err != nil {
		s.log.Warn("Creating the internal topic failed", zap.String("topic", spec.name), zap.Error(err))
		return false
	}
	rf := spec.replicationFactor
	if alive := int16(len(brokers)); alive < rf {
		s.log.Warn("Fewer live brokers than the replication factor: creating the internal topic with every live broker as a replica",
			zap.String("topic", spec.name), zap.Int16(spec.rfConfig, rf), zap.Int16("live-brokers", alive))
		rf = max(alive, 1)
	}
	configs := maps.Clone(spec.configs)
	if spec.minInsync > 0 {
		configs["min.insync.replicas"] = strconv.Itoa(int(min(spec.minInsync, int32(rf))))
	}
	_, err = s.createTopic(newTopic{name: spec.name, numPartitions: spec.partitions, replicationFactor: rf, configs: configs}, false)
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		s.log.Warn("Creating the internal topic failed", zap.String("topic", spec.name), zap.Error(err))
	}
	return false
}

// coordinatorNode returns the coordinator of a key: the leader of its
// partition of an internal topic, on the listener the request came in on.
func (s *Server) coordinatorNode(spec internalTopicSpec, partition int32, listener string) (id int32, host string, port int32, err error) {
	if !s.ensureInternalTopic(spec) {
		return -1, "", -1, kerr.CoordinatorNotAvailable
	}
	_, parts, _ := s.metadata.Topic(spec.name)
	pm, ok := parts[partition]
	if !ok || pm.Leader < 0 {
		return -1, "", -1, kerr.CoordinatorNotAvailable
	}
	for _, b := range s.metadata.AliveBrokers() {
		if b.ID != pm.Leader {
			continue
		}
		if ep, ok := b.Endpoints[listener]; ok {
			return b.ID, ep.Host, ep.Port, nil
		}
	}
	return -1, "", -1, kerr.CoordinatorNotAvailable
}

// groupErrorString is the message Kafka's responses carry for an error
// (the error's default message).
func groupErrorString(code int16) *string {
	if code == 0 {
		return nil
	}
	if err := kerr.ErrorForCode(code); err != nil {
		if ke, ok := err.(*kerr.Error); ok {
			return kmsg.StringPtr(ke.Description)
		}
	}
	return nil
}

// clientHost is the client's address as Kafka reports it (Java's
// InetAddress.toString: "/127.0.0.1").
func (r *request) clientHost() string {
	host, _, err := net.SplitHostPort(r.remote)
	if err != nil {
		return r.remote
	}
	return "/" + host
}
