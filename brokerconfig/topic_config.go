package brokerconfig

import (
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/zkafka/zkafka/storage"
)

// TopicConfig is one topic-level config of Kafka 2.8 (LogConfig): its
// type, Kafka's own default, validator, the broker config that supplies the
// default (Kafka's TopicConfigSynonyms), and, when the log uses it, how it
// sets the LogConfig.
type TopicConfig struct {
	Name          string
	Type          Type
	KafkaDefault  string
	BrokerSynonym string // "" when no broker config supplies the default
	Doc           string
	validate      validator
	apply         func(c *storage.LogConfig, v string)
}

const maxLong = "9223372036854775807"

func setInt64(f func(c *storage.LogConfig) *int64) func(*storage.LogConfig, string) {
	return func(c *storage.LogConfig, v string) { *f(c), _ = strconv.ParseInt(v, 10, 64) }
}

func setInt32(f func(c *storage.LogConfig) *int32) func(*storage.LogConfig, string) {
	return func(c *storage.LogConfig, v string) {
		n, _ := strconv.ParseInt(v, 10, 32)
		*f(c) = int32(n)
	}
}

// topicConfigs lists every topic config Kafka 2.8 accepts, by name.
var topicConfigs = []TopicConfig{
	{Name: "cleanup.policy", Type: TypeList, KafkaDefault: "delete", validate: listOf("compact", "delete"),
		BrokerSynonym: "log.cleanup.policy", Doc: "How old segments are cleaned up: delete (time and size retention), compact (keep the last record of each key), or both.",
		apply: func(c *storage.LogConfig, v string) {
			// Without a log cleaner a compact-only log keeps everything, which
			// is also what an empty policy means.
			switch list := SplitListValue(v); {
			case strings.Contains(v, "compact") && strings.Contains(v, "delete"):
				c.CleanupPolicy = "compact,delete"
			case len(list) > 0 && list[0] == "delete":
				c.CleanupPolicy = "delete"
			default:
				c.CleanupPolicy = "compact"
			}
		}},
	{Name: "compression.type", Type: TypeString, KafkaDefault: "producer",
		validate:      oneOf("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"),
		BrokerSynonym: "compression.type", Doc: "The codec stored batches use; producer keeps what the producer sent."},
	{Name: "delete.retention.ms", Type: TypeLong, KafkaDefault: "86400000", validate: atLeast(0),
		BrokerSynonym: "log.cleaner.delete.retention.ms", Doc: "How long delete tombstones stay in a compacted log."},
	{Name: "file.delete.delay.ms", Type: TypeLong, KafkaDefault: "60000", validate: atLeast(0),
		BrokerSynonym: "log.segment.delete.delay.ms", Doc: "How long a deleted segment's files wait before they are removed from disk."},
	{Name: "flush.messages", Type: TypeLong, KafkaDefault: maxLong, validate: atLeast(0),
		BrokerSynonym: "log.flush.interval.messages", Doc: "Messages appended between forced fsyncs of the log."},
	{Name: "flush.ms", Type: TypeLong, KafkaDefault: maxLong, validate: atLeast(0),
		BrokerSynonym: "log.flush.interval.ms", Doc: "Milliseconds between forced fsyncs of the log."},
	{Name: "follower.replication.throttled.replicas", Type: TypeList, validate: validThrottledReplicas,
		Doc: "Replicas (partition:broker, or *) whose replication is throttled on the follower side."},
	{Name: "index.interval.bytes", Type: TypeInt, KafkaDefault: "4096", validate: atLeast(0),
		BrokerSynonym: "log.index.interval.bytes", Doc: "Bytes appended between entries of the offset index.",
		apply: setInt32(func(c *storage.LogConfig) *int32 { return &c.IndexIntervalBytes })},
	{Name: "leader.replication.throttled.replicas", Type: TypeList, validate: validThrottledReplicas,
		Doc: "Replicas (partition:broker, or *) whose replication is throttled on the leader side."},
	{Name: "max.compaction.lag.ms", Type: TypeLong, KafkaDefault: maxLong, validate: atLeast(1),
		BrokerSynonym: "log.cleaner.max.compaction.lag.ms", Doc: "The longest a record may stay uncompacted in a compacted log.",
		apply: setInt64(func(c *storage.LogConfig) *int64 { return &c.MaxCompactionLagMs })},
	{Name: "max.message.bytes", Type: TypeInt, KafkaDefault: "1048588", validate: atLeast(0),
		BrokerSynonym: "message.max.bytes", Doc: "The largest record batch the topic accepts.",
		apply: setInt32(func(c *storage.LogConfig) *int32 { return &c.MaxMessageBytes })},
	{Name: "message.downconversion.enable", Type: TypeBoolean, KafkaDefault: "true",
		BrokerSynonym: "log.message.downconversion.enable", Doc: "Whether fetches from old consumers may be down-converted to older message formats.",
		apply: func(c *storage.LogConfig, v string) { c.MessageDownconversionEnable = v == "true" }},
	{Name: "message.format.version", Type: TypeString, KafkaDefault: "2.8-IV1", validate: validMessageFormatVersion,
		BrokerSynonym: "log.message.format.version", Doc: "The message format version the broker appends in.",
		apply: func(c *storage.LogConfig, v string) { c.MessageFormat = RecordVersion(v) }},
	{Name: "message.timestamp.difference.max.ms", Type: TypeLong, KafkaDefault: maxLong, validate: atLeast(0),
		BrokerSynonym: "log.message.timestamp.difference.max.ms", Doc: "The largest difference allowed between a record's CreateTime timestamp and the broker's clock."},
	{Name: "message.timestamp.type", Type: TypeString, KafkaDefault: "CreateTime", validate: oneOf("CreateTime", "LogAppendTime"),
		BrokerSynonym: "log.message.timestamp.type", Doc: "Whether record timestamps are the producer's (CreateTime) or the broker's (LogAppendTime)."},
	{Name: "min.cleanable.dirty.ratio", Type: TypeDouble, KafkaDefault: "0.5", validate: between(0, 1),
		BrokerSynonym: "log.cleaner.min.cleanable.ratio", Doc: "The share of uncompacted log above which the cleaner compacts it.",
		apply: func(c *storage.LogConfig, v string) { c.MinCleanableDirtyRatio, _ = strconv.ParseFloat(v, 64) }},
	{Name: "min.compaction.lag.ms", Type: TypeLong, KafkaDefault: "0", validate: atLeast(0),
		BrokerSynonym: "log.cleaner.min.compaction.lag.ms", Doc: "The shortest time a record stays uncompacted.",
		apply: setInt64(func(c *storage.LogConfig) *int64 { return &c.MinCompactionLagMs })},
	{Name: "min.insync.replicas", Type: TypeInt, KafkaDefault: "1", validate: atLeast(1),
		BrokerSynonym: "min.insync.replicas", Doc: "The fewest in-sync replicas with which an acks=all produce succeeds."},
	{Name: "preallocate", Type: TypeBoolean, KafkaDefault: "false",
		BrokerSynonym: "log.preallocate", Doc: "Whether a new segment's file is preallocated."},
	{Name: "retention.bytes", Type: TypeLong, KafkaDefault: "-1",
		BrokerSynonym: "log.retention.bytes", Doc: "The size a partition's log may reach before its oldest segments are deleted; -1 for no limit.",
		apply: setInt64(func(c *storage.LogConfig) *int64 { return &c.RetentionBytes })},
	{Name: "retention.ms", Type: TypeLong, KafkaDefault: "604800000", validate: atLeast(-1),
		BrokerSynonym: "log.retention.ms", Doc: "How long a segment is kept after its newest record; -1 keeps data forever.",
		apply: setInt64(func(c *storage.LogConfig) *int64 { return &c.RetentionMs })},
	{Name: "segment.bytes", Type: TypeInt, KafkaDefault: "1073741824", validate: atLeast(14),
		BrokerSynonym: "log.segment.bytes", Doc: "The size at which the active segment is rolled.",
		apply: setInt64(func(c *storage.LogConfig) *int64 { return &c.SegmentBytes })},
	{Name: "segment.index.bytes", Type: TypeInt, KafkaDefault: "10485760", validate: atLeast(0),
		BrokerSynonym: "log.index.size.max.bytes", Doc: "The size of a segment's offset and time indexes.",
		apply: setInt32(func(c *storage.LogConfig) *int32 { return &c.MaxIndexSize })},
	{Name: "segment.jitter.ms", Type: TypeLong, KafkaDefault: "0", validate: atLeast(0),
		BrokerSynonym: "log.roll.jitter.ms", Doc: "The largest random jitter subtracted from segment.ms."},
	{Name: "segment.ms", Type: TypeLong, KafkaDefault: "604800000", validate: atLeast(1),
		BrokerSynonym: "log.roll.ms", Doc: "The age at which the active segment is rolled even if not full.",
		apply: setInt64(func(c *storage.LogConfig) *int64 { return &c.SegmentMs })},
	{Name: "unclean.leader.election.enable", Type: TypeBoolean, KafkaDefault: "false",
		BrokerSynonym: "unclean.leader.election.enable", Doc: "Whether a replica outside the ISR may become leader when no ISR member is alive, at the risk of losing data."},
}

