package coordinator

import (
	"context"
	"math"
	"time"

	"go.uber.org/zap"

	"github.com/zkafka/zkafka/kafka"
)

// Config is the coordinator's part of the broker configuration, with
// Kafka's names.
type Config struct {
	// OffsetsTopicPartitions is offsets.topic.num.partitions: the modulus of
	// the group → partition hash.
	OffsetsTopicPartitions int32
	// InitialRebalanceDelay is group.initial.rebalance.delay.ms.
	InitialRebalanceDelay time.Duration
	// MinSessionTimeout and MaxSessionTimeout are group.min.session.timeout.ms
	// and group.max.session.timeout.ms.
	MinSessionTimeout, MaxSessionTimeout time.Duration
	// MaxGroupSize is group.max.size.
	MaxGroupSize int
	// OffsetMetadataMaxBytes is offset.metadata.max.bytes.
	OffsetMetadataMaxBytes int
	// OffsetsRetention is offsets.retention.minutes.
	OffsetsRetention time.Duration
	// OffsetsRetentionCheckInterval is offsets.retention.check.interval.ms.
	OffsetsRetentionCheckInterval time.Duration
	// OffsetCommitTimeout is offsets.commit.timeout.ms: how long a commit
	// waits for acks=all.
	OffsetCommitTimeout time.Duration
	// ConsumerSessionTimeout (group.consumer.session.timeout.ms),
	// ConsumerHeartbeatInterval (group.consumer.heartbeat.interval.ms),
	// ConsumerMaxSize (group.consumer.max.size) and ConsumerAssignors
	// (group.consumer.assignors, the first the default) shape the consumer
	// rebalance protocol; Topics is the metadata it assigns from.
	ConsumerSessionTimeout    time.Duration
	ConsumerHeartbeatInterval time.Duration
	ConsumerMaxSize           int
	ConsumerAssignors         []string
	Topics                    TopicSource
	Logger                    *zap.Logger
	// Clock drives every timer (session, rebalance, initial delay) and the
	// wall-clock checks (offsets retention); nil means the real one.
	Clock kafka.Clock
}

// DefaultConfig returns Kafka 2.8's defaults.
func DefaultConfig() Config {
	return Config{
		OffsetsTopicPartitions:        50,
		InitialRebalanceDelay:         3 * time.Second,
		MinSessionTimeout:             6 * time.Second,
		MaxSessionTimeout:             30 * time.Minute,
		MaxGroupSize:                  math.MaxInt32,
		OffsetMetadataMaxBytes:        4096,
		OffsetsRetention:              7 * 24 * time.Hour,
		OffsetsRetentionCheckInterval: 10 * time.Minute,
		OffsetCommitTimeout:           5 * time.Second,
		ConsumerSessionTimeout:        45 * time.Second,
		ConsumerHeartbeatInterval:     5 * time.Second,
		ConsumerMaxSize:               math.MaxInt32,
		ConsumerAssignors:             []string{"uniform", "range"},
	}
}

// Log is the coordinator's access to the __consumer_offsets partitions this
// broker hosts; the broker implements it over its replica manager.
type Log interface {
	// Append appends one record batch to a partition this broker leads and
	// returns the offset of its first record and a function that waits until
	// the records are replicated to the ISR (acks=all). Errors are kerr
	// values (NOT_LEADER_OR_FOLLOWER, NOT_ENOUGH_REPLICAS, ...).
	Append(partition int32, batch []byte) (baseOffset int64, await func(context.Context) error, err error)
	// Read returns whole record batches from offset, up to maxBytes (at
	// least one batch) and never past the log end offset.
	Read(partition int32, offset int64, maxBytes int32) ([]byte, error)
	// Bounds returns the log start and end offsets of a partition.
	Bounds(partition int32) (start, end int64, err error)
	// IsLeader reports whether this broker still leads a partition: the
	// coordinator unloads a partition whose leadership moved without a
	// leadership callback (a StopReplica, a deleted topic).
	IsLeader(partition int32) bool
}
