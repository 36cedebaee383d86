// Package zkpaths owns zkafka's ZooKeeper layout: every znode path Kafka 2.8
// uses in ZooKeeper mode (plus the 0.8 legacy consumer's /consumers tree) and
// one typed codec per kind of znode data, byte-compatible with Kafka's own.
// It mirrors Kafka's kafka.zk.ZkData and implements the layout the design
// fixes in ZNODES.md. No other package builds a path string or reads or writes
// znode JSON, so a change of format happens here and nowhere else.
//
// # Paths
//
// Fixed paths are constants (Controller, BrokerIDs, ConfigChanges, ...);
// paths with a variable part have builders (BrokerPath, PartitionStatePath,
// ConsumerOwnerPath, ...). PersistentPaths lists what a broker creates at
// start. Sequential znodes are created under a prefix (ConfigChangePrefix,
// IsrChangePrefix, LogDirEventPrefix) and ordered by SequenceNumber.
// Builders do not validate; ValidateTopicName is the gate topic names pass
// before they become a path component.
//
// # Data
//
// Each kind of data is a Go type with an Encode method and a DecodeX
// function, and its doc comment shows the JSON exactly as zkCli's get prints
// it. Data flows one way through each:
//
//	Go value --Encode--> bytes --zkclient Create/Set--> ZooKeeper
//	ZooKeeper --zkclient Get--> bytes --DecodeX--> Go value
//
// Writers write the version Kafka 2.8 writes (broker registration v5, topic
// assignment v3, everything else v1, config change notifications v2), with
// keys in a fixed order so that equal values encode to equal bytes. Readers
// look fields up by name, ignore fields they do not know, and accept every
// older version Kafka still reads (broker registration v1–v4, topic assignment
// v1–v2, config change notification v1). Data that cannot be read — bad JSON,
// a missing or mistyped field, a version below 1, a partition key that is not
// a partition id — is an error wrapping ErrMalformed, never a panic.
//
// Kafka's quirks are kept on purpose: "timestamp", "block_start" and
// "block_end" are JSON strings; /cluster/id has "version":"1" as a string;
// partition ids are object keys; /controller_epoch and the legacy consumer
// offsets are bare decimals, not JSON.
//
// What a znode's data means, who writes it and who watches it is described
// on each type and in ZNODES.md; the ZooKeeper session itself belongs to
// internal/zkclient.
package zkpaths
