package broker

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/zkafka/zkafka/storage"
)

// topicConfigDef is one topic-level config of Kafka 2.8 (LogConfig): its
// type, Kafka's own default, validator, the broker config that supplies the
// default (Kafka's TopicConfigSynonyms), and, when the log uses it, how it
// sets the LogConfig.
type topicConfigDef struct {
	name          string
	typ           configType
	kafkaDefault  string
	validate      configValidator
	brokerSynonym string
	doc           string
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

// topicConfigDefs lists every topic config Kafka 2.8 accepts, by name.
var topicConfigDefs = []topicConfigDef{
	{name: "cleanup.policy", typ: configTypeList, kafkaDefault: "delete", validate: listOf("compact", "delete"),
		brokerSynonym: "log.cleanup.policy", doc: "How old segments are cleaned up: delete (time and size retention), compact (keep the last record of each key), or both.",
		apply: func(c *storage.LogConfig, v string) {
			// Without a log cleaner a compact-only log keeps everything, which
			// is also what an empty policy means.
			switch list := splitListValue(v); {
			case strings.Contains(v, "compact") && strings.Contains(v, "delete"):
				c.CleanupPolicy = "compact,delete"
			case len(list) > 0 && list[0] == "delete":
				c.CleanupPolicy = "delete"
			default:
				c.CleanupPolicy = "compact"
			}
		}},
	{name: "compression.type", typ: configTypeString, kafkaDefault: "producer",
		validate:      oneOf("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"),
		brokerSynonym: "compression.type", doc: "The codec stored batches use; producer keeps what the producer sent."},
	{name: "delete.retention.ms", typ: configTypeLong, kafkaDefault: "86400000", validate: atLeast(0),
		brokerSynonym: "log.cleaner.delete.retention.ms", doc: "How long delete tombstones stay in a compacted log."},
	{name: "file.delete.delay.ms", typ: configTypeLong, kafkaDefault: "60000", validate: atLeast(0),
		brokerSynonym: "log.segment.delete.delay.ms", doc: "How long a deleted segment's files wait before they are removed from disk."},
	{name: "flush.messages", typ: configTypeLong, kafkaDefault: maxLong, validate: atLeast(0),
		brokerSynonym: "log.flush.interval.messages", doc: "Messages appended between forced fsyncs of the log."},
	{name: "flush.ms", typ: configTypeLong, kafkaDefault: maxLong, validate: atLeast(0),
		brokerSynonym: "log.flush.interval.ms", doc: "Milliseconds between forced fsyncs of the log."},
	{name: "follower.replication.throttled.replicas", typ: configTypeList, validate: validThrottledReplicas,
		doc: "Replicas (partition:broker, or *) whose replication is throttled on the follower side."},
	{name: "index.interval.bytes", typ: configTypeInt, kafkaDefault: "4096", validate: atLeast(0),
		brokerSynonym: "log.index.interval.bytes", doc: "Bytes appended between entries of the offset index.",
		apply: setInt32(func(c *storage.LogConfig) *int32 { return &c.IndexIntervalBytes })},
	{name: "leader.replication.throttled.replicas", typ: configTypeList, validate: validThrottledReplicas,
		doc: "Replicas (partition:broker, or *) whose replication is throttled on the leader side."},
	{name: "max.compaction.lag.ms", typ: configTypeLong, kafkaDefault: maxLong, validate: atLeast(1),
		brokerSynonym: "log.cleaner.max.compaction.lag.ms", doc: "The longest a record may stay uncompacted in a compacted log."},
	{name: "max.message.bytes", typ: configTypeInt, kafkaDefault: "1048588", validate: atLeast(0),
		brokerSynonym: "message.max.bytes", doc: "The largest record batch the topic accepts.",
		apply: setInt32(func(c *storage.LogConfig) *int32 { return &c.MaxMessageBytes })},
	{name: "message.downconversion.enable", typ: configTypeBoolean, kafkaDefault: "true",
		brokerSynonym: "log.message.downconversion.enable", doc: "Whether fetches from old consumers may be down-converted to older message formats."},
	{name: "message.format.version", typ: configTypeString, kafkaDefault: "2.8-IV1", validate: validMessageFormatVersion,
		brokerSynonym: "log.message.format.version", doc: "The message format version the broker appends in."},
	{name: "message.timestamp.difference.max.ms", typ: configTypeLong, kafkaDefault: maxLong, validate: atLeast(0),
		brokerSynonym: "log.message.timestamp.difference.max.ms", doc: "The largest difference allowed between a record's CreateTime timestamp and the broker's clock."},
	{name: "message.timestamp.type", typ: configTypeString, kafkaDefault: "CreateTime", validate: oneOf("CreateTime", "LogAppendTime"),
		brokerSynonym: "log.message.timestamp.type", doc: "Whether record timestamps are the producer's (CreateTime) or the broker's (LogAppendTime)."},
	{name: "min.cleanable.dirty.ratio", typ: configTypeDouble, kafkaDefault: "0.5", validate: between(0, 1),
		brokerSynonym: "log.cleaner.min.cleanable.ratio", doc: "The share of uncompacted log above which the cleaner compacts it."},
	{name: "min.compaction.lag.ms", typ: configTypeLong, kafkaDefault: "0", validate: atLeast(0),
		brokerSynonym: "log.cleaner.min.compaction.lag.ms", doc: "The shortest time a record stays uncompacted."},
	{name: "min.insync.replicas", typ: configTypeInt, kafkaDefault: "1", validate: atLeast(1),
		brokerSynonym: "min.insync.replicas", doc: "The fewest in-sync replicas with which an acks=all produce succeeds."},
	{name: "preallocate", typ: configTypeBoolean, kafkaDefault: "false",
		brokerSynonym: "log.preallocate", doc: "Whether a new segment's file is preallocated."},
	{name: "retention.bytes", typ: configTypeLong, kafkaDefault: "-1",
		brokerSynonym: "log.retention.bytes", doc: "The size a partition's log may reach before its oldest segments are deleted; -1 for no limit.",
		apply: setInt64(func(c *storage.LogConfig) *int64 { return &c.RetentionBytes })},
	{name: "retention.ms", typ: configTypeLong, kafkaDefault: "604800000", validate: atLeast(-1),
		brokerSynonym: "log.retention.ms", doc: "How long a segment is kept after its newest record; -1 keeps data forever.",
		apply: setInt64(func(c *storage.LogConfig) *int64 { return &c.RetentionMs })},
	{name: "segment.bytes", typ: configTypeInt, kafkaDefault: "1073741824", validate: atLeast(14),
		brokerSynonym: "log.segment.bytes", doc: "The size at which the active segment is rolled.",
		apply: setInt64(func(c *storage.LogConfig) *int64 { return &c.SegmentBytes })},
	{name: "segment.index.bytes", typ: configTypeInt, kafkaDefault: "10485760", validate: atLeast(0),
		brokerSynonym: "log.index.size.max.bytes", doc: "The size of a segment's offset and time indexes.",
		apply: setInt32(func(c *storage.LogConfig) *int32 { return &c.MaxIndexSize })},
	{name: "segment.jitter.ms", typ: configTypeLong, kafkaDefault: "0", validate: atLeast(0),
		brokerSynonym: "log.roll.jitter.ms", doc: "The largest random jitter subtracted from segment.ms."},
	{name: "segment.ms", typ: configTypeLong, kafkaDefault: "604800000", validate: atLeast(1),
		brokerSynonym: "log.roll.ms", doc: "The age at which the active segment is rolled even if not full.",
		apply: setInt64(func(c *storage.LogConfig) *int64 { return &c.SegmentMs })},
	{name: "unclean.leader.election.enable", typ: configTypeBoolean, kafkaDefault: "false",
		brokerSynonym: "unclean.leader.election.enable", doc: "Whether a replica outside the ISR may become leader when no ISR member is alive, at the risk of losing data."},
}

var topicConfigByName = func() map[string]*topicConfigDef {
	m := make(map[string]*topicConfigDef, len(topicConfigDefs))
	for i := range topicConfigDefs {
		m[topicConfigDefs[i].name] = &topicConfigDefs[i]
	}
	return m
}()

// validateTopicConfig checks topic overrides as Kafka's LogConfig.validate
// does: every name known (INVALID_CONFIG otherwise), every value parsing and
// in range (a configValueError), and min.compaction.lag.ms not above
// max.compaction.lag.ms. It returns the values normalized.
func validateTopicConfig(cfg map[string]string) (map[string]string, error) {
	names := make([]string, 0, len(cfg))
	for k := range cfg {
		if _, ok := topicConfigByName[k]; !ok {
			return nil, topicErr(kerr.InvalidConfig, "Unknown topic config name: %s", k)
		}
		names = append(names, k)
	}
	sort.Strings(names)
	out := make(map[string]string, len(cfg))
	for _, k := range names {
		def := topicConfigByName[k]
		v, err := parseConfigValue(k, def.typ, cfg[k])
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
			v = topicConfigByName[k].kafkaDefault
		}
		n, _ := strconv.ParseInt(v, 10, 64)
		return n
	}
	if minLag, maxLag := lag("min.compaction.lag.ms"), lag("max.compaction.lag.ms"); minLag > maxLag {
		return nil, topicErr(kerr.InvalidConfig, "conflict topic config setting min.compaction.lag.ms (%d) > max.compaction.lag.ms (%d)", minLag, maxLag)
	}
	return out, nil
}

