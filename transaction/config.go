package transaction

import (
	"context"
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/kafka"
)

// Config is the transaction coordinator's part of the broker
// configuration, with Kafka's names.
type Config struct {
	// TransactionTopicPartitions is transaction.state.log.num.partitions:
	// the modulus of the transactional id → partition hash.
	TransactionTopicPartitions int32
	// TransactionMaxTimeout is transaction.max.timeout.ms: the largest
	// transaction.timeout.ms a producer may ask for.
	TransactionMaxTimeout time.Duration
	// TransactionalIDExpiration is transactional.id.expiration.ms: an id
	// without a transaction for this long is removed.
	TransactionalIDExpiration time.Duration
	// AbortTimedOutTransactionsInterval is
	// transaction.abort.timed.out.transaction.cleanup.interval.ms.
	AbortTimedOutTransactionsInterval time.Duration
	// RemoveExpiredTransactionalIDsInterval is
	// transaction.remove.expired.transaction.cleanup.interval.ms.
	RemoveExpiredTransactionalIDsInterval time.Duration
	// LoadBufferSize is transaction.state.log.load.buffer.size: the most
	// read at once while loading a partition.
	LoadBufferSize int32
	// RequestTimeout is request.timeout.ms: how long a WriteTxnMarkers
	// request and a tombstone write may take.
	RequestTimeout time.Duration
	// MarkerRetryBackoff is how long markers whose leader is unknown, or
	// whose request failed, wait before they are sent again (Kafka's marker
	// sender thread polls every few tens of milliseconds).
	MarkerRetryBackoff time.Duration
	Logger             *zap.Logger
	// Clock drives the timeout and expiration checks; nil means the real one.
	Clock kafka.Clock
}

// DefaultConfig returns Kafka 2.8's defaults.
func DefaultConfig() Config {
	return Config{
		TransactionTopicPartitions:            50,
		TransactionMaxTimeout:                 15 * time.Minute,
		TransactionalIDExpiration:             7 * 24 * time.Hour,
		AbortTimedOutTransactionsInterval:     10 * time.Second,
		RemoveExpiredTransactionalIDsInterval: time.Hour,
		LoadBufferSize:                        5 << 20,
		RequestTimeout:                        30 * time.Second,
		MarkerRetryBackoff:                    100 * time.Millisecond,
	}
}

// ProducerIDGenerator hands out producer ids (the broker's block manager
// over /latest_producer_id_block).
type ProducerIDGenerator interface {
	GenerateProducerID() (int64, error)
}

// MarkerSender is the coordinator's way to the partition leaders (Kafka's
// TransactionMarkerChannelManager's network client and metadata cache).
type MarkerSender interface {
	// PartitionLeader returns the broker leading a partition. exists is
	// false when the cluster does not know the partition (its topic was
	// deleted); leader is -1 when it has no live leader now.
	PartitionLeader(topic string, partition int32) (leader int32, exists bool)
	// WriteTxnMarkers sends one request to a broker and returns its
	// answer; an error means no answer (the broker is unreachable).
	WriteTxnMarkers(ctx context.Context, broker int32, req *kmsg.WriteTxnMarkersRequest) (*kmsg.WriteTxnMarkersResponse, error)
}

// errIllegalState is a transition the state machine refuses, which Kafka
// raises as IllegalStateException: it means a bug, and the request gets
// UNKNOWN_SERVER_ERROR.
var errIllegalState = errors.New("illegal transaction state")
