package brokerconfig

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Config is a broker's configuration, with Kafka's server.properties names
// and Kafka 2.8's defaults.
type Config struct {
	BrokerID                         int32         // broker.id (-1: generate through /brokers/seqid)
	BrokerIDGenerationEnable         bool          // broker.id.generation.enable
	ReservedBrokerMaxID              int32         // reserved.broker.max.id
	Rack                             string        // broker.rack
	Listeners                        []Listener    // listeners
	AdvertisedListeners              []Listener    // advertised.listeners (defaults to listeners)
	InterBrokerListenerName          string        // inter.broker.listener.name, else the listener named security.inter.broker.protocol
	SaslMechanismInterBrokerProtocol string        // sasl.mechanism.inter.broker.protocol
	LogDirs                          []string      // log.dirs, falling back to log.dir
	ZooKeeperConnect                 string        // zookeeper.connect, with an optional chroot
	ZooKeeperSessionTimeout          time.Duration // zookeeper.session.timeout.ms
	ZooKeeperConnectionTimeout       time.Duration // zookeeper.connection.timeout.ms (defaults to the session timeout)
	ZooKeeperSetACL                  bool          // zookeeper.set.acl
	NumPartitions                    int32         // num.partitions
	DefaultReplicationFactor         int16         // default.replication.factor
	MinInsyncReplicas                int32         // min.insync.replicas
	ReplicaLagTimeMax                time.Duration // replica.lag.time.max.ms
	NumReplicaFetchers               int32         // num.replica.fetchers
	NumRecoveryThreadsPerDataDir     int32         // num.recovery.threads.per.data.dir
	NumReplicaAlterLogDirsThreads    int32         // num.replica.alter.log.dirs.threads; 0 when unset (one per log dir)
	ReplicaFetchMaxBytes             int32         // replica.fetch.max.bytes
	ReplicaFetchMinBytes             int32         // replica.fetch.min.bytes
	ReplicaFetchWaitMax              time.Duration // replica.fetch.wait.max.ms
	ReplicaFetchBackoff              time.Duration // replica.fetch.backoff.ms
	MaxIncrementalFetchSessions      int32         // max.incremental.fetch.session.cache.slots: fetch sessions (KIP-227) the broker keeps; 0 creates none
	QuotaWindowNum                   int32         // quota.window.num: samples a client quota's rate is measured over
	QuotaWindowSize                  time.Duration // quota.window.size.seconds: each sample's span
	ReplicationQuotaWindowNum        int32         // replication.quota.window.num: samples a replication throttle's rate is measured over
	ReplicationQuotaWindowSize       time.Duration // replication.quota.window.size.seconds
	ControllerQuotaWindowNum         int32         // controller.quota.window.num: samples a controller mutation quota's rate is measured over
	ControllerQuotaWindowSize        time.Duration // controller.quota.window.size.seconds
	ReplicaHWCheckpointInterval      time.Duration // replica.high.watermark.checkpoint.interval.ms
	ReplicaTruncationMode            string        // replica.truncation.mode: epoch (KIP-101) or hw (pre-0.11, to show its failures)
	UncleanLeaderElectionEnable      bool          // unclean.leader.election.enable
	AutoLeaderRebalanceEnable        bool          // auto.leader.rebalance.enable
	AutoCreateTopicsEnable           bool          // auto.create.topics.enable
	DeleteTopicEnable                bool          // delete.topic.enable
	OffsetsTopicNumPartitions        int32         // offsets.topic.num.partitions
	OffsetsTopicReplicationFactor    int16         // offsets.topic.replication.factor
	GroupInitialRebalanceDelay       time.Duration // group.initial.rebalance.delay.ms
	LogSegmentBytes                  int64         // log.segment.bytes
	LogRollTime                      time.Duration // log.roll.ms / log.roll.hours
	LogRetentionTime                 time.Duration // log.retention.ms / .minutes / .hours (negative: forever)
	LogRetentionBytes                int64         // log.retention.bytes
	LogRetentionCheckInterval        time.Duration // log.retention.check.interval.ms
	LogIndexIntervalBytes            int32         // log.index.interval.bytes
	LogIndexSizeMaxBytes             int32         // log.index.size.max.bytes
	LogFlushOffsetCheckpointInterval time.Duration // log.flush.offset.checkpoint.interval.ms
	MessageMaxBytes                  int32         // message.max.bytes
	SocketRequestMaxBytes            int32         // socket.request.max.bytes
	ConnectionsMaxIdle               time.Duration // connections.max.idle.ms
	RequestTimeout                   time.Duration // request.timeout.ms
	ControllerSocketTimeout          time.Duration // controller.socket.timeout.ms
	ControlledShutdownEnable         bool          // controlled.shutdown.enable
	ControlledShutdownMaxRetries     int32         // controlled.shutdown.max.retries
	ControlledShutdownRetryBackoff   time.Duration // controlled.shutdown.retry.backoff.ms
	LeaderImbalancePerBrokerPercent  int32         // leader.imbalance.per.broker.percentage
	LeaderImbalanceCheckInterval     time.Duration // leader.imbalance.check.interval.seconds

	// BatchedCoordinatorAPIs (zkafka.batched.coordinator.apis.enable) lets
	// the broker advertise Kafka 3.0's batched FindCoordinator v4 and
	// OffsetFetch v8; off, it stops at Kafka 2.8's v3 and v7.
	BatchedCoordinatorAPIs bool
	// ConsumerGroupProtocol is group.coordinator.rebalance.protocols
	// including consumer: the broker serves KIP-848's ConsumerGroupHeartbeat
	// and ConsumerGroupDescribe (Kafka 4.0's), and OffsetCommit v9 for
	// their members' commits. The group.consumer.* configs shape it.
	ConsumerGroupProtocol bool
	// FeatureVersioning is inter.broker.protocol.version >= 2.7: the
	// controller enables KIP-584's /feature.
	FeatureVersioning bool
	// AlterIsr is inter.broker.protocol.version >= 2.7-IV2 (KIP-497): a
	// partition leader asks the controller to change its ISR with AlterIsr
	// instead of writing the state znode and /isr_change_notification itself.
	AlterIsr bool
	// TruncationOnFetch is inter.broker.protocol.version >= 2.7-IV1
	// (KIP-595's fetch fields): a follower sends the epoch of its last
	// fetched batch and truncates where the leader's Fetch answer says its
	// log diverged, instead of asking OffsetForLeaderEpoch first.
	TruncationOnFetch bool
	// ClockSkew (zkafka.clock.skew.ms, dynamic per broker) moves this
	// broker's wall clock from the machine's, for clock faults (`zkafka
	// chaos run --faults clock`); 0 in any real use.
	ClockSkew time.Duration
	// PprofListener (zkafka.pprof.listener) is where the broker serves
	// net/http/pprof; empty serves nothing.
	PprofListener string

	// Connection and memory limits.
	MaxConnections               int32            // max.connections
	MaxConnectionsPerIP          int32            // max.connections.per.ip
	MaxConnectionsPerIPOverrides map[string]int32 // max.connections.per.ip.overrides: host or IP to its maximum
	ListenerMaxConnections       map[string]int32 // listener.name.<listener>.max.connections
	QueuedMaxRequestBytes        int64            // queued.max.request.bytes (not positive: unbounded)

	// Properties are the supplied properties (server.properties and
	// overrides), the static layer under the dynamic broker configs.
	Properties map[string]string

	// Unknown holds supplied keys the broker does not know, logged at start
	// the way Kafka warns about them.
	Unknown []string
}

