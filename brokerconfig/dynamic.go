package brokerconfig

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
)

// brokerConfigTypes are the types of the broker configs the broker knows:
// those it reads (config.go), those it accepts without acting on them, and
// the broker synonyms of every topic config.
var brokerConfigTypes = map[string]Type{
	"broker.id": TypeInt, "broker.id.generation.enable": TypeBoolean,
	"reserved.broker.max.id": TypeInt, "broker.rack": TypeString,
	"listeners": TypeString, "advertised.listeners": TypeString,
	"listener.security.protocol.map": TypeString, "inter.broker.listener.name": TypeString,
	"security.inter.broker.protocol": TypeString, "log.dir": TypeString, "log.dirs": TypeString,
	"zookeeper.connect": TypeString, "zookeeper.session.timeout.ms": TypeInt,
	"zookeeper.connection.timeout.ms": TypeInt, "num.partitions": TypeInt,
	"default.replication.factor": TypeInt, "min.insync.replicas": TypeInt,
	"replica.lag.time.max.ms": TypeLong, "unclean.leader.election.enable": TypeBoolean,
	"auto.leader.rebalance.enable": TypeBoolean, "auto.create.topics.enable": TypeBoolean,
	"delete.topic.enable": TypeBoolean, "offsets.topic.num.partitions": TypeInt,
	"offsets.topic.replication.factor": TypeShort, "group.initial.rebalance.delay.ms": TypeInt,
	"log.segment.bytes": TypeInt, "log.roll.ms": TypeLong, "log.roll.hours": TypeInt,
	"log.roll.jitter.ms": TypeLong, "log.roll.jitter.hours": TypeInt,
	"log.retention.ms": TypeLong, "log.retention.minutes": TypeInt, "log.retention.hours": TypeInt,
	"log.retention.bytes": TypeLong, "log.retention.check.interval.ms": TypeLong,
	"log.index.interval.bytes": TypeInt, "log.index.size.max.bytes": TypeInt,
	"log.flush.offset.checkpoint.interval.ms": TypeInt, "message.max.bytes": TypeInt,
	"socket.request.max.bytes": TypeInt, "request.timeout.ms": TypeInt,
	"controller.socket.timeout.ms": TypeInt, "num.network.threads": TypeInt,
	"num.io.threads": TypeInt, "socket.send.buffer.bytes": TypeInt,
	"socket.receive.buffer.bytes": TypeInt, "num.recovery.threads.per.data.dir": TypeInt,
	"transaction.state.log.replication.factor": TypeShort, "transaction.state.log.min.isr": TypeInt,
	"transaction.state.log.num.partitions": TypeInt, "transaction.state.log.segment.bytes": TypeInt,
	"transaction.state.log.load.buffer.size": TypeInt, "transaction.max.timeout.ms": TypeInt,
	"transactional.id.expiration.ms": TypeInt, "transaction.abort.timed.out.transaction.cleanup.interval.ms": TypeInt,
	"transaction.remove.expired.transaction.cleanup.interval.ms": TypeInt,
	"log.flush.interval.messages":                                TypeLong, "log.flush.interval.ms": TypeLong,
	"log.flush.scheduler.interval.ms": TypeLong, "group.min.session.timeout.ms": TypeInt,
	"group.max.session.timeout.ms": TypeInt, "controlled.shutdown.enable": TypeBoolean,
	"controlled.shutdown.max.retries": TypeInt, "controlled.shutdown.retry.backoff.ms": TypeLong,
	"num.replica.fetchers": TypeInt, "offsets.retention.minutes": TypeInt,
	"leader.imbalance.check.interval.seconds": TypeLong, "leader.imbalance.per.broker.percentage": TypeInt,
	"inter.broker.protocol.version": TypeString, "log.message.format.version": TypeString,
	"replica.fetch.max.bytes": TypeInt, "replica.fetch.wait.max.ms": TypeInt,
	"replica.high.watermark.checkpoint.interval.ms": TypeLong, "replica.fetch.min.bytes": TypeInt,
	"replica.fetch.backoff.ms": TypeInt, "connections.max.idle.ms": TypeLong,
	"max.connections": TypeInt, "max.connections.per.ip": TypeInt,
	"max.connections.per.ip.overrides": TypeString, "queued.max.request.bytes": TypeLong,
	"log.cleaner.delete.retention.ms": TypeLong, "log.cleaner.min.compaction.lag.ms": TypeLong,
	"log.cleaner.max.compaction.lag.ms": TypeLong, "log.segment.delete.delay.ms": TypeLong,
	"log.cleaner.min.cleanable.ratio": TypeDouble, "log.cleanup.policy": TypeList,
	"compression.type": TypeString, "log.preallocate": TypeBoolean,
	"log.message.timestamp.type": TypeString, "log.message.timestamp.difference.max.ms": TypeLong,
	"log.message.downconversion.enable": TypeBoolean,
	"zkafka.clock.skew.ms":              TypeLong,
	"quota.window.num":                  TypeInt, "quota.window.size.seconds": TypeInt,
	"replication.quota.window.num": TypeInt, "replication.quota.window.size.seconds": TypeInt,
	"controller.quota.window.num": TypeInt, "controller.quota.window.size.seconds": TypeInt,
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
// which Kafka also reconfigures, are static here. zkafka.clock.skew.ms is
// zkafka's own.
var dynamicBrokerConfigs = func() map[string]bool {
	m := map[string]bool{
		"num.network.threads": true, "num.io.threads": true, "num.replica.fetchers": true,
		"num.recovery.threads.per.data.dir": true,
		// zkafka's clock fault: a broker's wall clock jumps while it runs.
		"zkafka.clock.skew.ms": true,
	}
	for _, def := range topicConfigs {
		if def.BrokerSynonym != "" && def.BrokerSynonym != "log.message.format.version" {
			m[def.BrokerSynonym] = true
		}
	}
	return m
}()

// replicationThrottleRates are Kafka 2.8's DynamicConfig.Broker configs:
// longs of at least 0 that exist only in /config/brokers. KafkaConfig does
// not define them, so DescribeConfigs reports them as it does names it does
// not know (sensitive, type UNKNOWN), as 2.8 does.
var replicationThrottleRates = map[string]bool{
	"leader.replication.throttled.rate": true, "follower.replication.throttled.rate": true,
	"replica.alter.log.dirs.io.max.bytes.per.second": true,
}

// IsDynamicBrokerConfig reports whether /config/brokers may change the named
// config without a restart.
func IsDynamicBrokerConfig(name string) bool { return dynamicBrokerConfigs[name] }

// BrokerConfigNames lists the broker configs with a type or a Kafka default,
// unsorted: those a broker describes besides the ones it was given.
func BrokerConfigNames() []string {
	set := make(map[string]bool, len(brokerConfigTypes)+len(defaultProperties))
	for k := range brokerConfigTypes {
		set[k] = true
	}
	for k := range defaultProperties {
		set[k] = true
	}
	return slices.Collect(maps.Keys(set))
}

// BrokerDefault is Kafka's default of a broker config, if it has one.
func BrokerDefault(name string) (string, bool) {
	if v, ok := brokerDefaults[name]; ok {
		return v, true
	}
	return Supplied(defaultProperties, name)
}

// Supplied returns the value of key k in props if it is supplied: present and
// not blank, the way New reads properties.
func Supplied(props map[string]string, k string) (string, bool) {
	v, ok := props[k]
	if !ok || strings.TrimSpace(v) == "" {
		return "", false
	}
	return v, true
}

// BrokerConfigDoc describes a broker config for DescribeConfigs v3, nil when
// there is no description: the broker synonyms of topic configs share the
// topic config's description.
func BrokerConfigDoc(name string) *string {
	for _, def := range topicConfigs {
		if def.BrokerSynonym != "" && slices.Contains(BrokerConfigSynonyms(def.BrokerSynonym), name) {
			doc := "The broker default of topic config " + def.Name + ". " + def.Doc
			return &doc
		}
	}
	return nil
}

// BrokerConfigSynonyms are the names a broker config may be given under, most
// specific first (Kafka's DynamicBrokerConfig.brokerConfigSynonyms).
func BrokerConfigSynonyms(name string) []string {
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

// BrokerConfigType is the type of a broker config: STRING for the known
// configs without a declared type, UNKNOWN for names the broker does not know.
func BrokerConfigType(name string) Type {
	if t, ok := brokerConfigTypes[name]; ok {
		return t
	}
	if knownBrokerConfig(name) {
		return TypeString
	}
	return TypeUnknown
}

// ValidateDynamicBrokerConfig checks configs for /config/brokers as Kafka's
// DynamicBrokerConfig.validate does: known configs that cannot change at run
// time are refused, the dynamic ones (the replication throttle rates
// among them) must parse and be in range. Unknown names pass, as in Kafka.
func ValidateDynamicBrokerConfig(cfg map[string]string) error {
	var static []string
	for k := range cfg {
		if knownBrokerConfig(k) && !dynamicBrokerConfigs[k] {
			static = append(static, k)
		}
	}
	if len(static) > 0 {
		sort.Strings(static)
		return &ValueError{msg: fmt.Sprintf("Cannot update these configs dynamically: Set(%s)", strings.Join(static, ", "))}
	}
	names := make([]string, 0, len(cfg))
	for k := range cfg {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if replicationThrottleRates[k] {
			v, err := ParseValue(k, TypeLong, cfg[k])
			if err == nil {
				err = atLeast(0)(k, v)
			}
			if err != nil {
				return err
			}
		}
		if !dynamicBrokerConfigs[k] {
			continue
		}
		v, err := ParseValue(k, BrokerConfigType(k), cfg[k])
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
func brokerConfigValidator(name string) validator {
	switch name {
	case "log.segment.bytes":
		return atLeast(14)
	case "num.network.threads", "num.io.threads", "num.replica.fetchers", "num.recovery.threads.per.data.dir":
		return atLeast(1)
	case "log.retention.ms":
		return func(string, string) error { return nil } // negative means forever
	}
	for _, def := range topicConfigs {
		if def.BrokerSynonym == name && def.validate != nil {
			return def.validate
		}
	}
	return func(string, string) error { return nil }
}
