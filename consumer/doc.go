// Package consumer is zkafka's consumer: a member of a consumer group in
// each of the ways Kafka has had (the 0.8 ZooKeeper consumer, the classic
// group protocol, KIP-848's consumer group protocol), behind one API (New,
// Poll, Commit, CommitAsync, Close) and one fetch path.
//
// # Legacy mode (Config.ZooKeeperConnect): Kafka 0.8.2's high-level consumer
//
// The consumer registers the ephemeral /consumers/<g>/ids/<consumerId> with
// Kafka's registration JSON and watches the group's ids children,
// /brokers/ids children and each subscribed /brokers/topics/<t> (0.8.2
// watched /brokers/ids only while no broker was registered; we always do, so
// a broker change rebalances as the 0.9 documentation describes). A watch
// only sets a one-slot trigger, so a burst of notifications coalesces into one
// more rebalance. The run goroutine does each rebalance as
// ZookeeperConsumerConnector did, up to rebalance.max.retries attempts with
// rebalance.backoff.ms between them:
//
//	pause fetching → commit offsets (/consumers/<g>/offsets/<t>/<p>)
//	→ delete our owner znodes (partitions revoked)
//	→ read members, their registrations and the topics' partitions
//	→ range or roundrobin (0.8.2's algorithms, thread ids ordered as strings)
//	→ read the offsets of our share → create /consumers/<g>/owners/<t>/<p>
//	  (ephemeral, data = thread id); on NODEEXISTS delete what we created and
//	  fail the attempt → resume fetching
//
// Nothing coordinates the members: each computes from its own reading of
// ZooKeeper, every member receives every notification (the herd effect: a
// join costs every member a notification and a full rebalance), members with
// different views fail to claim and back off, and every rebalance stops
// everyone's fetching. After a session expiry the consumer drops its
// partitions (lost), re-registers under the same id and rebalances.
//
// # Coordinator mode (Config.BootstrapServers): the classic group protocol
//
// FindCoordinator, then JoinGroup/SyncGroup (KIP-394 member ids, KIP-345
// static membership with group.instance.id), heartbeats on their own timer
// in the run goroutine, OffsetCommit/OffsetFetch on a second connection to
// the coordinator. New joins; after that, as in Java's consumer since
// KIP-62, a member rejoins only from Poll: the heartbeat learns that the
// group rebalances, the application's next Poll revokes (eager) and hands
// the JoinGroup to the run goroutine, so a rebalance waits for each member
// to finish the batch in hand (at most max.poll.records, within
// max.poll.interval.ms) — which is what makes eager stop the world while
// cooperative members go on processing what they keep. LeaveGroup on close
// (not for static members, whose restart within the session timeout must
// not rebalance). A static member whose group.instance.id another consumer
// took (FENCED_INSTANCE_ID) stops, and its next Poll drops its partitions
// as lost and returns the error. The leader assigns with
// franz-go's kgo balancers (RangeBalancer, RoundRobinBalancer,
// StickyBalancer, CooperativeStickyBalancer), which encode the
// ConsumerProtocol subscription and assignment bytes Java clients use, so our
// members and kgo or Java members can share a group. Eager strategies revoke
// everything before joining; with cooperative-sticky first (KIP-429) the
// member keeps fetching what it owns, revokes only what moved after
// SyncGroup, and joins again so the moved partitions reach their new owners.
// The leader refreshes Metadata every metadata.max.age.ms and rejoins when a
// subscribed topic's partition count changed.
//
// # Consumer group protocol (Config.GroupProtocol "consumer"): KIP-848
//
// One request, ConsumerGroupHeartbeat, on the run goroutine at the interval
// the coordinator sets: the member names its subscription (topics, or a
// Whitelist sent as a regex the coordinator resolves) and the partitions it
// owns (by topic id, named through Metadata), and the coordinator, which
// computes the assignment itself (group.remote.assignor), answers with the
// member epoch and the partitions the member may own now. There is no
// leader, no JoinGroup or SyncGroup and no group-wide barrier:
//
//	heartbeat answer with an assignment → Poll (the application's
//	goroutine, where callbacks run): commit and revoke what is gone →
//	fetch the committed offsets of what is new and take it → heartbeat at
//	once with the owned partitions (the acknowledgement)
//
// An assignment naming a topic id Metadata does not know yet is reconciled
// for the topics it can name (revocations included), the rest once Metadata
// names them, as Java's consumer does.
//
// A partition moves only after its owner acknowledged giving it up, so
// members keep fetching everything they keep. Commits are OffsetCommit v9
// with the member epoch. FENCED_MEMBER_EPOCH or UNKNOWN_MEMBER_ID (the
// session expired) and max.poll.interval.ms without a Poll (the member
// leaves with epoch −1, a static one with −2) make the next Poll drop the
// partitions as lost; the member then joins again with epoch 0 under the
// id it chose, as Java's consumer does. Close leaves with −1 or −2. An
// error the group refuses the member with for good (authorization,
// UNRELEASED_INSTANCE_ID, the group's size) is returned by Poll.
//
// Config fields carry Kafka's property names in their comments;
// ConfigFromProperties reads both the 0.8 and the new consumer's names.
//
// # Fetching
//
// Poll drives fetching (and, in coordinator mode, rejoining): it sends one
// Fetch per partition leader (found by Metadata; in legacy mode the brokers
// come from /brokers/ids) for the owned partitions at their positions,
// decodes the record batches with wire's reader (uncompressed, gzip, snappy
// raw or xerial-framed, lz4, zstd; message sets of magic 0 and 1 are
// refused) and returns at most max.poll.records, fetching the rest again
// next time. A position moves only under the consumer's lock and only if
// the partition is still owned and fetching is not paused, so records of a
// partition revoked during a fetch are dropped, never delivered, and a
// commit never covers records not handed to the caller.
// With a coordinator (both protocols), Commit and Close's commit, which wait
// for their result, are sent again while they fail only because the
// coordinator moved, is loading or cannot be reached, until their ctx ends
// (default.api.timeout.ms, 60 s, without a deadline), as commitSync does;
// Close's commit takes at most three quarters of Close's time (30 s without
// a deadline), leaving the rest to LeaveGroup. CommitAsync, the auto-commit
// timer and the commit before a revocation are sent once, as commitAsync:
// retried, an older position could land after a newer one.
// NOT_LEADER_OR_FOLLOWER and UNKNOWN_TOPIC_OR_PARTITION forget the leader
// (the next Poll refreshes Metadata); OFFSET_OUT_OF_RANGE resets the position
// per auto.offset.reset with ListOffsets. Control batches (transaction
// markers) are never delivered; a partition handed out whole moves past its
// last batch. With isolation.level=read_committed the Fetch, ListOffsets and
// OffsetFetch say so: the broker answers up to the last stable offset with
// the aborted transactions in that range, whose producers' batches are
// skipped from each transaction's first offset to its ABORT marker (Kafka's
// consumer's rule), and a group's offsets still being committed by a
// transaction (UNSTABLE_OFFSET_COMMIT) are asked for again until decided.
//
// # Events and counters
//
// Every consumer emits typed, timestamped events (registered, joined,
// rebalance started/failed/done, partitions revoked/assigned/lost, fetching
// paused/resumed, offsets committed, records delivered) to Config.OnEvent
// and to Subscribe's channels (which drop when full). With no listener, an
// event costs one atomic load. Stats counts ZooKeeper watch notifications,
// ZooKeeper and Kafka requests, rebalance attempts and records delivered.
package consumer