// Listener is one entry of listeners or advertised.listeners:
// NAME://host:port, with the security protocol from
// listener.security.protocol.map.
type Listener struct {
	Name             string
	SecurityProtocol string
	Host             string
	Port             int32
}

// String is the listener as listeners spells it: NAME://host:port.
func (l Listener) String() string {
	return fmt.Sprintf("%s://%s", l.Name, net.JoinHostPort(l.Host, strconv.Itoa(int(l.Port))))
}

// ErrConfig marks a configuration error; the message names the key.
var ErrConfig = errors.New("invalid configuration")

// The values of replica.truncation.mode.
const (
	// TruncateByEpoch is KIP-101 (Kafka 0.11+): a new follower asks the
	// leader where its latest leader epoch ends and truncates there.
	TruncateByEpoch = "epoch"
	// TruncateToHighWatermark is the pre-0.11 rule, kept to show its
	// failures: a new follower cuts its log at its own high watermark.
	TruncateToHighWatermark = "hw"
)

// zkafkaConfigDefs are this broker's own configs, beyond Kafka 2.8's.
var zkafkaConfigDefs = []brokerConfigDef{
	{Name: "replica.truncation.mode", Type: TypeString, Default: TruncateByEpoch,
		Doc: "How a follower truncates its log when it starts following a new leader: epoch asks the leader where the follower's latest leader epoch ends (KIP-101, Kafka 0.11 and later), hw cuts the log at the follower's own high watermark, the pre-0.11 rule kept to show its failures."},
	{Name: "group.coordinator.rebalance.protocols", Type: TypeList, Default: "classic",
		Doc: "The list of enabled rebalance protocols (Kafka 4.0's config). Supported protocols: classic,consumer. classic is the JoinGroup/SyncGroup protocol of Kafka 2.8 and must stay enabled; consumer adds KIP-848's ConsumerGroupHeartbeat and ConsumerGroupDescribe, which a Kafka 2.8 broker does not have, so the default is classic alone."},
	{Name: "group.consumer.session.timeout.ms", Type: TypeInt, Default: "45000",
		Doc: "The timeout to detect client failures when using the consumer group protocol."},
	{Name: "group.consumer.min.session.timeout.ms", Type: TypeInt, Default: "45000",
		Doc: "The minimum allowed session timeout for registered consumers."},
	{Name: "group.consumer.max.session.timeout.ms", Type: TypeInt, Default: "60000",
		Doc: "The maximum allowed session timeout for registered consumers."},
	{Name: "group.consumer.heartbeat.interval.ms", Type: TypeInt, Default: "5000",
		Doc: "The heartbeat interval given to the members of a consumer group."},
	{Name: "group.consumer.min.heartbeat.interval.ms", Type: TypeInt, Default: "5000",
		Doc: "The minimum heartbeat interval for registered consumers."},
	{Name: "group.consumer.max.heartbeat.interval.ms", Type: TypeInt, Default: "15000",
		Doc: "The maximum heartbeat interval for registered consumers."},
	{Name: "group.consumer.max.size", Type: TypeInt, Default: "2147483647",
		Doc: "The maximum number of consumers that a single consumer group can accommodate."},
	{Name: "group.consumer.assignors", Type: TypeList, Default: "uniform,range",
		Doc: "The server side assignors as a list of names (uniform, range). The first one in the list is considered as the default assignor to be used in the case where the consumer does not specify an assignor."},
	{Name: "zkafka.batched.coordinator.apis.enable", Type: TypeBoolean, Default: "false",
		Doc: "Advertise Kafka 3.0's batched FindCoordinator v4 and OffsetFetch v8; when false the broker stops at Kafka 2.8's v3 and v7."},
	{Name: "zkafka.clock.skew.ms", Type: TypeLong, Default: "0",
		Doc: "How far this broker's wall clock is moved from the machine's, for clock faults; 0 in any real use."},
	{Name: "zkafka.pprof.listener", Type: TypeString, Null: true,
		Doc: "host:port where the broker serves Go's pprof profiles over HTTP (/debug/pprof/), for performance work; empty (the default) serves none. The profiles show request contents, so bind it to localhost."},
}

