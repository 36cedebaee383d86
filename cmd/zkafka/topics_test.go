package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zkafka/zkafka/internal/testcluster"
	"github.com/zkafka/zkafka/internal/wait"
	"github.com/zkafka/zkafka/zkpaths"
)

// runTool runs a zkafka subcommand in process.
func runTool(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// expectTool runs a tool and fails unless it exits 0 with exactly want on stdout.
func expectTool(t *testing.T, want string, args ...string) {
	t.Helper()
	code, out, errOut := runTool(args...)
	if code != 0 || out != want {
		t.Errorf("zkafka %s: exit %d\nstdout:\n%s\nwant:\n%s\nstderr: %s", strings.Join(args, " "), code, out, want, tail(errOut))
	}
}

// expectToolError runs a tool and fails unless it exits 1 with want on stderr.
func expectToolError(t *testing.T, want string, args ...string) {
	t.Helper()
	code, out, errOut := runTool(args...)
	if code != 1 || errOut != want {
		t.Errorf("zkafka %s: exit %d, stderr %q, want exit 1 and %q (stdout %q)", strings.Join(args, " "), code, errOut, want, out)
	}
}

func topicID(t *testing.T, c *testcluster.Cluster, topic string) string {
	t.Helper()
	data, _, err := c.ZooKeeper().Get(zkpaths.TopicPath(topic))
	if err != nil {
		t.Fatal(err)
	}
	ta, err := zkpaths.DecodeTopicAssignment(data)
	if err != nil {
		t.Fatal(err)
	}
	return ta.TopicID
}

func TestTopicsGolden(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 3})
	bs := []string{"--bootstrap-server", strings.Join(c.BootstrapAddrs(), ",")}
	zkc := []string{"--zookeeper", c.ZK}
	topics := func(mode []string, args ...string) []string {
		return append(append([]string{"topics"}, mode...), args...)
	}

	expectTool(t, "Created topic orders.\n", topics(bs, "--create", "--topic", "orders", "--partitions", "2", "--replication-factor", "2", "--config", "retention.ms=1000")...)
	expectToolError(t, "Error while executing topic command : Topic 'orders' already exists.\n", topics(bs, "--create", "--topic", "orders", "--partitions", "2")...)
	expectTool(t, "", topics(bs, "--create", "--topic", "orders", "--partitions", "2", "--if-not-exists")...)
	expectTool(t, "Created topic legacy.\n", topics(zkc, "--create", "--topic", "legacy", "--replica-assignment", "1:2,2:3", "--config", "cleanup.policy=compact")...)
	expectToolError(t, "Error while executing topic command : Topic 'legacy' already exists.\n", topics(zkc, "--create", "--topic", "legacy", "--partitions", "1", "--replication-factor", "1")...)
	expectTool(t, "WARNING: Due to limitations in metric names, topics with a period ('.') or underscore ('_') could collide. To avoid issues it is best to use either, but not both.\nCreated topic only_3.\n",
		topics(bs, "--create", "--topic", "only_3", "--replica-assignment", "3")...)
	c.WaitForLeader("legacy", 1)
	c.WaitForLeader("only_3", 0)
	// kafka-topics --zookeeper wrote no topic id; the controller gave it one before its partitions.
	if id := topicID(t, c, "legacy"); len(id) != 22 {
		t.Errorf("topic id of legacy after the controller loaded it: %q", id)
	}

	expectTool(t, "legacy\nonly_3\norders\n", topics(bs, "--list", "--exclude-internal")...)
	expectTool(t, "legacy\nonly_3\norders\n", topics(zkc, "--list", "--exclude-internal")...)
	expectTool(t, "legacy\norders\n", topics(bs, "--list", "--topic", "l.*,orders")...)

	legacy := "Topic: legacy\tTopicId: " + topicID(t, c, "legacy") + "\tPartitionCount: 2\tReplicationFactor: 2\tConfigs: cleanup.policy=compact\n" +
		"\tTopic: legacy\tPartition: 0\tLeader: 1\tReplicas: 1,2\tIsr: 1,2\n" +
		"\tTopic: legacy\tPartition: 1\tLeader: 2\tReplicas: 2,3\tIsr: 2,3\n"
	expectTool(t, legacy, topics(bs, "--describe", "--topic", "legacy")...)
	expectTool(t, legacy, topics(zkc, "--describe", "--topic", "legacy")...)
	expectTool(t, "Topic: legacy\tTopicId: "+topicID(t, c, "legacy")+"\tPartitionCount: 2\tReplicationFactor: 2\tConfigs: cleanup.policy=compact\n"+
		"Topic: orders\tTopicId: "+topicID(t, c, "orders")+"\tPartitionCount: 2\tReplicationFactor: 2\tConfigs: retention.ms=1000\n",
		topics(bs, "--describe", "--topics-with-overrides")...)

	// Growing a topic through ZooKeeper continues Kafka's round-robin:
	// partition 2 of brokers 1,2,3 after [1,2],[2,3] goes to [3,1].
	expectTool(t, "WARNING: If partitions are increased for a topic that has a key, the partition logic or ordering of the messages will be affected\nAdding partitions succeeded!\n",
		topics(zkc, "--alter", "--topic", "legacy", "--partitions", "3")...)
	data, _, err := c.ZooKeeper().Get(zkpaths.TopicPath("legacy"))
	if ta, derr := zkpaths.DecodeTopicAssignment(data); err != nil || derr != nil || joinInt32s(ta.Partitions[2]) != "3,1" {
		t.Errorf("legacy after --alter: %s %v %v", data, err, derr)
	}
	expectTool(t, "", topics(bs, "--alter", "--topic", "orders", "--partitions", "3")...)
	c.WaitForLeader("orders", 2)
	code, out, _ := runTool(topics(bs, "--describe", "--topic", "orders")...)
	if code != 0 || !strings.Contains(out, "PartitionCount: 3\t") || strings.Count(out, "\tTopic: orders\tPartition: ") != 3 {
		t.Errorf("describe orders after alter: exit %d\n%s", code, out)
	}
	expectToolError(t, "Error while executing topic command : Topic currently has 3 partitions, which is higher than the requested 2.\n",
		topics(bs, "--alter", "--topic", "orders", "--partitions", "2")...)

	// Without broker 3, partitions it replicated are under-replicated and
	// only_3, which lives on broker 3 alone, is unavailable.
	c.StopBroker(3)
	wait.For(t, 20*time.Second, "ISR without broker 3", func() bool {
		_, out, _ := runTool(topics(zkc, "--describe", "--topic", "legacy")...)
		return strings.Contains(out, "Partition: 1\tLeader: 2\tReplicas: 2,3\tIsr: 2\n")
	})
	expectTool(t, "\tTopic: only_3\tPartition: 0\tLeader: none\tReplicas: 3\tIsr: 3\n", topics(zkc, "--describe", "--unavailable-partitions")...)
	code, out, _ = runTool(topics(zkc, "--describe", "--under-replicated-partitions", "--topic", "legacy")...)
	if code != 0 || !strings.Contains(out, "\tTopic: legacy\tPartition: 1\tLeader: 2\tReplicas: 2,3\tIsr: 2\n") || strings.Contains(out, "Partition: 0") || strings.Contains(out, "PartitionCount") {
		t.Errorf("--under-replicated-partitions: exit %d\n%s", code, out)
	}

	wait.For(t, 20*time.Second, "partition 2 led by broker 1", func() bool {
		_, out, _ := runTool(topics(zkc, "--describe", "--topic", "legacy")...)
		return strings.Contains(out, "Partition: 2\tLeader: 1\tReplicas: 3,1\tIsr: 1\n")
	})
	expectTool(t, "\tTopic: legacy\tPartition: 1\tLeader: 2\tReplicas: 2,3\tIsr: 2\n\tTopic: legacy\tPartition: 2\tLeader: 1\tReplicas: 3,1\tIsr: 1\n",
		topics(zkc, "--describe", "--at-min-isr-partitions", "--topic", "legacy")...)
	expectTool(t, "\tTopic: only_3\tPartition: 0\tLeader: none\tReplicas: 3\tIsr: 3\n", topics(zkc, "--describe", "--under-min-isr-partitions")...)
	code, out, _ = runTool(topics(bs, "--describe", "--under-min-isr-partitions", "--topic", "only_3")...)
	if code != 0 || !strings.HasPrefix(out, "\tTopic: only_3\tPartition: 0\tLeader: none\tReplicas: 3\tIsr: ") {
		t.Errorf("--under-min-isr-partitions over --bootstrap-server: exit %d\n%s", code, out)
	}

	// The deprecated config change of the ZooKeeper path.
	expectTool(t, "WARNING: Altering topic configuration from this script has been deprecated and may be removed in future releases.\n"+
		"         Going forward, please use kafka-configs.sh for this functionality\nUpdated config for topic legacy.\n",
		topics(zkc, "--alter", "--topic", "legacy", "--config", "retention.ms=5000", "--delete-config", "cleanup.policy")...)
	code, out, _ = runTool(topics(zkc, "--describe", "--topic", "legacy", "--topics-with-overrides")...)
	if code != 0 || !strings.HasSuffix(out, "\tConfigs: retention.ms=5000\n") {
		t.Errorf("legacy configs after --alter --config: exit %d\n%s", code, out)
	}

	expectTool(t, "Topic legacy is marked for deletion.\nNote: This will have no impact if delete.topic.enable is not set to true.\n", topics(zkc, "--delete", "--topic", "legacy")...)
	expectTool(t, "", topics(bs, "--delete", "--topic", "orders")...)
	wait.For(t, 20*time.Second, "topics deleted", func() bool {
		_, out, _ := runTool(topics(bs, "--list", "--exclude-internal")...)
		return out == "only_3\n"
	})
}

