// Command zkafka is the one binary of the project: a Kafka broker in
// ZooKeeper mode and the tools around it, one subcommand each, named after
// Kafka's bin/*.sh scripts.
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/zkafka/zkafka/internal/bench"
)

const usage = `usage: zkafka <command> [args]

commands:
  broker <server.properties> [--override key=value ...]   run a broker (kafka-server-start.sh)
  broker-health [--bootstrap-server h:9092] [--broker-id N]   exit 0 once the broker is registered (container healthcheck)
  bench [flags]                                            produce then consume a load; --help for flags
  console-consumer (--zookeeper h:2181 | --bootstrap-server h:9092) --topic t [--group g]   consume (kafka-console-consumer.sh)
  consumer-groups (--bootstrap-server h:9092 | --zookeeper h:2181) --list|--describe|--reset-offsets|--delete   (kafka-consumer-groups.sh)
  configs (--bootstrap-server h:9092 | --zookeeper h:2181) --entity-type topics|brokers --describe|--alter   (kafka-configs.sh)
  acls (--bootstrap-server h:9092 | --authorizer-properties zookeeper.connect=h:2181) --add|--remove|--list   (kafka-acls.sh)
  console-producer --bootstrap-server h:9092 --topic t [--property parse.key=true]   lines of stdin as records (kafka-console-producer.sh)
  topics (--bootstrap-server h:9092 | --zookeeper h:2181) --create|--list|--describe|--alter|--delete   (kafka-topics.sh)
  reassign-partitions (--bootstrap-server h:9092 | --zookeeper h:2181) --generate|--execute|--verify|--cancel|--list   (kafka-reassign-partitions.sh)
  delete-records --bootstrap-server h:9092 --offset-json-file f   delete records before the offsets of f (kafka-delete-records.sh)
  delegation-tokens --bootstrap-server h:9092 --command-config sasl.properties --create|--renew|--expire|--describe   (kafka-delegation-tokens.sh)
  log-dirs --bootstrap-server h:9092 --describe [--broker-list 1,2] [--topic-list t]   each broker's log dirs and partitions (kafka-log-dirs.sh)
  leader-election --bootstrap-server h:9092 --election-type PREFERRED|UNCLEAN (--all-topic-partitions | --topic t --partition p | --path-to-json-file f)
  preferred-replica-election (--bootstrap-server h:9092 | --zookeeper h:2181) [--path-to-json-file f]   (deprecated in Kafka 2.8)
  broker-api-versions --bootstrap-server h:9092                API versions of every broker (kafka-broker-api-versions.sh)
  dump-log --files 00000000000000000000.log[,...] [--print-data-log] [--deep-iteration] [--offsets-decoder]   (kafka-dump-log.sh)
  zookeeper-shell host:2181[/chroot] [command]                 the real zkCli (zookeeper-shell.sh)
  zookeeper-security-migration --zookeeper.acl secure|unsecure --zookeeper.connect h:2181   set Kafka's ACLs on its znodes (zookeeper-security-migration.sh; SASL login from KAFKA_OPTS)
  lab list|run|report                                          the rebalance lab: one scenario under every rebalance mode
  ui [--zookeeper h:2181] [--bootstrap-server h:9092] [--listen 127.0.0.1:8080] [--allow-actions]   the live dashboard
  chaos list|run|report|fuzz                                   faults against ./scripts/cluster.sh's cluster, and a checker of what survived
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "broker":
		return runBroker(args[1:], stderr)
	case "broker-health":
		return runBrokerHealth(args[1:], stdout, stderr)
	case "bench":
		return bench.Main(args[1:], stdout, stderr, nil)
	case "console-consumer":
		return runConsoleConsumer(args[1:], stdout, stderr)
	case "consumer-groups":
		return runConsumerGroups(args[1:], stdout, stderr)
	case "configs":
		return runConfigs(args[1:], stdout, stderr)
	case "acls":
		return runACLs(args[1:], os.Stdin, stdout, stderr)
	case "console-producer":
		return runConsoleProducer(args[1:], stdout, stderr)
	case "topics":
		return runTopics(args[1:], stdout, stderr)
	case "reassign-partitions":
		return runReassignPartitions(args[1:], stdout, stderr)
	case "delete-records":
		return runDeleteRecords(args[1:], stdout, stderr)
	case "zookeeper-security-migration":
		return runZkSecurityMigration(args[1:], stdout, stderr)
	case "delegation-tokens":
		return runDelegationTokens(args[1:], stdout, stderr)
	case "log-dirs":
		return runLogDirs(args[1:], stdout, stderr)
	case "leader-election":
		return runLeaderElection(args[1:], stdout, stderr)
	case "preferred-replica-election":
		return runPreferredReplicaElection(args[1:], stdout, stderr)
	case "broker-api-versions":
		return runBrokerAPIVersions(args[1:], stdout, stderr)
	case "dump-log":
		return runDumpLog(args[1:], stdout, stderr)
	case "zookeeper-shell":
		return runZooKeeperShell(args[1:], os.Stdin, stdout, stderr)
	case "lab":
		return runLab(args[1:], stdout, stderr)
	case "ui":
		return runUI(args[1:], stdout, stderr)
	case "chaos":
		return runChaos(args[1:], stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "zkafka: unknown command %q\n%s", args[0], usage)
	return 2
}
