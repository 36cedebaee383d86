// Package broker is a Kafka broker in ZooKeeper mode.
//
// A Server owns, for its lifetime: the ZooKeeper session and the broker's
// ephemeral registration /brokers/ids/<id> (its czxid is the broker epoch),
// the log manager, the replica manager (this broker's partitions and their
// leader/ISR/high-watermark state), the metadata cache, the listeners, and a
// controller component that acts only while this broker holds /controller.
//
// Startup follows Kafka's KafkaServer: ZooKeeper and the persistent top-level
// paths, /cluster/id, meta.properties and the broker id (generated through
// /brokers/seqid when broker.id is -1), log recovery, listeners bound, the
// registration, the controller election, then request processing.
//
// Requests flow in a straight line: listener → one goroutine per connection
// reading frames in order (wire) → the API table (apis.go) → one handler per
// API key in api_NN_name.go, each stating the versions it serves →
// replica manager → partition → storage log → response. Controller requests
// (LeaderAndIsr, UpdateMetadata) are checked against the broker epoch and the
// newest controller epoch seen before anything is applied; a LeaderAndIsr
// partition state is applied only when its leader epoch is newer.
//
// Consumer groups (group_coordinator.go, api_08..16, api_42, api_47) are
// served by the coordinator package, which the broker hands its
// __consumer_offsets partitions as a small Log (acks=all appends, reads) and
// tells, after each LeaderAndIsr, which of them it now leads or follows.
// FindCoordinator creates the topic on first use; log_cleaner.go compacts it
// (and every other compacted topic) every log.cleaner.backoff.ms.
//
// Dynamic configuration (config_manager*.go) is Kafka's DynamicConfigManager:
// the broker config is layered /config/brokers/<id> over
// /config/brokers/<default> over server.properties over Kafka's defaults, and
// a topic's log config is /config/topics/<t> over that. Writers (the config
// APIs, Kafka's tools) replace an entity's znode and add a sequential
// /config/changes notification; one goroutine per broker, woken by a child
// watch, re-reads the named entity and applies it to the running logs.
//
// Replication (replica_manager.go, partition.go, replica_fetcher.go, isr.go,
// delayed_produce.go): a LeaderAndIsr makes each partition leader or
// follower. A follower partition is fetched by one of num.replica.fetchers
// goroutines per leader, which first truncates by leader epoch
// (OffsetForLeaderEpoch, KIP-101/KIP-279; or, with replica.truncation.mode=hw,
// the pre-0.11 cut at the follower's own high watermark) and then sends Fetch
// with replica_id = this broker, appending what it gets and taking
// min(leader HW, own LEO) as its high watermark. The leader records each
// follower's fetch offset as its LEO, advances the high watermark to the
// smallest LEO in the ISR, adds caught-up followers to the ISR and, every
// replica.lag.time.max.ms/2, drops lagging ones, writing each ISR change to
// the partition-state znode conditionally on its zkVersion and announcing it
// through /isr_change_notification. acks=all produces wait for the high
// watermark; InitProducerId hands out producer ids from
// /latest_producer_id_block for the log's idempotent-producer checks.
//
// Locking: each Partition has one mutex for leader, ISR and high-watermark
// changes, and one more that serializes its ISR writes to ZooKeeper; appends
// to a log are serialized inside the log; the replica manager's map lock is
// held only to look a partition up. Nothing on the
// request path takes a broker-wide lock.
package broker
