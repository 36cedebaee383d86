// Package bench is the load generator behind `zkafka bench`.
//
// It measures a Kafka-protocol cluster the way a client sees it, using
// franz-go's kgo as the client:
//
//  1. a kadm admin client creates the topic (an existing topic is reused) and
//     waits until every partition has a leader in metadata, so topic
//     propagation is not billed to the producer;
//  2. one kgo producer enqueues Options.Records incompressible values and
//     waits for every promise; each promise records the latency from enqueue
//     to acknowledgement, and the first failed promise aborts the run;
//  3. a second kgo client, with no group, reads the topic from the start
//     until it has seen every record produced, checking count and bytes.
//  4. with Options.DeleteTopic (Main sets it unless the topic was named
//     with --topic or --keep-topic is given) a topic the run created is
//     deleted, so that repeated runs do not fill the cluster's disks.
//
// Options.Mode narrows this: ModeProduce stops after step 2, ModeConsume
// produces untimed and reports step 3 only, and ModeE2E (e2e.go) replaces
// both steps by a consumer that reads while the producer writes at a rate,
// each value stamped with its enqueue time, for the latency a record takes
// from the producer to a consumer. Each phase counts its records into a
// progress bar (progress.go) when Options.Progress names a terminal.
//
// With Options.TransactionSize (--transaction-size N) the producer is
// transactional: N records per transaction, each committed before the next
// begins, EndTransaction's latency measured, and the consumer reads
// committed records. Main then runs the same load idempotently beside it
// and prints the transactional/idempotent ratio and the commit latency.
//
// RunScale (`zkafka bench partitions N`) is the scale run, on the cluster scripts/cluster.sh runs,
// whose brokers it kills, stops and starts through cluster.sh (chaos.Local): it creates N
// partitions over several topics and times, from the brokers' own Metadata answers, until every
// broker knows a leader of each and every replica is in sync; then a kill -9 of the controller until
// every live broker knows a live leader of each; the killed broker's restart (log recovery) and its
// return to every ISR; a preferred election; and a controlled shutdown of a broker leading a third
// of them. It reads each broker's resident memory and open files from /proc before and after the
// creation, and ZooKeeper's live heap with jcmd, and reports them per 1,000 partitions.
//
// Run targets the brokers in Options. Main is the command line, shared by
// `zkafka bench` and the separately built `zkafka-bench`, which passes a
// Reference (franz-go's in-process kfake cluster, capped at Kafka 2.8) to run
// the same load against: an upper bound for protocol and client cost on the
// same machine (kfake has no disk and no replication). Main prints the final
// table (report.go): one row per target and run — with --runs N the target
// and the reference alternate and the medians are added — and, when
// comparing, the ratio of the target's figures to the reference's. Keeping kfake out of this package keeps a second Kafka
// implementation out of the broker's binary.
package bench
