// Package controller is the controller component of a zkafka broker: Kafka's ZooKeeper-mode
// KafkaController. Every broker runs one; the broker that holds the ephemeral /controller znode
// is the active controller and alone decides which replica leads each partition and which
// replicas are in its ISR. It persists each decision in the partition's state znode and pushes
// it to brokers with LeaderAndIsr and UpdateMetadata requests.
//
// # What it owns
//
//   - The election: /controller and /controller_epoch (see below).
//   - While active, the controller context: live brokers and their epochs (the czxid of
//     /brokers/ids/<id>), every topic's replica assignment and topic id, every partition's
//     leadership (leader, leader epoch, ISR, zkVersion of its state znode) and partition state.
//   - The partition state znodes /brokers/topics/<t>/partitions/<p>/state, and topic ids in
//     /brokers/topics/<t> for topics created without one; the reassignment fields of
//     /brokers/topics/<t>; the removal of a deleted topic's znodes.
//   - The admin requests and notifications it acts on and removes: /admin/delete_topics/<t>,
//     /admin/reassign_partitions, /admin/preferred_replica_election,
//     /isr_change_notification/isr_change_*.
//   - One request queue and sender goroutine per live broker (the channel manager).
//
// It also exports AssignReplicas, AssignReplicasRandom and AssignNewPartitions, Kafka's replica
// placement, for the broker's CreateTopics and CreatePartitions handlers, and the API calls the
// broker's request handlers make of the active controller (api.go): ControlledShutdown,
// ElectLeaders, AlterPartitionReassignments, ListPartitionReassignments, and the notifications
// TopicConfigChanged and BrokerConfigChanged from the dynamic config manager. Each call is an
// event on the loop; a broker that is not the active controller answers kerr.NotController.
//
// # The event loop
//
// One goroutine owns all of the above (Kafka's ControllerEventManager). ZooKeeper watches,
// zkclient's session callbacks and broker responses only enqueue typed events (Startup,
// ControllerChange, Reelect, Expire, RegisterBrokerAndReelect, BrokerChange, TopicChange,
// PartitionModifications, LeaderAndIsrResponseReceived, UpdateMetadataResponseReceived); the loop
// processes them one at a time, logging each event's name and time in the queue. Watches are
// one-shot: a handler re-reads the znode, which arms the watch again, and never trusts a watch's
// payload. Every handler but the election's does nothing unless this broker is active.
//
// # Election and fencing
//
// Startup, Reelect (/controller deleted) and RegisterBrokerAndReelect (a new ZooKeeper session)
// run the election as Kafka 2.1+: read /controller_epoch (creating it as 0), then one ZooKeeper
// transaction creates the ephemeral /controller naming this broker and sets /controller_epoch to
// epoch+1 at the zkVersion just read. The winner's epoch and the new zkVersion of
// /controller_epoch come out of that one step; losers keep watching /controller.
//
// Every later write by the active controller goes through fencedMulti, which prepends a check
// that /controller_epoch still has that zkVersion. Only an election changes it, so ZooKeeper
// itself rejects a write by a controller that has been superseded. The failed check becomes
// ErrControllerMoved, and the loop resigns: it stops its request senders, drops the controller
// context and the watches it armed as controller, and re-reads /controller as a plain broker.
// A session expiry resigns the same way: the zkclient callback clears the queue and enqueues
// Expire, and fenced writes already refuse to run in a session other than the one that won.
//
// # Partition state machine
//
// States are kept in memory only; a new controller rebuilds them from ZooKeeper. A transition
// from a state not listed for the target is logged to the "state-change" logger and skipped.
//
//	                    +--------------------+
//	                    |NonExistentPartition|<-------------------------+
//	                    +--------------------+                          |
//	                              | topic or partition created          | (topic deletion)
//	                              v                                     |
//	                    +--------------------+                          |
//	                    |    NewPartition    |                          |
//	                    +--------------------+                          |
//	    first live replica leads, |        \ leader died before         |
//	    live replicas are the ISR |         \ it came online            |
//	                              v          v                          |
//	               +-----------------+  leader died  +------------------+
//	re-election -->| OnlinePartition |-------------->| OfflinePartition |--+
//	(Online and    +-----------------+<--------------+------------------+  | Offline -> Offline
//	 Offline too)                       offline election                <--+
//
// The transitions and their side effects:
//
//   - NonExistent -> New: record the state; the assignment is already in the context.
//   - New -> Online: leader = first live replica in assignment order, ISR = live replicas,
//     leader epoch 0; create the state znode (and its parents) fenced; LeaderAndIsr with isNew
//     to the ISR, UpdateMetadata to every live broker. With no live replica the partition stays
//     New.
//   - Offline/Online -> Online: offline election from the state znode just read: the first live
//     replica in assignment order that is in the ISR leads and the ISR shrinks to its live
//     members; with no live ISR member and unclean.leader.election.enable (the topic's override
//     in /config/topics/<t>, else the broker's), the first live replica leads alone. The leader
//     epoch grows by one; the write is conditional on the znode's zkVersion and fenced (a lost race with the
//     leader's own ISR update is retried from a fresh read); LeaderAndIsr to the live replicas,
//     UpdateMetadata to every live broker. If no replica qualifies the partition stays Offline.
//   - New/Online/Offline -> Offline: record the state (its leader's broker died).
//   - Offline -> NonExistent: record the state.
//
// Elections use one of Kafka's strategies: offline (above), reassign (the first live ISR member
// of the target replicas), preferred (the first assigned replica, if live and in the ISR) and
// controlled shutdown (the first live ISR member not shutting down; the ISR loses the
// shutting-down brokers).
//
// # Replica state machine
//
// One state per (partition, replica), also in memory only. At failover every replica on a live
// broker starts Online (LeaderAndIsr with its partition's state), every other one
// ReplicaDeletionIneligible and then Offline.
//
//	+------------------+
//	|NonExistentReplica|<----------------------------------------------------------+
//	+------------------+                                                           |
//	    | created or reassigned                                                    |
//	    v                                                                          |
//	+------------+  started   +-------------+                                      |
//	| NewReplica |----------->|OnlineReplica|<-------------------------+           |
//	+------------+            +-------------+                          |           |
//	    |             broker died |   ^ broker back                    |           |
//	    |             or stopping v   |                                |           |
//	    |                    +--------------+      retry               |           |
//	    +------------------->|OfflineReplica|<-------------------+     |           |
//	                         +--------------+                    |     |           |
//	            topic deleted or  |     | broker down            |     |           |
//	            replica dropped   v     +-------------+          |     |           |
//	              +----------------------+  failed    v          |     |           |
//	              |ReplicaDeletionStarted|------->+-------------------------+      |
//	              +----------------------+        |ReplicaDeletionIneligible|      |
//	                   | broker deleted it        +-------------------------+      |
//	                   v                                                           |
//	              +-------------------------+   removed from the assignment        |
//	              |ReplicaDeletionSuccessful|--------------------------------------+
//	              +-------------------------+
//
// Valid previous states: New from NonExistent; Online from New, Online, Offline, Ineligible;
// Offline from New, Online, Offline, Ineligible; DeletionStarted from Offline;
// DeletionSuccessful from DeletionStarted; DeletionIneligible from Offline and DeletionStarted;
// NonExistent from DeletionSuccessful. The side effects:
//
//   - -> New: LeaderAndIsr with isNew to the replica if its partition has a leader.
//   - -> Online: LeaderAndIsr with the partition's state (not from New).
//   - -> Offline: StopReplica without delete to its broker (if live); the replica leaves the
//     ISR in ZooKeeper (leader -1 if it led; the last ISR member stays; epoch + 1, fenced,
//     conditional) and the other replicas get LeaderAndIsr (not for a topic being deleted).
//   - -> DeletionStarted: StopReplica with delete (leader epoch -2 for a topic being deleted).
//   - -> NonExistent: the replica leaves the in-memory assignment.
//
// # Broker failure and controlled shutdown
//
// A dead broker's led partitions go Offline and are elected again from their ISR; its replicas
// go Offline; replicas of topics being deleted become ineligible. A re-registered broker (larger
// czxid) is a failure followed by a start-up. ControlledShutdown puts the broker in the
// shutting-down set (still sent requests, never elected), moves each partition it leads with
// more than one replica to another ISR member (controlled-shutdown strategy), takes its other
// replicas Offline, and answers the partitions it still leads.
//
// # Topic deletion
//
// /admin/delete_topics/<t> queues a topic (removed at once without delete.topic.enable). A
// queued topic is left out of elections and partition addition. Its partitions go Offline and
// NonExistent, every broker gets UpdateMetadata with leader -2 (it drops the topic), and each
// replica goes Offline then DeletionStarted; StopReplica answers move them to
// DeletionSuccessful (or Ineligible). A replica on a dead broker, or a reassignment in
// progress, makes the topic ineligible until the broker returns or the reassignment ends.
// When every replica is deleted the znodes go, last: /brokers/topics/<t> with its partitions,
// /config/topics/<t>, /admin/delete_topics/<t>.
//
// # Reassignment, preferred elections, rebalancing
//
// Reassignment is Kafka 2.4's (reassignment.go): the topic znode records RS = target ++
// original with adding and removing replicas; the new replicas start; a data watch on the
// partition's state znode (and ISR change notifications) tell when the target is in the ISR;
// then leadership moves into the target if needed, the removed replicas are stopped and
// deleted, and the znode keeps the target alone. A request in /admin/reassign_partitions is
// started when the znode is created (or at failover, if it exists), once: a completed partition
// leaves the znode (fenced) and the last one deletes it, and these rewrites, like a user's
// change of the znode's data, start nothing; the znode's czxid tells a new request from a
// rewritten one. AlterPartitionReassignments removes its partitions from the znode.
//
// /admin/preferred_replica_election and ElectLeaders run preferred (or unclean) elections; with
// auto.leader.rebalance.enable a check 5 s after failover, then every
// leader.imbalance.check.interval.seconds, runs preferred elections for brokers whose share of
// partitions led by someone else exceeds leader.imbalance.per.broker.percentage.
//
// # ZooKeeper pipelining and batching
//
// At failover the topics and every partition state are read from a bounded set of goroutines
// (pipeline.go); bulk reads of partition states are spread over the active controller's session
// and three read sessions it opens at its first bulk read and closes at resignation, each synced first
// (read_sessions.go), because ZooKeeper serves one session's requests one at a time. State
// writes go out on the controller's session alone, 50 to a fenced transaction. Decisions start from the cached leadership: the conditional write catches a
// stale cache (BADVERSION), after which the decision is made again from ZooKeeper.
//
// # Seams and tests
//
// The controller reaches ZooKeeper only through znodeStore, time only through a kafka.Clock, and
// brokers only through brokerChannels (store.go); New wires in a zkclient session, the system
// clock and the channel manager. The scenario tests in testdata/scenarios run the same loop, one event at a
// time, against in-memory ones: scripted events in, znode writes and requests out. The tests on
// real ZooKeeper remain the word on ZooKeeper's behaviour.
//
// # Requests
//
// State changes collect their requests in a batch, sent per broker in Kafka's order:
// LeaderAndIsr (v5) first, then UpdateMetadata (v7), then StopReplica (v3). Each live broker has a FIFO queue and a
// sender goroutine that connects to the broker's endpoint for the inter-broker listener, sends one
// request at a time and, on any error, closes the connection, waits 100 ms and retries the same
// request until the broker dies or the controller resigns.
package controller
