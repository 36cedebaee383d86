// Package brokerconfig is a broker's configuration: what each key means, its
// Kafka 2.8 default and what values it accepts. It holds no state and does
// no I/O beyond reading a properties file.
//
// It owns three sets of definitions:
//
//   - KafkaConfig's properties: every config Kafka 2.8.2 defines, with its
//     type, default and documentation (kafka_config_defs.go), and zkafka's
//     own few (config.go). Config reads the ones this broker acts on, with
//     Kafka's server.properties names and defaults, its listeners and its
//     checks. A Reader reads the keys Config has no field for (the group
//     coordinator's, the log cleaner's) with the same defaults and errors.
//     DescribeConfigs describes them all, as Kafka 2.8 does.
//   - LogConfig's topic configs (topic_config.go): every topic config Kafka
//     accepts, its type, default, validator and broker synonym, and how it
//     sets a storage.LogConfig. ValidateTopicConfig is Kafka's
//     LogConfig.validate; the broker's config APIs and the --zookeeper tools
//     both use it, so they refuse the same values with the same messages.
//   - The dynamic config definitions (dynamic.go, value.go): which broker
//     configs /config/brokers may change at run time, their synonyms and
//     validators, and how values parse and print (Kafka's ConfigDef).
//
// Data flows one way. A properties file (ReadPropertiesFile), then KAFKA_*
// environment variables, then --override key=value (ParseOverrides) are
// merged into one map by cmd/zkafka; New applies the defaults, checks the
// result and returns a Config, which the broker runs with. The broker keeps
// the supplied map (Config.Properties) as the static layer of its dynamic
// config manager, which stacks /config/brokers/<default> and
// /config/brokers/<id> on top and computes topic log configs from the
// effective values with LogConfigFromBroker and ApplyTopicConfig.
//
// Errors: ErrConfig marks a bad static property. A bad dynamic or topic
// config value is a ValueError (Kafka's ConfigException, INVALID_REQUEST on
// the wire); an unknown or conflicting topic config is an InvalidConfigError
// (INVALID_CONFIG).
package brokerconfig