// brokerConfigDefs are the broker configs by name: Kafka's and zkafka's own.
var brokerConfigDefs = func() map[string]*brokerConfigDef {
	m := make(map[string]*brokerConfigDef, len(kafkaConfigDefs)+len(zkafkaConfigDefs))
	for _, defs := range [][]brokerConfigDef{kafkaConfigDefs, zkafkaConfigDefs} {
		for i := range defs {
			m[defs[i].Name] = &defs[i]
		}
	}
	return m
}()

// ReadPropertiesFile reads a Java properties file.
func ReadPropertiesFile(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	props, err := ParseProperties(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return props, nil
}

// ParseProperties reads the subset of the Java properties format that Kafka's
// files use: key=value or key:value lines, '#' and '!' comments, trailing '\'
// continuations.
func ParseProperties(r io.Reader) (map[string]string, error) {
	props := make(map[string]string)
	sc := bufio.NewScanner(r)
	var pending string
	for sc.Scan() {
		line := strings.TrimLeft(sc.Text(), " \t\f")
		if pending == "" && (line == "" || line[0] == '#' || line[0] == '!') {
			continue
		}
		if strings.HasSuffix(line, `\`) && !strings.HasSuffix(line, `\\`) {
			pending += line[:len(line)-1]
			continue
		}
		line, pending = pending+line, ""
		i := strings.IndexAny(line, "=:")
		if i < 0 {
			props[strings.TrimSpace(line)] = ""
			continue
		}
		props[strings.TrimSpace(line[:i])] = strings.TrimSpace(line[i+1:])
	}
	return props, sc.Err()
}

// ParseOverrides turns "key=value" strings (kafka-server-start.sh's
// --override) into a map.
func ParseOverrides(overrides []string) (map[string]string, error) {
	props := make(map[string]string, len(overrides))
	for _, o := range overrides {
		k, v, ok := strings.Cut(o, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("override %q is not key=value: %w", o, ErrConfig)
		}
		props[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return props, nil
}

// New builds a Config from properties, applying Kafka's defaults to
// everything missing.
func New(props map[string]string) (*Config, error) {
	p := NewReader(props)
	c := &Config{
		BrokerID:                         p.Int32("broker.id"),
		BrokerIDGenerationEnable:         p.Bool("broker.id.generation.enable"),
		ReservedBrokerMaxID:              p.Int32("reserved.broker.max.id"),
		Rack:                             p.str("broker.rack"),
		ZooKeeperConnect:                 p.str("zookeeper.connect"),
		ZooKeeperSessionTimeout:          p.Ms("zookeeper.session.timeout.ms"),
		ZooKeeperSetACL:                  p.Bool("zookeeper.set.acl"),
		NumPartitions:                    p.Int32("num.partitions"),
		DefaultReplicationFactor:         int16(p.Int32("default.replication.factor")),
		MinInsyncReplicas:                p.Int32("min.insync.replicas"),
		ReplicaLagTimeMax:                p.Ms("replica.lag.time.max.ms"),
		NumReplicaFetchers:               p.Int32("num.replica.fetchers"),
		NumRecoveryThreadsPerDataDir:     p.Int32("num.recovery.threads.per.data.dir"),
		ReplicaFetchMaxBytes:             p.Int32("replica.fetch.max.bytes"),
		ReplicaFetchMinBytes:             p.Int32("replica.fetch.min.bytes"),
		ReplicaFetchWaitMax:              p.Ms("replica.fetch.wait.max.ms"),
		ReplicaFetchBackoff:              p.Ms("replica.fetch.backoff.ms"),
		MaxIncrementalFetchSessions:      p.Int32("max.incremental.fetch.session.cache.slots"),
		QuotaWindowNum:                   p.Int32("quota.window.num"),
		QuotaWindowSize:                  time.Duration(p.Int32("quota.window.size.seconds")) * time.Second,
		ReplicationQuotaWindowNum:        p.Int32("replication.quota.window.num"),
		ReplicationQuotaWindowSize:       time.Duration(p.Int32("replication.quota.window.size.seconds")) * time.Second,
		ControllerQuotaWindowNum:         p.Int32("controller.quota.window.num"),
		ControllerQuotaWindowSize:        time.Duration(p.Int32("controller.quota.window.size.seconds")) * time.Second,
		ReplicaHWCheckpointInterval:      p.Ms("replica.high.watermark.checkpoint.interval.ms"),
		ReplicaTruncationMode:            p.str("replica.truncation.mode"),
		UncleanLeaderElectionEnable:      p.Bool("unclean.leader.election.enable"),
		AutoLeaderRebalanceEnable:        p.Bool("auto.leader.rebalance.enable"),
		AutoCreateTopicsEnable:           p.Bool("auto.create.topics.enable"),
		DeleteTopicEnable:                p.Bool("delete.topic.enable"),
		OffsetsTopicNumPartitions:        p.Int32("offsets.topic.num.partitions"),
		OffsetsTopicReplicationFactor:    int16(p.Int32("offsets.topic.replication.factor")),
		GroupInitialRebalanceDelay:       p.Ms("group.initial.rebalance.delay.ms"),
		LogSegmentBytes:                  p.Int64("log.segment.bytes"),
		LogRetentionBytes:                p.Int64("log.retention.bytes"),
		LogRetentionCheckInterval:        p.Ms("log.retention.check.interval.ms"),
		LogIndexIntervalBytes:            p.Int32("log.index.interval.bytes"),
		LogIndexSizeMaxBytes:             p.Int32("log.index.size.max.bytes"),
		LogFlushOffsetCheckpointInterval: p.Ms("log.flush.offset.checkpoint.interval.ms"),
		MessageMaxBytes:                  p.Int32("message.max.bytes"),
		SocketRequestMaxBytes:            p.Int32("socket.request.max.bytes"),
		ConnectionsMaxIdle:               p.Ms("connections.max.idle.ms"),
		RequestTimeout:                   p.Ms("request.timeout.ms"),
		ControllerSocketTimeout:          p.Ms("controller.socket.timeout.ms"),
		ControlledShutdownEnable:         p.Bool("controlled.shutdown.enable"),
		ControlledShutdownMaxRetries:     p.Int32("controlled.shutdown.max.retries"),
		ControlledShutdownRetryBackoff:   p.Ms("controlled.shutdown.retry.backoff.ms"),
		LeaderImbalancePerBrokerPercent:  p.Int32("leader.imbalance.per.broker.percentage"),
		LeaderImbalanceCheckInterval:     time.Duration(p.Int64("leader.imbalance.check.interval.seconds")) * time.Second,
		BatchedCoordinatorAPIs:           p.Bool("zkafka.batched.coordinator.apis.enable"),
		ClockSkew:                        p.Ms("zkafka.clock.skew.ms"),
		PprofListener:                    p.str("zkafka.pprof.listener"),
		MaxConnections:                   p.Int32("max.connections"),
		MaxConnectionsPerIP:              p.Int32("max.connections.per.ip"),
		QueuedMaxRequestBytes:            p.Int64("queued.max.request.bytes"),
		SaslMechanismInterBrokerProtocol: p.str("sasl.mechanism.inter.broker.protocol"),
	}
	c.Properties = maps.Clone(props)
	c.ZooKeeperConnectionTimeout = c.ZooKeeperSessionTimeout
	if p.has("num.replica.alter.log.dirs.threads") {
		c.NumReplicaAlterLogDirsThreads = p.Int32("num.replica.alter.log.dirs.threads")
		if c.NumReplicaAlterLogDirsThreads <= 0 {
			return nil, fmt.Errorf("num.replica.alter.log.dirs.threads must be positive: %w", ErrConfig)
		}
	}
	if p.has("zookeeper.connection.timeout.ms") {
		c.ZooKeeperConnectionTimeout = p.Ms("zookeeper.connection.timeout.ms")
	}
	c.LogRollTime = time.Duration(p.Int64("log.roll.hours")) * time.Hour
	if p.has("log.roll.ms") {
		c.LogRollTime = p.Ms("log.roll.ms")
	}
	// Kafka's precedence: log.retention.ms, then .minutes, then .hours.
	switch {
	case p.has("log.retention.ms"):
		c.LogRetentionTime = p.Ms("log.retention.ms")
	case p.has("log.retention.minutes"):
		c.LogRetentionTime = time.Duration(p.Int64("log.retention.minutes")) * time.Minute
	default:
		c.LogRetentionTime = time.Duration(p.Int64("log.retention.hours")) * time.Hour
	}
	consumerProtocol, err := rebalanceProtocols(p.List("group.coordinator.rebalance.protocols"))
	if err != nil {
		return nil, err
	}
	c.ConsumerGroupProtocol = consumerProtocol
	if err := checkConsumerGroupConfigs(p); err != nil {
		return nil, err
	}
	c.LogDirs = p.List("log.dirs")
	if len(c.LogDirs) == 0 {
		c.LogDirs = []string{p.str("log.dir")}
	}
	protocols, err := parseProtocolMap(p.str("listener.security.protocol.map"))
	if err != nil {
		return nil, err
	}
	// Kafka's listeners default to null, meaning the deprecated host.name
	// and port.
	listeners := p.str("listeners")
	if !p.has("listeners") {
		listeners = "PLAINTEXT://" + p.str("host.name") + ":" + p.str("port")
	}
	if c.Listeners, err = parseListeners("listeners", listeners, protocols); err != nil {
		return nil, err
	}
	c.AdvertisedListeners = c.Listeners
	if p.has("advertised.listeners") {
		if c.AdvertisedListeners, err = parseListeners("advertised.listeners", p.str("advertised.listeners"), protocols); err != nil {
			return nil, err
		}
	}
	c.InterBrokerListenerName = p.str("inter.broker.listener.name")
	if c.InterBrokerListenerName != "" && p.has("security.inter.broker.protocol") {
		return nil, fmt.Errorf("only one of inter.broker.listener.name and security.inter.broker.protocol should be set: %w", ErrConfig)
	}
	if c.InterBrokerListenerName == "" {
		c.InterBrokerListenerName = p.str("security.inter.broker.protocol")
	}
	ibp := p.str("inter.broker.protocol.version")
	if c.FeatureVersioning, err = ibpAtLeast(ibp, 7, 0); err != nil {
		return nil, err
	}
	if c.AlterIsr, err = ibpAtLeast(ibp, 7, 2); err != nil {
		return nil, err
	}
	if c.TruncationOnFetch, err = ibpAtLeast(ibp, 7, 1); err != nil {
		return nil, err
	}
	if c.MaxConnectionsPerIPOverrides, err = parseConnectionOverrides(p.str("max.connections.per.ip.overrides")); err != nil {
		return nil, err
	}
	c.ListenerMaxConnections = map[string]int32{}
	for _, l := range c.Listeners {
		if k := ListenerMaxConnectionsKey(l.Name); p.has(k) {
			c.ListenerMaxConnections[l.Name] = p.Int32(k)
		}
	}
	if err := p.Err(); err != nil {
		return nil, err
	}
	for k := range props {
		if _, ok := brokerConfigDefs[k]; !ok && !authorizerConfigs[k] && !isListenerMaxConnectionsKey(k) && !isListenerOverride(k) {
			c.Unknown = append(c.Unknown, k)
		}
	}
	sort.Strings(c.Unknown)
	return c, c.validate()
}

// interBrokerProtocolVersion matches the versions Kafka 2.8 knows: 0.8.0 to
// 2.8, each with an optional -IVn.
var interBrokerProtocolVersion = regexp.MustCompile(`^(0\.(8|9|10|11)\.[0-9]|(1\.[01]|2\.[0-8])(\.[0-9]+)?)(-IV[0-9])?$`)

// ibpAtLeast reports whether an inter.broker.protocol.version is 2.minor-IViv
// or later, in Kafka's order: a version without -IVn is that release's last
// (2.7 is 2.7-IV2), and every 0.x and 1.x comes before 2.0.
func ibpAtLeast(v string, minor, iv int) (bool, error) {
	if !interBrokerProtocolVersion.MatchString(v) {
		return false, fmt.Errorf("inter.broker.protocol.version: Version `%s` is not a valid version: %w", v, ErrConfig)
	}
	rest, ok := strings.CutPrefix(v, "2.")
	if !ok {
		return false, nil
	}
	vMinor, _ := strconv.Atoi(rest[:1])
	vIV := math.MaxInt
	if _, n, ok := strings.Cut(rest, "-IV"); ok {
		vIV, _ = strconv.Atoi(n)
	}
	return vMinor > minor || vMinor == minor && vIV >= iv, nil
}

func (c *Config) validate() error {
	switch {
	case c.ZooKeeperConnect == "":
		return fmt.Errorf("zookeeper.connect is required: %w", ErrConfig)
	case c.BrokerID < -1:
		return fmt.Errorf("broker.id %d must be -1 or non-negative: %w", c.BrokerID, ErrConfig)
	case c.BrokerID > c.ReservedBrokerMaxID:
		return fmt.Errorf("broker.id %d is above reserved.broker.max.id %d: %w", c.BrokerID, c.ReservedBrokerMaxID, ErrConfig)
	case c.MessageMaxBytes <= 0 || c.SocketRequestMaxBytes <= 0:
		return fmt.Errorf("message.max.bytes and socket.request.max.bytes must be positive: %w", ErrConfig)
	case c.LogSegmentBytes < 14:
		return fmt.Errorf("log.segment.bytes %d is below 14: %w", c.LogSegmentBytes, ErrConfig)
	case c.NumPartitions <= 0 || c.DefaultReplicationFactor <= 0:
		return fmt.Errorf("num.partitions and default.replication.factor must be positive: %w", ErrConfig)
	case c.QuotaWindowNum < 1 || c.QuotaWindowSize < time.Second:
		return fmt.Errorf("quota.window.num and quota.window.size.seconds must be at least 1: %w", ErrConfig)
	case c.ReplicationQuotaWindowNum < 1 || c.ReplicationQuotaWindowSize < time.Second:
		return fmt.Errorf("replication.quota.window.num and replication.quota.window.size.seconds must be at least 1: %w", ErrConfig)
	case c.ControllerQuotaWindowNum < 1 || c.ControllerQuotaWindowSize < time.Second:
		return fmt.Errorf("controller.quota.window.num and controller.quota.window.size.seconds must be at least 1: %w", ErrConfig)
	case c.ReplicaTruncationMode != TruncateByEpoch && c.ReplicaTruncationMode != TruncateToHighWatermark:
		return fmt.Errorf("replica.truncation.mode %q must be epoch or hw: %w", c.ReplicaTruncationMode, ErrConfig)
	case c.MaxIncrementalFetchSessions < 0:
		return fmt.Errorf("max.incremental.fetch.session.cache.slots must be at least 0: %w", ErrConfig)
	case c.MaxConnections < 0 || c.MaxConnectionsPerIP < 0:
		return fmt.Errorf("max.connections and max.connections.per.ip must be at least 0: %w", ErrConfig)
	case c.MaxConnectionsPerIP == 0 && len(c.MaxConnectionsPerIPOverrides) == 0:
		return fmt.Errorf("max.connections.per.ip can be set to zero only if max.connections.per.ip.overrides property is set: %w", ErrConfig)
	case c.QueuedMaxRequestBytes > 0 && c.QueuedMaxRequestBytes < int64(c.SocketRequestMaxBytes):
		return fmt.Errorf("queued.max.request.bytes must be larger or equal to socket.request.max.bytes: %w", ErrConfig)
	case c.NumReplicaFetchers <= 0 || c.ReplicaFetchMaxBytes <= 0 || c.MinInsyncReplicas <= 0:
		return fmt.Errorf("num.replica.fetchers, replica.fetch.max.bytes and min.insync.replicas must be positive: %w", ErrConfig)
	case c.NumRecoveryThreadsPerDataDir <= 0:
		return fmt.Errorf("num.recovery.threads.per.data.dir must be at least 1: %w", ErrConfig)
	}
	if _, ok := c.AdvertisedListener(c.InterBrokerListenerName); !ok {
		return fmt.Errorf("inter.broker.listener.name %s is not among advertised.listeners: %w", c.InterBrokerListenerName, ErrConfig)
	}
	for _, l := range c.Listeners {
		switch l.SecurityProtocol {
		case "PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL":
		default:
			return fmt.Errorf("listener %s: No enum constant org.apache.kafka.common.security.auth.SecurityProtocol.%s: %w", l.Name, l.SecurityProtocol, ErrConfig)
		}
	}
	return nil
}

// ListenerConfig is a security config of a listener as Kafka's
// ListenerName.configPrefix finds it: listener.name.<listener>.<key>
// (the listener name lower-cased), else key itself, else its default.
func (c *Config) ListenerConfig(listener, key string) string {
	if v, ok := c.Properties["listener.name."+strings.ToLower(listener)+"."+key]; ok {
		return v
	}
	return NewReader(c.Properties).str(key)
}

// ListenerMechanismConfig is a SASL config a broker gives per listener and
// mechanism: listener.name.<listener>.<mechanism>.<key>, both lower-cased;
// Kafka reads sasl.jaas.config for a broker only in this form.
func (c *Config) ListenerMechanismConfig(listener, mechanism, key string) string {
	return c.Properties[ListenerMechanismKey(listener, mechanism, key)]
}

// ListenerMechanismKey is listener.name.<listener>.<mechanism>.<key>.
func ListenerMechanismKey(listener, mechanism, key string) string {
	return "listener.name." + strings.ToLower(listener) + "." + strings.ToLower(mechanism) + "." + key
}

// AdvertisedListener returns the advertised listener with the given name.
func (c *Config) AdvertisedListener(name string) (Listener, bool) {
	for _, l := range c.AdvertisedListeners {
		if l.Name == name {
			return l, true
		}
	}
	return Listener{}, false
}

func parseProtocolMap(s string) (map[string]string, error) {
	m := make(map[string]string)
	for _, entry := range splitList(s) {
		name, proto, ok := strings.Cut(entry, ":")
		if !ok {
			return nil, fmt.Errorf("listener.security.protocol.map entry %q is not NAME:PROTOCOL: %w", entry, ErrConfig)
		}
		m[strings.ToUpper(name)] = strings.ToUpper(proto)
	}
	return m, nil
}

func parseListeners(key, s string, protocols map[string]string) ([]Listener, error) {
	var ls []Listener
	seen := map[string]bool{}
	for _, entry := range splitList(s) {
		name, addr, ok := strings.Cut(entry, "://")
		if !ok {
			return nil, fmt.Errorf("%s entry %q is not NAME://host:port: %w", key, entry, ErrConfig)
		}
		host, portStr, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, fmt.Errorf("%s entry %q: %v: %w", key, entry, err, ErrConfig)
		}
		port, err := strconv.ParseUint(portStr, 10, 16)
		if err != nil {
			return nil, fmt.Errorf("%s entry %q: bad port: %w", key, entry, ErrConfig)
		}
		name = strings.ToUpper(name)
		proto, ok := protocols[name]
		if !ok {
			return nil, fmt.Errorf("%s: listener %s has no entry in listener.security.protocol.map: %w", key, name, ErrConfig)
		}
		if seen[name] {
			return nil, fmt.Errorf("%s: listener name %s appears twice: %w", key, name, ErrConfig)
		}
		seen[name] = true
		ls = append(ls, Listener{Name: name, SecurityProtocol: proto, Host: host, Port: int32(port)})
	}
	if len(ls) == 0 {
		return nil, fmt.Errorf("%s is empty: %w", key, ErrConfig)
	}
	return ls, nil
}

// ListenerMaxConnectionsKey is the per-listener connection limit's key,
// listener.name.<listener>.max.connections, the listener name lower-cased
// as Kafka's listener prefix is.
func ListenerMaxConnectionsKey(listener string) string {
	return "listener.name." + strings.ToLower(listener) + ".max.connections"
}

func isListenerMaxConnectionsKey(k string) bool {
	name, ok := strings.CutPrefix(k, "listener.name.")
	if !ok {
		return false
	}
	name, ok = strings.CutSuffix(name, ".max.connections")
	return ok && name != "" && !strings.Contains(name, ".")
}

// authorizerConfigs are the configs the AclAuthorizer reads from the
// broker's properties: not KafkaConfig's, yet not unknown to the broker.
var authorizerConfigs = map[string]bool{"super.users": true, "allow.everyone.if.no.acl.found": true}

// isListenerOverride reports whether k is listener.name.<listener>.<config>
// or listener.name.<listener>.<mechanism>.<config> of a config the broker
// knows.
func isListenerOverride(k string) bool {
	rest, ok := strings.CutPrefix(k, "listener.name.")
	if !ok {
		return false
	}
	_, base, ok := strings.Cut(rest, ".")
	if !ok {
		return false
	}
	if _, known := brokerConfigDefs[base]; known {
		return true
	}
	_, base, ok = strings.Cut(base, ".")
	return ok && slices.Contains(listenerMechanismConfigs, base)
}

// parseConnectionOverrides reads max.connections.per.ip.overrides,
// "host:count,host:count", splitting each entry at its last colon so IPv6
// addresses work, as Kafka's parseCsvMap does.
func parseConnectionOverrides(s string) (map[string]int32, error) {
	m := map[string]int32{}
	for _, entry := range splitList(s) {
		i := strings.LastIndex(entry, ":")
		if i < 0 {
			return nil, fmt.Errorf("max.connections.per.ip.overrides entry %q is not host:count: %w", entry, ErrConfig)
		}
		host := strings.TrimSpace(entry[:i])
		n, err := strconv.ParseInt(strings.TrimSpace(entry[i+1:]), 10, 32)
		if err != nil {
			return nil, fmt.Errorf("max.connections.per.ip.overrides entry %q: count is not an integer: %w", entry, ErrConfig)
		}
		if !validHostPattern(host) {
			return nil, fmt.Errorf("max.connections.per.ip.overrides contains invalid addresses : %s: %w", host, ErrConfig)
		}
		m[host] = int32(n)
	}
	return m, nil
}

// validHostPattern is Kafka's check of an override's host: letters,
// digits and -%._: only.
func validHostPattern(h string) bool {
	for _, r := range h {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || strings.ContainsRune("-%._:", r)) {
			return false
		}
	}
	return true
}

func splitList(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

// Reader reads typed values of broker properties, Kafka's default for a key
// that is missing, remembering the first error. The broker reads the keys
// Config has no field for through it.
type Reader struct {
	props map[string]string
	err   error
}

// NewReader reads props.
func NewReader(props map[string]string) *Reader { return &Reader{props: props} }

// Err is the first error of a read, naming its key.
func (p *Reader) Err() error { return p.err }

func (p *Reader) has(k string) bool { return strings.TrimSpace(p.props[k]) != "" }

func (p *Reader) str(k string) string {
	if v, ok := p.props[k]; ok {
		return v
	}
	if def, ok := brokerConfigDefs[k]; ok {
		return def.Default
	}
	return ""
}

// List reads a comma-separated list, its default when unset.
func (p *Reader) List(k string) []string { return splitList(p.str(k)) }

// Int64 reads an integer.
func (p *Reader) Int64(k string) int64 {
	v, err := strconv.ParseInt(p.str(k), 10, 64)
	if err != nil && p.err == nil {
		p.err = fmt.Errorf("%s=%q is not an integer: %w", k, p.str(k), ErrConfig)
	}
	return v
}

// Int32 reads a 32-bit integer.
func (p *Reader) Int32(k string) int32 {
	v, err := strconv.ParseInt(p.str(k), 10, 32)
	if err != nil && p.err == nil {
		p.err = fmt.Errorf("%s=%q is not a 32-bit integer: %w", k, p.str(k), ErrConfig)
	}
	return int32(v)
}

// Ms reads a duration in milliseconds.
func (p *Reader) Ms(k string) time.Duration { return time.Duration(p.Int64(k)) * time.Millisecond }

// Bool reads true or false.
func (p *Reader) Bool(k string) bool {
	v, err := strconv.ParseBool(p.str(k))
	if err != nil && p.err == nil {
		p.err = fmt.Errorf("%s=%q is not true or false: %w", k, p.str(k), ErrConfig)
	}
	return v
}