var topicConfigByName = func() map[string]*TopicConfig {
	m := make(map[string]*TopicConfig, len(topicConfigs))
	for i := range topicConfigs {
		m[topicConfigs[i].Name] = &topicConfigs[i]
	}
	return m
}()

// TopicConfigs lists every topic config Kafka 2.8 accepts, by name.
func TopicConfigs() []TopicConfig { return slices.Clone(topicConfigs) }

// LookupTopicConfig returns the topic config with the given name.
func LookupTopicConfig(name string) (TopicConfig, bool) {
	def, ok := topicConfigByName[name]
	if !ok {
		return TopicConfig{}, false
	}
	return *def, true
}

// ValidateTopicConfig checks topic overrides as Kafka's LogConfig.validate
// does: every name known (an InvalidConfigError otherwise), every value
// parsing and in range (a ValueError), and min.compaction.lag.ms not above
// max.compaction.lag.ms (an InvalidConfigError). It returns the values
// normalized. Tools that write /config/topics directly (the --zookeeper
// paths) use it too; errors read as Kafka's messages.
func ValidateTopicConfig(cfg map[string]string) (map[string]string, error) {
	names := make([]string, 0, len(cfg))
	for k := range cfg {
		if _, ok := topicConfigByName[k]; !ok {
			return nil, invalidConfig("Unknown topic config name: %s", k)
		}
		names = append(names, k)
	}
	sort.Strings(names)
	out := make(map[string]string, len(cfg))
	for _, k := range names {
		def := topicConfigByName[k]
		v, err := ParseValue(k, def.Type, cfg[k])
		if err != nil {
			return nil, err
		}
		if def.validate != nil {
			if err := def.validate(k, v); err != nil {
				return nil, err
			}
		}
		out[k] = v
	}
	lag := func(k string) int64 {
		v, ok := out[k]
		if !ok {
			v = topicConfigByName[k].KafkaDefault
		}
		n, _ := strconv.ParseInt(v, 10, 64)
		return n
	}
	if minLag, maxLag := lag("min.compaction.lag.ms"), lag("max.compaction.lag.ms"); minLag > maxLag {
		return nil, invalidConfig("conflict topic config setting min.compaction.lag.ms (%d) > max.compaction.lag.ms (%d)", minLag, maxLag)
	}
	return out, nil
}