// applyTopicConfig applies topic overrides to c and validates the result; an
// unknown key or bad value is an error naming it. Configs the log does not
// use (min.insync.replicas, ...) are validated and otherwise left alone.
func applyTopicConfig(c *storage.LogConfig, cfg map[string]string) error {
	normalized, err := validateTopicConfig(cfg)
	if err != nil {
		return err
	}
	for k, v := range normalized {
		if def := topicConfigByName[k]; def.apply != nil {
			def.apply(c, v)
		}
	}
	if err := c.Validate(); err != nil {
		return &configValueError{msg: err.Error()}
	}
	return nil
}

// logConfigFromBroker builds the broker's default LogConfig from broker
// config values (the effective ones, dynamic layers included), through the
// topic configs' broker synonyms, as Kafka's copyKafkaConfigToLog does.
func logConfigFromBroker(brokerValue func(topicConfig string) string) storage.LogConfig {
	c := storage.DefaultLogConfig()
	for i := range topicConfigDefs {
		def := &topicConfigDefs[i]
		if def.apply == nil {
			continue
		}
		v, err := parseConfigValue(def.name, def.typ, brokerValue(def.name))
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

// formatConfig writes a config as sorted key=value pairs, for log lines.
func formatConfig(cfg map[string]string) string {
	keys := make([]string, 0, len(cfg))
	for k := range cfg {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%s=%s", k, cfg[k])
	}
	return b.String()
}