func TestTopicsBadInput(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{})
	bs := c.BootstrapAddrs()[0]
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--frobnicate"}, "frobnicate is not a recognized option\n"},
		{[]string{"--bootstrap-server", bs, "--topic"}, "Option topic requires an argument\n"},
		{[]string{"--bootstrap-server", bs, "--list", "--describe"}, "Command must include exactly one action: --list, --describe, --create, --alter or --delete\n"},
		{[]string{"--list"}, "Only one of --bootstrap-server or --zookeeper must be specified\n"},
		{[]string{"--bootstrap-server", bs, "--create"}, "Missing required argument \"[topic]\"\n"},
		{[]string{"--bootstrap-server", bs, "--create", "--topic", "x", "--partitions", "three"}, "Cannot parse argument 'three' of option partitions\n"},
		{[]string{"--bootstrap-server", bs, "--create", "--topic", "x", "--partitions", "0"}, "Error while executing topic command : The partitions must be greater than 0\n"},
		{[]string{"--bootstrap-server", bs, "--create", "--topic", "x", "--config", "retention.ms"}, "Error while executing topic command : Invalid topic config: all configs to be added must be in the format \"key=val\".\n"},
		{[]string{"--bootstrap-server", bs, "--create", "--topic", "x", "--replica-assignment", "1:1"}, "Error while executing topic command : Partition replica lists may not contain duplicate entries: 1\n"},
		{[]string{"--bootstrap-server", bs, "--create", "--topic", "x", "--replication-factor", "2"}, "Error while executing topic command : Replication factor: 2 larger than available brokers: 1.\n"},
		{[]string{"--bootstrap-server", bs, "--create", "--topic", "bad/name"}, "Error while executing topic command : Topic name \"bad/name\" is illegal, it contains a character other than ASCII alphanumerics, '.', '_' and '-'\n"},
		{[]string{"--bootstrap-server", bs, "--describe", "--topic", "nope"}, "Error while executing topic command : Topic 'nope' does not exist as expected\n"},
		{[]string{"--zookeeper", c.ZK, "--delete", "--topic", "nope"}, "Error while executing topic command : Topic 'nope' does not exist as expected\n"},
		{[]string{"--zookeeper", c.ZK, "--create", "--topic", "x", "--partitions", "1"}, "Missing required argument \"[replication-factor]\"\n"},
		{[]string{"--bootstrap-server", bs, "--alter", "--topic", "x"}, "Missing required argument \"[partitions]\"\n"},
		{[]string{"--zookeeper", c.ZK, "--create", "--topic", "x", "--partitions", "1", "--replication-factor", "1", "--config", "frob=1"}, "Error while executing topic command : Unknown topic config name: frob\n"},
		{[]string{"--zookeeper", c.ZK, "--create", "--topic", "x", "--partitions", "1", "--replication-factor", "1", "--config", "retention.ms=soon"}, "Error while executing topic command : Invalid value soon for configuration retention.ms: Not a number of type LONG\n"},
	} {
		expectToolError(t, tc.want, append([]string{"topics"}, tc.args...)...)
	}
	// --if-exists turns a missing topic into nothing to do.
	expectTool(t, "", "topics", "--bootstrap-server", bs, "--delete", "--topic", "nope", "--if-exists")
}

// TestClientToolScripts checks that scripts/kafka-<tool>.sh run the
// subcommand, and that each tool answers --help with its usage and exit 1,
// as Kafka's tools do.
func TestClientToolScripts(t *testing.T) {
	for _, tool := range []string{"topics", "console-producer", "console-consumer", "consumer-groups", "configs"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "scripts", "kafka-"+tool+".sh"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), "exec_zkafka "+tool+` "$@"`) {
			t.Errorf("scripts/kafka-%s.sh does not run zkafka %s:\n%s", tool, tool, data)
		}
		// The option table in joptsimple's layout (TestToolHelp checks it whole).
		if code, _, errOut := runTool(tool, "--help"); code != 1 || !strings.Contains(errOut, "\nOption ") || !strings.Contains(errOut, "\n--help ") {
			t.Errorf("zkafka %s --help: exit %d, stderr %q", tool, code, errOut)
		}
	}
}
