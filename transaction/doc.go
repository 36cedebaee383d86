// Package transaction is Kafka's transaction coordinator
// (TransactionCoordinator, TransactionStateManager and
// TransactionMarkerChannelManager of Kafka 2.8): transactional ids, their
// producer ids and epochs, the transactions they run, and the COMMIT and
// ABORT markers that end them, all stored in __transaction_state.
//
// It never imports the broker. The broker hands it the same small Log the
// group coordinator uses (append a record batch to a __transaction_state
// partition it leads and wait for acks=all; read batches back), a
// ProducerIDGenerator (the /latest_producer_id_block manager) and a
// MarkerSender (partition leaders from the metadata cache, and
// WriteTxnMarkers requests to them), and calls OnBecomeLeader / OnResign as
// leadership of those partitions moves. A transactional id belongs to
// partition abs(javaHashCode(id)) % transaction.state.log.num.partitions
// (PartitionFor, the group coordinator's hash); the leader epoch of that
// partition when this broker took it is the coordinator epoch, which every
// marker carries so partition leaders can refuse an older coordinator
// (TRANSACTION_COORDINATOR_FENCED).
//
// Data flow of one transaction, as a franz-go or Java producer drives it:
//
//	FindCoordinator(key_type 1) → InitProducerId: epoch+1 in the log → Empty
//	AddPartitionsToTxn / AddOffsetsToTxn: partitions in the log → Ongoing
//	(the producer writes transactional batches; TxnOffsetCommit goes to the
//	group coordinator)
//	EndTxn(commit) → PrepareCommit in the log → the client is answered
//	→ markers: one WriteTxnMarkers per partition leader, retried until
//	every partition has its COMMIT control batch → CompleteCommit in the log
//
// Each step writes the id's whole metadata as one record (records.go,
// Kafka's exact schemas) and takes effect only once acks=all answered:
// a transition is prepared under the id's lock (its pending state blocks
// any other, which gets CONCURRENT_TRANSACTIONS), appended without the lock,
// and completed under it if the coordinator epoch did not change meanwhile.
// Loading a partition reads it from start to end (the last record of each
// id wins, a tombstone removes it) and resumes the markers of every
// transaction found in PrepareCommit or PrepareAbort.
//
// The state machine (validPreviousStates holds the table):
//
//	 Empty ──(2)──> Ongoing ──(3: commit)──> PrepareCommit ──(3: markers)──> CompleteCommit
//	  │ ▲            │ ▲  │                                                       │
//	  │ │            │ └──┘(2)                                                    │
//	  │ │            ├────(3: abort)───────> PrepareAbort ───(3: markers)──> CompleteAbort
//	  │ │            │                           ▲                                │
//	  │ │            └──(4)──> PrepareEpochFence ┘                                │
//	  │ └───(1)─── Empty, CompleteCommit, CompleteAbort <─────────────────────────┘
//	  └──(5)──> Dead  (from CompleteCommit and CompleteAbort too)
//	 CompleteCommit, CompleteAbort ──(2)──> Ongoing
//
//	(1) InitProducerId: the epoch is bumped (a new producer id once the epoch is
//	    exhausted); Empty, CompleteCommit and CompleteAbort go to Empty
//	(2) AddPartitionsToTxn or AddOffsetsToTxn: from Empty or a completed
//	    transaction a new transaction starts (its timeout clock too); in Ongoing
//	    new partitions join
//	(3) EndTxn commit or abort: PrepareCommit or PrepareAbort is written, the
//	    client answered, the markers written, then CompleteCommit or CompleteAbort
//	    (an EndTxn repeating the outcome just completed changes nothing, and
//	    an AddPartitionsToTxn naming partitions already in the transaction
//	    writes nothing)
//	(4) InitProducerId during a transaction, or the transaction's timeout
//	    (transaction.timeout.ms, checked every
//	    transaction.abort.timed.out.transaction.cleanup.interval.ms): the epoch
//	    is bumped in memory (PrepareEpochFence, never written) and the
//	    transaction aborted under it, fencing the old producer; InitProducerId
//	    answers CONCURRENT_TRANSACTIONS and the producer retries
//	(5) transactional.id.expiration.ms without a transaction: a tombstone, and
//	    the id leaves the cache (Dead is never written)
//
// Locks, in the order they are taken:
//
//  1. Coordinator.mu (read-write): the table of partitions (loading or
//     loaded, coordinator epoch) and their ids. Held for reading across an
//     append to the log, so a partition cannot be unloaded and reloaded
//     between the epoch check and the append.
//  2. txnMetadata.mu, one per transactional id: its state, producer id and
//     epoch, partitions and pending transition. Never held across an
//     append or a request.
//  3. markerManager.mu: the marker queues, retry lists and the transactions
//     awaiting their markers; never held while taking the others.
//
// Below them are only the Log's own locks.
package transaction
