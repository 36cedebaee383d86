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
// reading frames in order (wire; a Produce frame into the connection's
// previous one) → the API table (apis.go) → one handler per
// API key in api_NN_name.go, each stating the versions it serves →
// replica manager → partition → storage log → response. A handler that
// panics costs only its connection: the panic is logged with its stack, the
// client gets UNKNOWN_SERVER_ERROR where the response has a place for it, and
// the connection is closed (listener.go). Controller requests
// (LeaderAndIsr, StopReplica, UpdateMetadata) are checked against the broker
// epoch and the newest controller epoch seen before anything is applied (a
// higher epoch only once /controller_epoch confirms it); a LeaderAndIsr
// partition state is applied only when its leader epoch is newer. A request
// for a partition with no replica here gets NOT_LEADER_OR_FOLLOWER when the
// metadata cache knows the partition, which clients retry after refreshing
// metadata, and UNKNOWN_TOPIC_OR_PARTITION only when it does not (Kafka's
// getPartitionOrError).
//
// Consumer groups (group_coordinator.go, api_08..16, api_42, api_47) are
// served by the coordinator package, which the broker hands its
// __consumer_offsets partitions as a small Log (acks=all appends, reads) and
// tells, after each LeaderAndIsr, which of them it now leads or follows.
// FindCoordinator creates the topic on first use; log_cleaner.go compacts it
// (and every other compacted topic) every log.cleaner.backoff.ms.
//
// Transactions (transaction_coordinator.go, api_22 and api_24..28) are
// served by the transaction package the same way over __transaction_state
// (FindCoordinator key type 1 creates it): the broker hands it the same
// kind of Log, the producer id blocks of /latest_producer_id_block, and a
// marker sender that finds partition leaders in the metadata cache and
// sends them WriteTxnMarkers over one inter-broker connection each. A
// leader answers WriteTxnMarkers by appending a control batch per partition
// as the coordinator's write (the storage checks the producer and
// coordinator epochs) and, once replicated, completes the group
// coordinator's pending TxnOffsetCommits of the __consumer_offsets
// partitions among them. Fetch with isolation level 1 reads below the last
// stable offset and lists the aborted transactions; ListOffsets answers
// the last stable offset as the latest offset for it.
//
// Fetch responses on plain TCP connections are zero-copy (fetch_files.go):
// the handler leaves each partition's records in its segment file
// (storage.FileRecords), and the listener writes the frame around them
// (wire.AppendFetchResponseFrame) and the records by sendfile(2). Over TLS,
// and for the down-converted Fetch v0–v3, the records are read into memory.
//
// Dynamic configuration (config_manager*.go) is Kafka's DynamicConfigManager:
// the broker config is layered /config/brokers/<id> over
// /config/brokers/<default> over server.properties over Kafka's defaults, and
// a topic's log config is /config/topics/<t> over that. Writers (the config
// APIs, Kafka's tools) replace an entity's znode and add a sequential
// /config/changes notification; one goroutine per broker, woken by a child
// watch, re-reads the named entity and applies it to the running logs. What
// each config means, its default and its validation are brokerconfig's; the
// manager only layers and applies them.
//
// Replication (replica_manager.go, partition.go, replica_fetcher.go, isr.go,
// delayed_produce.go): a LeaderAndIsr makes each partition leader or
// follower, several partitions at once (their leader-epoch checkpoints'
// fsyncs overlap), each topic's config read once per request. Followers
// fetch in fetch sessions (KIP-227, fetch_session.go). A follower partition is fetched by one of num.replica.fetchers
// goroutines per leader, which first truncates by leader epoch
// (OffsetForLeaderEpoch, KIP-101/KIP-279; or, with replica.truncation.mode=hw,
// the pre-0.11 cut at the follower's own high watermark) and then sends Fetch
// with replica_id = this broker, appending what it gets and taking
// min(leader HW, own LEO) as its high watermark. The leader records each
// follower's fetch offset as its LEO, advances the high watermark to the
// smallest LEO in the ISR, adds caught-up followers to the ISR and, every
// replica.lag.time.max.ms/2, drops lagging ones. With an
// inter.broker.protocol.version below 2.7-IV2 it writes each ISR change to
// the partition-state znode conditionally on its zkVersion and announces it
// through /isr_change_notification; from 2.7-IV2 it queues the change for
// the controller, which alterIsrManager sends with every other queued one
// in one AlterIsr (one in flight), and adopts it when answered. acks=all
// produces wait for the high watermark. These
// rules reach storage only through PartitionLog, ZooKeeper only through
// partitionStateWriter and time through a clock, so partition_test.go runs
// them against fakes in milliseconds; the *_test.go files that start a
// cluster check the same behaviour end to end.
//
// Locking: each Partition has one mutex for leader, ISR and high-watermark
// changes, and one more that serializes its ISR writes to ZooKeeper; appends
// to a log are serialized inside the log; the replica manager's map lock is
// held only to look a partition up. Nothing on the
// request path takes a broker-wide lock.
package broker
