// Package chaos is `zkafka chaos`: it injects faults into the local cluster that scripts/cluster.sh
// runs, or the Docker cluster docker-compose.yml runs, — process kills and pauses, ZooKeeper's loss, an ensemble's leader lost or cut off, rolling
// restarts, network partitions, slow and lossy links, full disks, wall-clock jumps — while producers and a consumer group work against it, then reads everything back and
// checks that nothing acknowledged was lost.
//
// Data flows one way:
//
//	Run: prepare the cluster (network namespaces for partition and slow faults, a tmpfs log dir
//	  for disk-full faults, a cgroup per ZooKeeper server for zk-split faults), create the run's topic (replication factor 3, min.insync.replicas 2,
//	  unclean.leader.election.enable false), start the workload, then per fault:
//	    inject (Kinds: a kind and its variants, taken in turn) → hold → heal → wait until the
//	    cluster is whole (every broker registered, a live controller, every ISR full) and every
//	    partition acknowledges records again
//	  then stop producing, let the group catch up, read every partition from the start, and undo
//	  the preparation. Everything that happens is an Op in DIR/history.jsonl, written as it
//	  happens.
//	Analyze: history.jsonl → the Checker (what the guarantees forbid) and Availability (each
//	  fault's timings) → a Report: the table per fault kind, the last line
//	  `faults=N acked=M lost=L duplicated=D reordered=R verdict=PASS|FAIL`, findings.json,
//	  faults.json, table.txt and the timeline picture. `zkafka chaos report DIR` runs it again
//	  on a saved directory.
//
// The workload: idempotent acks=all producers and an acks=1 producer, each writing its own
// sequence (Value) round-robin over the partitions, every completion recorded with the time the
// record was sent; a cooperative group of kgo members that record each record they process and
// commit it before letting a rebalance go on; a poller of the group's committed offsets that
// believes only the coordinator ZooKeeper names; and an observer of who acts as controller.
//
// The checker fails a run for an acks=all record acknowledged but missing, read twice, out of
// order within its producer's partition sequence, or found at another offset than acknowledged;
// for records nobody sent, acknowledged records the final read could not reach, records the group
// never processed, and committed offsets that went backwards. The acks=1 producer's losses are
// counted and reported, never failed: losing what a leader alone acknowledged is what acks=1
// allows (the isolated-leader scenario shows it on purpose).
//
// Fuzz (`zkafka chaos fuzz`) is the network fuzzer: connections that send valid, corrupted and
// random requests while a producer writes, and a report of how the brokers answered and what their
// memory did; it needs no fault and works against any brokers.
//
// A Cluster is driven the way its user drives it: the local one only through cluster.sh (Local), so
// the tool and a user at a terminal do the same things, the Docker one through docker and compose
// (Docker). Network faults are nftables rules inside each broker's network namespace (Local makes
// the namespaces; containers have their own), and a slow fault's proxy listens on this machine's
// address on the brokers' network. A fault the observer cannot see in ZooKeeper — a killed, paused
// or cut-off broker whose session, and perhaps /controller, lives on until it expires — is told to
// it by the injector, so the report can say how long no controller acted.
package chaos
