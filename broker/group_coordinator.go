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
	"net"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/coordinator"
)

// offsetsTopic is Kafka's internal topic for group metadata and offsets.
const offsetsTopic = "__consumer_offsets"

// groupConfigOf reads the coordinator's settings (Kafka's names and
// defaults; see defaultProperties) from the broker config.
func groupConfigOf(c *Config, log *zap.Logger) (coordinator.Config, error) {
	p := &parser{props: c.Properties}
	cfg := coordinator.Config{
		OffsetsTopicPartitions:        c.OffsetsTopicNumPartitions,
		InitialRebalanceDelay:         c.GroupInitialRebalanceDelay,
		MinSessionTimeout:             p.ms("group.min.session.timeout.ms"),
		MaxSessionTimeout:             p.ms("group.max.session.timeout.ms"),
		MaxGroupSize:                  int(p.int32("group.max.size")),
		OffsetMetadataMaxBytes:        int(p.int32("offset.metadata.max.bytes")),
		OffsetsRetention:              time.Duration(p.int64("offsets.retention.minutes")) * time.Minute,
		OffsetsRetentionCheckInterval: p.ms("offsets.retention.check.interval.ms"),
		OffsetCommitTimeout:           p.ms("offsets.commit.timeout.ms"),
		Logger:                        log,
	}
	if p.err != nil {
		return cfg, p.err
	}
	if cfg.OffsetsTopicPartitions <= 0 {
		return cfg, fmt.Errorf("offsets.topic.num.partitions must be at least 1: %w", ErrConfig)
	}
	return cfg, nil
}

// offsetsLog is coordinator.Log over the replica manager.
type offsetsLog struct{ rm *ReplicaManager }

func (l offsetsLog) Append(partition int32, batch []byte) (int64, func(context.Context) error, error) {
	p, _, err := l.rm.leaderPartition(offsetsTopic, partition, -1)
	if err != nil {
		return 0, nil, err
	}
	info, epoch, err := p.appendAsLeader(batch, -1)
	if err != nil {
		return 0, nil, err
	}
	required := info.LastOffset + 1
	// Kafka's DelayedProduce for a coordinator append: done when the high
	// watermark passes the records, failed when leadership moves.
	await := func(ctx context.Context) error {
		for {
			ch := p.waitChan(false)
			if done, err := p.produceStatus(required, epoch); done {
				return err
			}
			select {
			case <-ch:
			case <-ctx.Done():
				if errors.Is(ctx.Err(), context.DeadlineExceeded) {
					return kerr.RequestTimedOut
				}
				return ctx.Err()
			}
		}
	}
	return info.FirstOffset, await, nil
}

func (l offsetsLog) Read(partition int32, offset int64, maxBytes int32) ([]byte, error) {
	p, ok := l.rm.Partition(offsetsTopic, partition)
	if !ok {
		return nil, kerr.NotLeaderForPartition
	}
	return p.Log().Read(offset, maxBytes, p.Log().LogEndOffset(), true)
}

func (l offsetsLog) Bounds(partition int32) (int64, int64, error) {
	p, ok := l.rm.Partition(offsetsTopic, partition)
	if !ok {
		return 0, 0, kerr.NotLeaderForPartition
	}
	return p.Log().LogStartOffset(), p.Log().LogEndOffset(), nil
}

func (l offsetsLog) IsLeader(partition int32) bool {
	_, _, err := l.rm.leaderPartition(offsetsTopic, partition, -1)
	return err == nil
}

// startGroupCoordinator builds and starts the coordinator (KafkaServer
// starts it after the replica manager).
func (s *Server) startGroupCoordinator() error {
	cfg, err := groupConfigOf(s.cfg, s.log.Named("group-coordinator"))
	if err != nil {
		return err
	}
	s.groupCoordinator = coordinator.New(cfg, offsetsLog{s.replicas})
	s.groupCoordinator.Start()
	return nil
}

// GroupCoordinator returns the broker's group coordinator.
func (s *Server) GroupCoordinator() *coordinator.Coordinator { return s.groupCoordinator }

// onOffsetsLeadershipChange is Kafka's onLeadershipChange callback of a
// LeaderAndIsr: the coordinator loads the __consumer_offsets partitions
// this broker now leads and unloads those it now follows.
func (s *Server) onOffsetsLeadershipChange(codes map[topicPartition]int16) {
	if s.groupCoordinator == nil {
		return
	}
	for tp, code := range codes {
		if tp.topic != offsetsTopic || code != 0 {
			continue
		}
		p, ok := s.replicas.Partition(tp.topic, tp.partition)
		if !ok {
			continue
		}
		if p.Leader() == s.brokerID {
			s.groupCoordinator.OnBecomeLeader(tp.partition, p.LeaderEpoch())
		} else {
			s.groupCoordinator.OnResign(tp.partition)
		}
	}
}

// ensureOffsetsTopic creates __consumer_offsets if it does not exist yet
// (Kafka does so on the first FindCoordinator): offsets.topic.num.partitions
// partitions, offsets.topic.replication.factor replicas or every live
// broker when there are fewer, compacted. It reports whether the topic is
// known to the metadata cache.
func (s *Server) ensureOffsetsTopic() bool {
	if _, _, ok := s.metadata.Topic(offsetsTopic); ok {
		return true
	}
	rf := s.cfg.OffsetsTopicReplicationFactor
	if alive := int16(len(s.metadata.AliveBrokers())); alive < rf {
		s.log.Warn("Fewer live brokers than offsets.topic.replication.factor: creating the offsets topic with every live broker as a replica",
			zap.String("topic", offsetsTopic), zap.Int16("offsets.topic.replication.factor", rf), zap.Int16("live-brokers", alive))
		rf = max(alive, 1)
	}
	p := &parser{props: s.cfg.Properties}
	_, err := s.createTopic(newTopic{
		name: offsetsTopic, numPartitions: s.cfg.OffsetsTopicNumPartitions, replicationFactor: rf,
		configs: map[string]string{
			"cleanup.policy":   "compact",
			"compression.type": "producer",
			"segment.bytes":    strconv.FormatInt(p.int64("offsets.topic.segment.bytes"), 10),
		},
	}, false)
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		s.log.Warn("Creating the offsets topic failed", zap.Error(err))
	}
	return false
}

// coordinatorNode returns the coordinator of a group: the leader of its
// __consumer_offsets partition, on the listener the request came in on.
func (s *Server) coordinatorNode(groupID, listener string) (id int32, host string, port int32, err error) {
	if !s.ensureOffsetsTopic() {
		return -1, "", -1, kerr.CoordinatorNotAvailable
	}
	_, parts, _ := s.metadata.Topic(offsetsTopic)
	pm, ok := parts[s.groupCoordinator.PartitionFor(groupID)]
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
