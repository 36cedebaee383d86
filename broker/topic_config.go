package broker

import (
	"fmt"
	"strconv"

	"github.com/zkafka/zkafka/storage"
)

// topicConfigKeys are the topic-level configs a topic may override, with the
// LogConfig field each sets. Configs Kafka knows that the log does not use
// (cleanup.policy, min.insync.replicas, ...) are accepted and stored.
var topicConfigKeys = map[string]func(c *storage.LogConfig, v int64){
	"segment.bytes":        func(c *storage.LogConfig, v int64) { c.SegmentBytes = v },
	"segment.ms":           func(c *storage.LogConfig, v int64) { c.SegmentMs = v },
	"retention.ms":         func(c *storage.LogConfig, v int64) { c.RetentionMs = v },
	"retention.bytes":      func(c *storage.LogConfig, v int64) { c.RetentionBytes = v },
	"index.interval.bytes": func(c *storage.LogConfig, v int64) { c.IndexIntervalBytes = int32(v) },
	"segment.index.bytes":  func(c *storage.LogConfig, v int64) { c.MaxIndexSize = int32(v) },
	"max.message.bytes":    func(c *storage.LogConfig, v int64) { c.MaxMessageBytes = int32(v) },
}

// otherTopicConfigs are valid topic configs that do not change the log here.
var otherTopicConfigs = map[string]bool{
	"cleanup.policy": true, "compression.type": true, "delete.retention.ms": true,
	"file.delete.delay.ms": true, "flush.messages": true, "flush.ms": true,
	"follower.replication.throttled.replicas": true, "leader.replication.throttled.replicas": true,
	"max.compaction.lag.ms": true, "message.downconversion.enable": true, "message.format.version": true,
	"message.timestamp.difference.max.ms": true, "message.timestamp.type": true,
	"min.cleanable.dirty.ratio": true, "min.compaction.lag.ms": true, "min.insync.replicas": true,
	"preallocate": true, "segment.jitter.ms": true, "unclean.leader.election.enable": true,
}

// applyTopicConfig applies topic overrides to c and validates the result; an
// unknown key or bad value is an error naming it (INVALID_CONFIG on the wire).
func applyTopicConfig(c *storage.LogConfig, cfg map[string]string) error {
	for k, v := range cfg {
		set, ok := topicConfigKeys[k]
		if !ok {
			if otherTopicConfigs[k] {
				continue
			}
			return fmt.Errorf("unknown topic config name: %s", k)
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return fmt.Errorf("invalid value %q for configuration %s: not a number", v, k)
		}
		set(c, n)
	}
	return c.Validate()
}
