// Package lab is the rebalance lab behind `zkafka lab`: it runs one group
// scenario (members joining, leaving, crashing, restarting, stalling) under
// each rebalance mode in turn, on identical conditions, against a real
// cluster, and shows in figures and pictures what each mode costs.
//
// Data flows one way:
//
//	Run: per mode, a fresh group on the run's topic, a steady keyed load
//	  from a kgo producer, real members driven by the Scenario's script
//	  (consumer.Consumer in every mode, the consumer protocol's included,
//	  or with Options.Client "kgo" franz-go's consumer for the classic
//	  coordinator modes, its callbacks and hooks mapped to the same
//	  events), brokers killed and restarted through a BrokerControl
//	  (broker-failure) while the lab follows the group's coordinator → one
//	  Event log (the consumers' own event streams, the records each member
//	  processed, the scenario's markers, the coordinator and the brokers as
//	  the lab saw them, the members' counters)
//	Analyze: a mode's events → Figures (rebalances, rounds, time to a
//	  stable assignment, paused member-seconds, unfetched
//	  partition-seconds, duplicates, records never processed, ZooKeeper and
//	  group requests, failed claims, fenced and other failed commits), the
//	  Segments each timeline is drawn from and, for scenarios of joins
//	  only, the cost of each join by group size (Herd, from the counters
//	  taken before each step)
//	Write: events.jsonl, events.csv, figures.json, table.txt, pictures
//	  (SVG and PNG, drawn with gonum.org/v1/plot) and a self-contained
//	  report.html
//
// Members are real consumers that rejoin only from Poll, as Java's do (kgo
// members with BlockRebalanceOnPoll), so a
// rebalance waits for each member to finish its batch (max.poll.records ×
// the processing time per record): with busy members an eager rebalance
// stops every partition until the slowest member comes back, which is the
// cost cooperative avoids. The teaching defaults keep members busy for that
// reason.
//
// Every figure comes from recorded events, so `zkafka lab report DIR`
// re-renders a past run from its events.jsonl alone, and the unit tests
// compute the figures of recorded logs in testdata/.
package lab
