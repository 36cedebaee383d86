// Package kafka holds the value types every layer names Kafka's way, as Kafka's
// org.apache.kafka.common does: TopicPartition, the name of one partition,
// Principal, who a connection authenticated as, and Clock, the time source a
// broker and its coordinators read (Kafka's common.utils.Time), with
// SkewedClock for a broker whose wall clock jumps.
//
// It is a leaf: it imports only the standard library, so storage, zkpaths, the
// controller, the broker, the coordinator, the consumer and the tools all share
// one type without importing each other. Encodings belong to their owners
// (zkpaths writes a TopicPartition as znode JSON, storage as a checkpoint
// line); this package keeps only Kafka's "<topic>-<partition>" text form.
package kafka
