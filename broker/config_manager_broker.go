package broker

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// brokerConfigTypes are the types of the broker configs this broker knows:
// those it reads (config.go), those it accepts without acting on them, and
// the broker synonyms of every topic config.
var brokerConfigTypes = map[string]configType{
	"broker.id": configTypeInt, "broker.id.generation.enable": configTypeBoolean,
	"reserved.broker.max.id": configTypeInt, "broker.rack": configTypeString,
	"listeners": configTypeString, "advertised.listeners": configTypeString,
	"listener.security.protocol.map": configTypeString, "inter.broker.listener.name": configTypeString,
	"security.inter.broker.protocol": configTypeString, "log.dir": configTypeString, "log.dirs": configTypeString,
	"zookeeper.connect": configTypeString, "zookeeper.session.timeout.ms": configTypeInt,
	"zookeeper.connection.timeout.ms": configTypeInt, "num.partitions": configTypeInt,
	"default.replication.factor": configTypeInt, "min.insync.replicas": configTypeInt,
	"replica.lag.time.max.ms": configTypeLong, "unclean.leader.election.enable": configTypeBoolean,
	"auto.leader.rebalance.enable": configTypeBoolean, "auto.create.topics.enable": configTypeBoolean,
	"delete.topic.enable": configTypeBoolean, "offsets.topic.num.partitions": configTypeInt,
	"offsets.topic.replication.factor": configTypeShort, "group.initial.rebalance.delay.ms": configTypeInt,
	"log.segment.bytes": configTypeInt, "log.roll.ms": configTypeLong, "log.roll.hours": configTypeInt,
	"log.roll.jitter.ms": configTypeLong, "log.roll.jitter.hours": configTypeInt,
	"log.retention.ms": configTypeLong, "log.retention.minutes": configTypeInt, "log.retention.hours": configTypeInt,
	"log.retention.bytes": configTypeLong, "log.retention.check.interval.ms": configTypeLong,
	"log.index.interval.bytes": configTypeInt, "log.index.size.max.bytes": configTypeInt,
	"log.flush.offset.checkpoint.interval.ms": configTypeInt, "message.max.bytes": configTypeInt,
	"socket.request.max.bytes": configTypeInt, "request.timeout.ms": configTypeInt,
	"controller.socket.timeout.ms": configTypeInt, "num.network.threads": configTypeInt,
	"num.io.threads": configTypeInt, "socket.send.buffer.bytes": configTypeInt,
	"socket.receive.buffer.bytes": configTypeInt, "num.recovery.threads.per.data.dir": configTypeInt,
	"transaction.state.log.replication.factor": configTypeShort, "transaction.state.log.min.isr": configTypeInt,
	"log.flush.interval.messages": configTypeLong, "log.flush.interval.ms": configTypeLong,
	"log.flush.scheduler.interval.ms": configTypeLong, "group.min.session.timeout.ms": configTypeInt,
	"group.max.session.timeout.ms": configTypeInt, "controlled.shutdown.enable": configTypeBoolean,
	"controlled.shutdown.max.retries": configTypeInt, "controlled.shutdown.retry.backoff.ms": configTypeLong,
	"num.replica.fetchers": configTypeInt, "offsets.retention.minutes": configTypeInt,
	"leader.imbalance.check.interval.seconds": configTypeLong, "leader.imbalance.per.broker.percentage": configTypeInt,
	"inter.broker.protocol.version": configTypeString, "log.message.format.version": configTypeString,
	"replica.fetch.max.bytes": configTypeInt, "replica.fetch.wait.max.ms": configTypeInt,
	"replica.high.watermark.checkpoint.interval.ms": configTypeLong, "replica.fetch.min.bytes": configTypeInt,
	"replica.fetch.backoff.ms": configTypeInt, "connections.max.idle.ms": configTypeLong,
	"log.cleaner.delete.retention.ms": configTypeLong, "log.cleaner.min.compaction.lag.ms": configTypeLong,
	"log.cleaner.max.compaction.lag.ms": configTypeLong, "log.segment.delete.delay.ms": configTypeLong,
	"log.cleaner.min.cleanable.ratio": configTypeDouble, "log.cleanup.policy": configTypeList,
	"compression.type": configTypeString, "log.preallocate": configTypeBoolean,
	"log.message.timestamp.type": configTypeString, "log.message.timestamp.difference.max.ms": configTypeLong,
	"log.message.downconversion.enable": configTypeBoolean,
}

// brokerDefaults are Kafka 2.8's defaults of the broker configs above that
// config.go does not read (DEFAULT_CONFIG in DescribeConfigs).
var brokerDefaults = map[string]string{
	"log.roll.jitter.hours": "0", "log.flush.interval.messages": maxLong, "log.flush.scheduler.interval.ms": maxLong,
	"log.cleaner.delete.retention.ms": "86400000", "log.cleaner.min.compaction.lag.ms": "0",
	"log.cleaner.max.compaction.lag.ms": maxLong, "log.segment.delete.delay.ms": "60000",
	"log.cleaner.min.cleanable.ratio": "0.5", "log.cleanup.policy": "delete", "compression.type": "producer",
	"log.preallocate": "false", "log.message.format.version": "2.8-IV1", "log.message.timestamp.type": "CreateTime",
	"log.message.timestamp.difference.max.ms": maxLong, "log.message.downconversion.enable": "true",
	"num.network.threads": "3", "num.io.threads": "8", "num.replica.fetchers": "1", "num.recovery.threads.per.data.dir": "1",
}

