// Package coordinator is Kafka's group coordinator (GroupCoordinator and
// GroupMetadataManager of Kafka 2.8): consumer group membership, the
// join/sync rebalance protocol, static membership, and committed offsets,
// all stored in __consumer_offsets.
//
// It never imports the broker. The broker hands it a Log (append a record
// batch to an __consumer_offsets partition it leads and wait for acks=all;
// read batches back) and calls OnBecomeLeader / OnResign as leadership of
// those partitions moves. A group belongs to partition
// abs(javaHashCode(groupId)) % offsets.topic.num.partitions (PartitionFor),
// and this broker coordinates it while it leads that partition.
//
// Data flow: a request handler calls JoinGroup, SyncGroup, Heartbeat,
// LeaveGroup, OffsetCommit, OffsetFetch, ... → the coordinator decides under
// its one mutex → group metadata and offsets are appended as records (Kafka's
// exact key and value schemas, records.go) → acks=all is awaited outside the
// lock → the in-memory cache is updated and parked requests are answered.
// On becoming leader the partition is read from its start to its end and
// the last value of each key wins (tombstones delete); requests for its
// groups get COORDINATOR_LOAD_IN_PROGRESS meanwhile.
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