// ApplyTopicConfig applies topic overrides to c and validates the result; an
// unknown key or bad value is an error naming it. Configs the log does not
// use (min.insync.replicas, ...) are validated and otherwise left alone.
func ApplyTopicConfig(c *storage.LogConfig, cfg map[string]string) error {
	normalized, err := ValidateTopicConfig(cfg)
	if err != nil {
		return err
	}
	for k, v := range normalized {
		if def := topicConfigByName[k]; def.apply != nil {
			def.apply(c, v)
		}
	}
	if err := c.Validate(); err != nil {
		return &ValueError{msg: err.Error()}
	}
	return nil
}

// LogConfigFromBroker builds the broker's default LogConfig from broker
// config values (the effective ones, dynamic layers included), through the
// topic configs' broker synonyms, as Kafka's copyKafkaConfigToLog does.
func LogConfigFromBroker(brokerValue func(topicConfig string) string) storage.LogConfig {
	c := storage.DefaultLogConfig()
	for i := range topicConfigs {
		def := &topicConfigs[i]
		if def.apply == nil {
			continue
		}
		v, err := ParseValue(def.Name, def.Type, brokerValue(def.Name))
		if err != nil {
			continue // the broker config was validated where it was set
		}
		def.apply(&c, v)
	}
	if c.RetentionMs < 0 {
		c.RetentionMs = -1 // log.retention.hours=-2 means forever too
	}
	return c
}
