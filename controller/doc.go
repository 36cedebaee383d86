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
//     /brokers/topics/<t> for topics created without one.
//   - One request queue and sender goroutine per live broker (the channel manager).
//
// It also exports AssignReplicas and AssignReplicasRandom, Kafka's replica placement, for the
// broker's CreateTopics handler.
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
// A replica on a dead broker also leaves the ISR of each of its partitions (leader -1 if it
// led and no one replaced it; the last ISR member stays), with leader epoch + 1: what Kafka's
// replica state machine does on OfflineReplica.
//
// # Requests
//
// State changes collect their requests in a batch, sent per broker in Kafka's order:
// LeaderAndIsr (v5) first, then UpdateMetadata (v7). Each live broker has a FIFO queue and a
// sender goroutine that connects to the broker's endpoint for the inter-broker listener, sends one
// request at a time and, on any error, closes the connection, waits 100 ms and retries the same
// request until the broker dies or the controller resigns.
package controller