// dynamicBrokerConfigs are the configs, among those this broker knows, that
// Kafka 2.8 lets /config/brokers/<id> and /config/brokers/<default> change
// without a restart: the broker defaults of topic configs (DynamicLogConfig,
// all but log.message.format.version) and the thread pool sizes. Listeners,
// which Kafka also reconfigures, are static here.
var dynamicBrokerConfigs = func() map[string]bool {
	m := map[string]bool{
		"num.network.threads": true, "num.io.threads": true, "num.replica.fetchers": true,
		"num.recovery.threads.per.data.dir": true,
	}
	for _, def := range topicConfigDefs {
		if def.brokerSynonym != "" && def.brokerSynonym != "log.message.format.version" {
			m[def.brokerSynonym] = true
		}
	}
	return m
}()

// brokerConfigDoc describes a broker config for DescribeConfigs v3: the broker
// synonyms of topic configs share the topic config's description.
func brokerConfigDoc(name string) *string {
	for _, def := range topicConfigDefs {
		if def.brokerSynonym != "" && slices.Contains(brokerConfigSynonyms(def.brokerSynonym), name) {
			return kmsg.StringPtr("The broker default of topic config " + def.name + ". " + def.doc)
		}
	}
	return nil
}

// brokerConfigSynonyms are the names a broker config may be given under, most
// specific first (Kafka's DynamicBrokerConfig.brokerConfigSynonyms).
func brokerConfigSynonyms(name string) []string {
	switch name {
	case "log.roll.ms", "log.roll.hours":
		return []string{"log.roll.ms", "log.roll.hours"}
	case "log.roll.jitter.ms", "log.roll.jitter.hours":
		return []string{"log.roll.jitter.ms", "log.roll.jitter.hours"}
	case "log.flush.interval.ms":
		return []string{"log.flush.interval.ms", "log.flush.scheduler.interval.ms"}
	case "log.retention.ms", "log.retention.minutes", "log.retention.hours":
		return []string{"log.retention.ms", "log.retention.minutes", "log.retention.hours"}
	}
	return []string{name}
}

// knownBrokerConfig reports whether the broker knows the name; Kafka stores
// names it does not know (custom configs for plugins) and reports them as
// sensitive, with their type unknown.
func knownBrokerConfig(name string) bool {
	if _, ok := brokerConfigTypes[name]; ok {
		return true
	}
	_, ok := defaultProperties[name]
	return ok || knownButUnused[name]
}

func brokerConfigType(name string) configType {
	if t, ok := brokerConfigTypes[name]; ok {
		return t
	}
	if knownBrokerConfig(name) {
		return configTypeString
	}
	return configTypeUnknown
}

// validateDynamicBrokerConfig checks configs for /config/brokers as Kafka's
// DynamicBrokerConfig.validate does: known configs that cannot change at run
// time are refused, the dynamic ones must parse and be in range. Unknown
// names pass, as in Kafka.
func validateDynamicBrokerConfig(cfg map[string]string) error {
	var static []string
	for k := range cfg {
		if knownBrokerConfig(k) && !dynamicBrokerConfigs[k] {
			static = append(static, k)
		}
	}
	if len(static) > 0 {
		sort.Strings(static)
		return &configValueError{msg: fmt.Sprintf("Cannot update these configs dynamically: Set(%s)", strings.Join(static, ", "))}
	}
	names := make([]string, 0, len(cfg))
	for k := range cfg {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if !dynamicBrokerConfigs[k] {
			continue
		}
		v, err := parseConfigValue(k, brokerConfigType(k), cfg[k])
		if err != nil {
			return err
		}
		if err := brokerConfigValidator(k)(k, v); err != nil {
			return err
		}
	}
	return nil
}

// brokerConfigValidator is the range check of a dynamic broker config: the
// one of the topic config it is the default of, with the broker's own lower
// bounds where they differ.
func brokerConfigValidator(name string) configValidator {
	switch name {
	case "log.segment.bytes":
		return atLeast(14)
	case "num.network.threads", "num.io.threads", "num.replica.fetchers", "num.recovery.threads.per.data.dir":
		return atLeast(1)
	case "log.retention.ms":
		return func(string, string) error { return nil } // negative means forever
	}
	for _, def := range topicConfigDefs {
		if def.brokerSynonym == name && def.validate != nil {
			return def.validate
		}
	}
	return func(string, string) error { return nil }
}

// hasValue is config.go's notion of a supplied value: not blank.
func hasValue(m map[string]string, k string) (string, bool) {
	v, ok := m[k]
	if !ok || strings.TrimSpace(v) == "" {
		return "", false
	}
	return v, true
}

// parseInteger reads an integer config value, 0 when it does not parse (values
// were validated where they were set).
func parseInteger(v string) int64 {
	n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	return n
}
