// Package coordinator is Kafka's group coordinator (GroupCoordinator and
// GroupMetadataManager of Kafka 2.8): consumer group membership, the
// join/sync rebalance protocol, static membership, and committed offsets,
// all stored in __consumer_offsets. Beside it runs KIP-848's consumer
// rebalance protocol, Kafka 4.0's (consumer_group.go, consumer_heartbeat.go):
// a group on it is a group whose modern field is set, where each member's
// ConsumerGroupHeartbeat carries its subscription and owned partitions and
// the coordinator computes the assignment itself (consumer_assignor.go) and
// moves each member toward it one heartbeat at a time (consumer_reconcile.go),
// storing the group in Kafka 4.0's records (consumer_records.go).
//
// It never imports the broker. The broker hands it a Log (append a record
// batch to an __consumer_offsets partition it leads and wait for acks=all;
// read batches back) and calls OnBecomeLeader / OnResign as leadership of
// those partitions moves. A group belongs to partition
// abs(javaHashCode(groupId)) % offsets.topic.num.partitions (PartitionFor),
// and this broker coordinates it while it leads that partition. The
// transaction coordinator (package transaction) runs over the same Log,
// Clock and partition hash, and writes and reads its topic with EncodeBatch
// and ReadLog.
//
// Data flow: a request handler calls JoinGroup, SyncGroup, Heartbeat,
// LeaveGroup, OffsetCommit, OffsetFetch, ... → the coordinator checks that
// it coordinates the group and locks that group → decides → group metadata
// and offsets are appended as records (Kafka's exact key and value
// schemas, records.go) → acks=all is awaited outside every lock → under the
// group's lock again the in-memory cache is updated and parked requests are
// answered. On becoming leader the partition is read from its start to its
// end and the last value of each key wins (tombstones delete); requests for
// its groups get COORDINATOR_LOAD_IN_PROGRESS meanwhile.
//
// Locks, in the order they are taken (Kafka's GroupCoordinator locks each
// GroupMetadata the same way):
//
//  1. group.mu, one per group: guards everything about the group — state,
//     generation, members, their parked JoinGroup and SyncGroup callbacks,
//     their session, join and pending-member timers, and committed offsets.
//     Every request decides under it; the group's timers and the completion
//     of each of its appends run under it. A group's lock is never taken
//     while another group's is held.
//  2. Coordinator.mu: guards the table — whether the coordinator is active,
//     the __consumer_offsets partitions owned (loading or loaded), the groups
//     of each, and the offset-expiry timer. It is always taken last: held
//     only for lookups and updates of the table, never while waiting for a
//     group's lock, never across a call to the Log.
//
// Below both are only the Log's own locks (an append takes the broker's
// partition lock) and the clock's timers.
//
// A group's records are appended with its lock held, so they reach the log
// in the order the group decided them: an OffsetDelete's tombstone cannot
// land before the commit it deletes, and the record offsets that settle
// which of two acknowledged commits of a partition is newer follow the
// decisions. Only the append is under the lock — waiting for acks=all is
// not — and appends of different groups, in the same partition or not, run
// in parallel. Offset expiry appends its tombstones under the group's lock
// for the same reason (Kafka writes them after releasing it).
//
// A request finds its group under Coordinator.mu, releases it, then locks
// the group; a group removed from the table meanwhile is Dead by then, and
// the request looks it up again (and finds NOT_COORDINATOR, or a new
// group). A group new to the table is locked before it is published, so its
// creator holds it without waiting under Coordinator.mu. Unloading a
// partition (OnResign, a Log that lost leadership, Shutdown) first takes
// the partition and its groups out of the table, then marks each group
// Dead under its lock, answering its parked requests NOT_COORDINATOR; when
// OnResign returns no request is still deciding on one of those groups. A
// completion arriving later finds the group Dead and changes nothing.
// Loading builds the groups, and starts their members' sessions, before
// publishing them in one step; a partition unloaded meanwhile gets its
// groups discarded instead.
//
// The group state machine:
//
//	  Empty ---(1)---> PreparingRebalance ---(2)---> CompletingRebalance ---(4)---> Stable
//	    ^                 |     ^      ^                      |                       |
//	    +-------(3)-------+     |      +----------(5)---------+                       |
//	                            +----------------------------(6)----------------------+
//
//	  any state ---(7)---> Dead
//
//	(1) first JoinGroup: the join phase waits group.initial.rebalance.delay.ms
//	(2) join phase over: generation+1, protocol voted, leader chosen, JoinGroups answered
//	(3) join phase over with no members: generation+1, the empty group stored
//	(4) leader's SyncGroup stored with acks=all: every SyncGroup answered with its part
//	(5) join, leave, session expiry or changed metadata: parked SyncGroups get REBALANCE_IN_PROGRESS
//	(6) join, leave, session expiry, leader or changed-metadata rejoin: heartbeats answer
//	    REBALANCE_IN_PROGRESS so members rejoin
//	(7) DeleteGroups of an Empty group, offsets expired from an Empty group, or the
//	    partition unloaded (parked requests get NOT_COORDINATOR)
//
// The transitions in words (validPreviousStates holds the table):
//   - Empty → PreparingRebalance: the first JoinGroup. The join phase waits
//     group.initial.rebalance.delay.ms, and again while new members keep
//     arriving, up to the rebalance timeout (Kafka's InitialDelayedJoin).
//   - Stable or CompletingRebalance → PreparingRebalance: a new member, a
//     member leaving or missing its session timeout, the leader (or a
//     member with new metadata) rejoining, a static member replaced while
//     assignments are in flight. Members parked in SyncGroup get
//     REBALANCE_IN_PROGRESS; heartbeats answer REBALANCE_IN_PROGRESS so the
//     others rejoin. The join phase ends when every member rejoined or the
//     rebalance timeout (the members' longest) passed; dynamic members that
//     did not rejoin are removed, static ones stay.
//   - PreparingRebalance → CompletingRebalance: the generation increments,
//     the protocol every member supports with the most first-choice votes is
//     chosen, the leader (kept if it rejoined) gets every member's metadata.
//   - PreparingRebalance → Empty: nobody is left; the generation increments
//     and the empty group is stored.
//   - CompletingRebalance → Stable: the leader's SyncGroup; the assignment is
//     stored with acks=all, then every member's SyncGroup is answered with
//     its part. A store failure sends the error and rebalances.
//   - Static members (KIP-345): a JoinGroup with a known group.instance.id
//     and no member id replaces the old member id, which is fenced
//     (FENCED_INSTANCE_ID) from then on. In Stable, when the protocol would
//     not change, the member gets its old assignment with no rebalance.
//   - KIP-394 (JoinGroup v4+): a dynamic member without an id is answered
//     MEMBER_ID_REQUIRED with an id and joins with it; the pending id counts
//     as a member not yet joined until it rejoins or its session passes.
package coordinator
