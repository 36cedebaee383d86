package consumer

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/wire"
	"github.com/zkafka/zkafka/zkpaths"
)

// Config is a consumer's configuration. Field comments name the Kafka property
// each field stands for; zero values take Kafka's defaults for the mode.
//
// ZooKeeperConnect selects the legacy mode (Kafka 0.8.2's high-level
// consumer); BootstrapServers selects the coordinator mode. Exactly one must
// be set.
type Config struct {
	GroupID string   // group.id
	Topics  []string // the subscription
	// Whitelist or Blacklist, in legacy mode and instead of Topics,
	// subscribes with a TopicFilter (0.8.2's createMessageStreamsByFilter):
	// the topics a regex matches, or those it does not, found under
	// /brokers/topics and followed as topics come and go.
	Whitelist, Blacklist string
	// IncludeInternalTopics is exclude.internal.topics=false: a filter may
	// then match __consumer_offsets and __transaction_state.
	IncludeInternalTopics bool
	ZooKeeperConnect      string   // zookeeper.connect: legacy mode
	BootstrapServers      []string // bootstrap.servers: coordinator mode
	ClientID              string   // client.id; default "zkafka-consumer"
	// Security is how the consumer meets the brokers' listener: TLS and
	// SASL (security.protocol, ssl.*, sasl.*); zero for PLAINTEXT.
	Security wire.Security

	// DisableAutoCommit turns off auto.commit.enable (0.8) /
	// enable.auto.commit: offsets are then committed only by Commit.
	DisableAutoCommit bool
	// AutoCommitInterval is auto.commit.interval.ms: 60 s in legacy mode,
	// 5 s in coordinator mode by default.
	AutoCommitInterval time.Duration
	// AutoOffsetReset is auto.offset.reset: "smallest"/"largest" (0.8) or
	// "earliest"/"latest"; default largest/latest.
	AutoOffsetReset string
	// MaxPollRecords is max.poll.records, default 500: the most records
	// one Poll returns, which bounds the time an application spends
	// processing between Polls.
	MaxPollRecords int
	// IsolationLevel is isolation.level: "read_uncommitted" (the default)
	// reads up to the high watermark, aborted transactions included;
	// "read_committed" reads up to the last stable offset and skips the
	// records of aborted transactions, and waits for a group's
	// transactional offset commits to be decided before starting from them
	// (require_stable, KIP-447).
	IsolationLevel string

	// Legacy mode.
	RebalanceMaxRetries     int           // rebalance.max.retries, default 4
	RebalanceBackoff        time.Duration // rebalance.backoff.ms, default 2000 ms
	ZooKeeperSessionTimeout time.Duration // zookeeper.session.timeout.ms, default 6000 ms
	// Streams is the number of consumer threads per topic (the value of the
	// topic count map given to createMessageStreams); default 1.
	Streams int

	// Coordinator mode.

	// GroupProtocol is group.protocol: "classic" (the default) joins with
	// JoinGroup and SyncGroup, the group's leader assigning; "consumer" is
	// KIP-848's protocol, ConsumerGroupHeartbeat alone, the coordinator
	// assigning and members moving partitions one at a time (the brokers
	// must list consumer in group.coordinator.rebalance.protocols). With
	// it, the broker's group.consumer.* configs set the session timeout and
	// heartbeat interval, so SessionTimeout, HeartbeatInterval and
	// PartitionAssignmentStrategy must stay unset, as Kafka's consumer
	// refuses them; a Whitelist is sent as the subscription's regex, which
	// the coordinator resolves.
	GroupProtocol string
	// GroupRemoteAssignor is group.remote.assignor (consumer protocol):
	// the coordinator's assignor to use, "uniform" or "range"; empty lets
	// the broker choose (the first of its group.consumer.assignors).
	GroupRemoteAssignor string
	SessionTimeout      time.Duration // session.timeout.ms, default 10 s
	HeartbeatInterval   time.Duration // heartbeat.interval.ms, default 3 s
	RebalanceTimeout    time.Duration // max.poll.interval.ms, default 60 s
	GroupInstanceID     string        // group.instance.id: static membership (KIP-345)
	// MetadataMaxAge is metadata.max.age.ms, default 5 minutes: how often
	// the group leader looks for partitions added to its topics.
	MetadataMaxAge time.Duration

	// PartitionAssignmentStrategy is partition.assignment.strategy, in
	// order of preference. Legacy mode: "range" (default) or "roundrobin".
	// Coordinator mode: "range" (default), "roundrobin", "sticky",
	// "cooperative-sticky". A cooperative strategy first in the list makes
	// the consumer follow the cooperative protocol (KIP-429).
	PartitionAssignmentStrategy []string

	// Rebalance callbacks (ConsumerRebalanceListener). They run on the
	// goroutine that drives the rebalance, before revoking or after
	// assigning; Lost is called instead of Revoked when the partitions are
	// already owned by someone else (session expired, member fenced).
	OnRevoked  func(map[string][]int32)
	OnAssigned func(map[string][]int32)
	OnLost     func(map[string][]int32)

	// OnEvent, if set, receives every event synchronously; it must be quick.
	// Subscribe offers a buffered channel instead.
	OnEvent func(Event)

	Logger *zap.Logger

	filter *topicFilter // from Whitelist or Blacklist, set by validate
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Offset reset policies.
const (
	resetEarliest = "earliest"
	resetLatest   = "latest"
)

// Group protocols (group.protocol).
const (
	protocolClassic  = "classic"
	protocolConsumer = "consumer"
)

// Isolation levels.
const (
	readUncommitted = "read_uncommitted"
	readCommitted   = "read_committed"
)

// readCommitted reports whether the consumer reads only committed
// transactions.
func (c *Config) readCommitted() bool { return c.IsolationLevel == readCommitted }

// legacy reports whether c selects the ZooKeeper mode.
func (c *Config) legacy() bool { return c.ZooKeeperConnect != "" }

// consumerProtocol reports whether c selects KIP-848's consumer protocol.
func (c *Config) consumerProtocol() bool { return c.GroupProtocol == protocolConsumer }

// cooperative reports whether the preferred strategy is cooperative.
func (c *Config) cooperative() bool {
	return len(c.PartitionAssignmentStrategy) > 0 && c.PartitionAssignmentStrategy[0] == "cooperative-sticky"
}

// validate checks c and fills in defaults. Invalid group ids and topic names
// get the errors a Kafka broker gives for them.
func (c *Config) validate() error {
	if c.GroupID == "" {
		return fmt.Errorf("group.id is empty: %w", kerr.InvalidGroupID)
	}
	switch filters := btoi(c.Whitelist != "") + btoi(c.Blacklist != ""); {
	case filters > 1 || filters == 1 && len(c.Topics) > 0:
		return fmt.Errorf("%w: set one of topics, a whitelist and a blacklist", ErrInvalidConfig)
	case c.Blacklist != "" && !c.legacy():
		return fmt.Errorf("%w: a blacklist needs zookeeper.connect", ErrInvalidConfig)
	case c.Whitelist != "" && !c.legacy() && !strings.EqualFold(c.GroupProtocol, protocolConsumer):
		return fmt.Errorf("%w: a whitelist needs zookeeper.connect or group.protocol=consumer", ErrInvalidConfig)
	case filters == 1:
		var err error
		if c.filter, err = newTopicFilter(c.Whitelist+c.Blacklist, c.Blacklist != ""); err != nil {
			return err
		}
	case len(c.Topics) == 0:
		return fmt.Errorf("%w: no topics to subscribe to", ErrInvalidConfig)
	}
	for _, t := range c.Topics {
		if err := zkpaths.ValidateTopicName(t); err != nil {
			return fmt.Errorf("topic %q: %v: %w", t, err, kerr.InvalidTopicException)
		}
	}
	if (c.ZooKeeperConnect == "") == (len(c.BootstrapServers) == 0) {
		return fmt.Errorf("%w: set exactly one of zookeeper.connect and bootstrap.servers", ErrInvalidConfig)
	}
	if err := c.validateGroupProtocol(); err != nil {
		return err
	}
	if c.ClientID == "" {
		c.ClientID = "zkafka-consumer"
	}
	if c.AutoCommitInterval <= 0 {
		c.AutoCommitInterval = 5 * time.Second
		if c.legacy() {
			c.AutoCommitInterval = time.Minute
		}
	}
	switch c.AutoOffsetReset {
	case "", "largest", resetLatest:
		c.AutoOffsetReset = resetLatest
	case "smallest", resetEarliest:
		c.AutoOffsetReset = resetEarliest
	default:
		return fmt.Errorf("%w: auto.offset.reset %q", ErrInvalidConfig, c.AutoOffsetReset)
	}
	if c.MaxPollRecords <= 0 {
		c.MaxPollRecords = 500
	}
	switch c.IsolationLevel {
	case "":
		c.IsolationLevel = readUncommitted
	case readUncommitted, readCommitted:
	default:
		return fmt.Errorf("%w: isolation.level %q", ErrInvalidConfig, c.IsolationLevel)
	}
	if c.RebalanceMaxRetries <= 0 {
		c.RebalanceMaxRetries = 4
	}
	if c.RebalanceBackoff <= 0 {
		c.RebalanceBackoff = 2 * time.Second
	}
	if c.ZooKeeperSessionTimeout <= 0 {
		c.ZooKeeperSessionTimeout = 6 * time.Second
	}
	if c.Streams <= 0 {
		c.Streams = 1
	}
	if c.SessionTimeout <= 0 {
		c.SessionTimeout = 10 * time.Second
	}
	if c.HeartbeatInterval <= 0 {
		c.HeartbeatInterval = 3 * time.Second
	}
	if c.RebalanceTimeout <= 0 {
		c.RebalanceTimeout = time.Minute
	}
	if c.MetadataMaxAge <= 0 {
		c.MetadataMaxAge = 5 * time.Minute
	}
	if len(c.PartitionAssignmentStrategy) == 0 && !c.consumerProtocol() {
		c.PartitionAssignmentStrategy = []string{"range"}
	}
	allowed := []string{"range", "roundrobin", "sticky", "cooperative-sticky"}
	if c.legacy() {
		allowed = allowed[:2]
	}
	for _, s := range c.PartitionAssignmentStrategy {
		if !slices.Contains(allowed, s) {
			return fmt.Errorf("%w: partition.assignment.strategy %q (allowed: %v)", ErrInvalidConfig, s, allowed)
		}
	}
	if c.Logger == nil {
		c.Logger = zap.NewNop()
	}
	return nil
}

// validateGroupProtocol checks group.protocol and the configs that go with
// it as Kafka's ConsumerConfig does, before defaults fill them in.
func (c *Config) validateGroupProtocol() error {
	switch p := strings.ToLower(c.GroupProtocol); p {
	case "", protocolClassic:
		c.GroupProtocol = protocolClassic
	case protocolConsumer:
		c.GroupProtocol = p
	default:
		return fmt.Errorf("%w: group.protocol %q (allowed: classic, consumer)", ErrInvalidConfig, c.GroupProtocol)
	}
	if !c.consumerProtocol() {
		if c.GroupRemoteAssignor != "" {
			return fmt.Errorf("%w: group.remote.assignor cannot be set when group.protocol=classic", ErrInvalidConfig)
		}
		return nil
	}
	switch {
	case c.legacy():
		return fmt.Errorf("%w: group.protocol=consumer needs bootstrap.servers, not zookeeper.connect", ErrInvalidConfig)
	case len(c.PartitionAssignmentStrategy) > 0:
		return fmt.Errorf("%w: partition.assignment.strategy cannot be set when group.protocol=consumer", ErrInvalidConfig)
	case c.SessionTimeout > 0:
		return fmt.Errorf("%w: session.timeout.ms cannot be set when group.protocol=consumer", ErrInvalidConfig)
	case c.HeartbeatInterval > 0:
		return fmt.Errorf("%w: heartbeat.interval.ms cannot be set when group.protocol=consumer", ErrInvalidConfig)
	}
	return nil
}
