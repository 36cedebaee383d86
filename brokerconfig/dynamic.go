package brokerconfig

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
)

// dynamicBrokerConfigs are the configs, among those this broker knows, that
// /config/brokers/<id> and /config/brokers/<default> may change without a
// restart: Kafka 2.8's DynamicBrokerConfig.AllDynamicConfigs less the ones
// this broker reads only at start (listeners, connection limits,
// log.cleaner.backoff.ms) and the keystore and truststore configs, which
// Kafka takes only with a listener prefix. The broker defaults of topic
// configs (DynamicLogConfig, all but log.message.format.version) take effect;
// the others are kept and described, as Kafka would, without effect here.
// zkafka.clock.skew.ms is zkafka's own.
var dynamicBrokerConfigs = func() map[string]bool {
	m := map[string]bool{
		// DynamicThreadPool.
		"num.network.threads": true, "num.io.threads": true, "num.replica.fetchers": true,
		"num.recovery.threads.per.data.dir": true, "background.threads": true,
		// LogCleaner.ReconfigurableConfigs.
		"log.cleaner.threads": true, "log.cleaner.dedupe.buffer.size": true,
		"log.cleaner.io.buffer.load.factor": true, "log.cleaner.io.buffer.size": true,
		"log.cleaner.io.max.bytes.per.second": true,
		"metric.reporters":                    true,
		"max.connection.creation.rate":        true,
		// DynamicListenerConfig's security configs.
		"principal.builder.class": true, "ssl.protocol": true, "ssl.provider": true, "ssl.cipher.suites": true,
		"ssl.enabled.protocols": true, "ssl.keymanager.algorithm": true, "ssl.trustmanager.algorithm": true,
		"ssl.endpoint.identification.algorithm": true, "ssl.secure.random.implementation": true,
		"ssl.client.auth": true, "ssl.engine.factory.class": true,
		"sasl.mechanism.inter.broker.protocol": true, "sasl.jaas.config": true, "sasl.enabled.mechanisms": true,
		"sasl.kerberos.service.name": true, "sasl.kerberos.kinit.cmd": true,
		"sasl.kerberos.ticket.renew.window.factor": true, "sasl.kerberos.ticket.renew.jitter": true,
		"sasl.kerberos.min.time.before.relogin": true, "sasl.kerberos.principal.to.local.rules": true,
		"sasl.login.refresh.window.factor": true, "sasl.login.refresh.window.jitter": true,
		"sasl.login.refresh.min.period.seconds": true, "sasl.login.refresh.buffer.seconds": true,
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
// not define them, but KafkaConfig.configType finds them in
// DynamicConfig.Broker, so DescribeConfigs reports them as LONG, not
// sensitive, read-only and without documentation.
var replicationThrottleRates = map[string]bool{
	"leader.replication.throttled.rate": true, "follower.replication.throttled.rate": true,
	"replica.alter.log.dirs.io.max.bytes.per.second": true,
}

// IsDynamicBrokerConfig reports whether /config/brokers may change the named
// config without a restart.
func IsDynamicBrokerConfig(name string) bool { return dynamicBrokerConfigs[name] }

// BrokerConfigNames lists the broker configs Kafka 2.8 defines and
// zkafka's own, unsorted: those a broker describes besides the ones it was
// given.
func BrokerConfigNames() []string {
	return slices.Collect(maps.Keys(brokerConfigDefs))
}

// BrokerDefault is the default of a broker config as DescribeConfigs shows
// it; false for a config without one (Kafka's null, or an unknown name).
func BrokerDefault(name string) (string, bool) {
	def, ok := brokerConfigDefs[name]
	if !ok || def.Null {
		return "", false
	}
	return def.Default, true
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

// BrokerConfigDoc describes a broker config for DescribeConfigs v3, with
// KafkaConfig's documentation; nil for names it does not define.
func BrokerConfigDoc(name string) *string {
	if def, ok := brokerConfigDefs[name]; ok {
		return &def.Doc
	}
	return nil
}

// listenerMechanismConfigs are the configs a listener override names with a
// SASL mechanism too: listener.name.<listener>.<mechanism>.<config>.
var listenerMechanismConfigs = []string{
	"sasl.jaas.config", "sasl.login.callback.handler.class", "sasl.login.class",
	"sasl.server.callback.handler.class", "connections.max.reauth.ms",
}

// BrokerConfigSynonyms are the names a broker config may be given under, most
// specific first (Kafka's DynamicBrokerConfig.brokerConfigSynonyms, listener
// overrides included): a listener.name.<listener>.<config> override has its
// base config as synonym.
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
	if rest, ok := strings.CutPrefix(name, "listener.name."); ok {
		if _, base, ok := strings.Cut(rest, "."); ok {
			for _, c := range listenerMechanismConfigs {
				if strings.HasSuffix(base, c) {
					base = c
					break
				}
			}
			return []string{name, base}
		}
	}
	return []string{name}
}

// knownBrokerConfig reports whether the broker knows the name; Kafka stores
// names it does not know (custom configs for plugins) and reports them as
// sensitive, with their type unknown.
func knownBrokerConfig(name string) bool {
	_, ok := brokerConfigDefs[name]
	return ok
}

// BrokerConfigType is the type of a broker config as Kafka's
// KafkaConfig.configType finds it: its own, the replication throttles'
// LONG, a listener override's base config's, else UNKNOWN.
func BrokerConfigType(name string) Type {
	if replicationThrottleRates[name] {
		return TypeLong
	}
	// The name itself first: log.retention.hours is an INT, though its
	// first synonym is the LONG log.retention.ms.
	for _, n := range append([]string{name}, BrokerConfigSynonyms(name)...) {
		if def, ok := brokerConfigDefs[n]; ok {
			return def.Type
		}
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
