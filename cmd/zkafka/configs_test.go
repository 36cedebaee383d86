package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zkafka/zkafka/internal/testcluster"
	"github.com/zkafka/zkafka/internal/wait"
	"github.com/zkafka/zkafka/zkpaths"
)

func TestConfigsGolden(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 2})
	bs := strings.Join(c.BootstrapAddrs(), ",")
	zkWarning := "Warning: --zookeeper is deprecated and will be removed in a future version of Kafka.\nUse --bootstrap-server instead to specify a broker to connect to.\n"
	configs := func(mode string, args ...string) []string {
		if mode == "zk" {
			return append([]string{"configs", "--zookeeper", c.ZK}, args...)
		}
		return append([]string{"configs", "--bootstrap-server", bs}, args...)
	}
	expectTool(t, "Created topic events.\n", "topics", "--bootstrap-server", bs, "--create", "--topic", "events", "--partitions", "1", "--replication-factor", "1")
	awaitTopic(t, bs, "events")

	expectTool(t, "Completed updating config for topic events.\n",
		configs("bs", "--alter", "--entity-type", "topics", "--entity-name", "events", "--add-config", "retention.ms=1000,cleanup.policy=[compact,delete]")...)
	expectTool(t, "Dynamic configs for topic events are:\n"+
		"  cleanup.policy=compact,delete sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:cleanup.policy=compact,delete, DEFAULT_CONFIG:log.cleanup.policy=delete}\n"+
		"  retention.ms=1000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms=1000}\n",
		configs("bs", "--describe", "--topic", "events")...)
	expectTool(t, zkWarning+"Configs for topic 'events' are cleanup.policy=compact,delete,retention.ms=1000\n",
		configs("zk", "--describe", "--entity-type", "topics", "--entity-name", "events")...)

	expectTool(t, zkWarning+"Completed updating config for entity: topic 'events'.\n",
		configs("zk", "--alter", "--topic", "events", "--delete-config", "cleanup.policy", "--add-config", "max.message.bytes=2000")...)
	// The change notification tells the brokers to re-read the topic.
	children, _, err := c.ZooKeeper().Children(zkpaths.ConfigChanges)
	if err != nil || !slices.ContainsFunc(children, func(n string) bool { return strings.HasPrefix(n, "config_change_") }) {
		t.Errorf("config changes: %v %v", children, err)
	}
	wait.For(t, 20*time.Second, "the brokers to apply the ZooKeeper change", func() bool {
		_, out, _ := runTool(configs("bs", "--describe", "--topic", "events")...)
		return strings.Contains(out, "  max.message.bytes=2000 ") && !strings.Contains(out, "cleanup.policy")
	})
	expectTool(t, "Completed updating config for topic events.\n", configs("bs", "--alter", "--topic", "events", "--delete-config", "max.message.bytes,retention.ms")...)
	expectTool(t, "Dynamic configs for topic events are:\n", configs("bs", "--describe", "--topic", "events")...)

	// Brokers: one broker's dynamic config, then the cluster default.
	expectTool(t, "Completed updating config for broker 1.\n", configs("bs", "--alter", "--entity-type", "brokers", "--entity-name", "1", "--add-config", "num.io.threads=4")...)
	// Brokers apply a dynamic config when the change notification reaches them.
	wait.For(t, 20*time.Second, "broker 1 to show its dynamic config", func() bool {
		_, out, _ := runTool(configs("bs", "--describe", "--broker", "1")...)
		return strings.HasPrefix(out, "Dynamic configs for broker 1 are:\n  num.io.threads=4 sensitive=false synonyms={DYNAMIC_BROKER_CONFIG:num.io.threads=4, ")
	})
	// --all: every config Kafka 2.8 defines, in its types, with its defaults.
	code, out, _ := runTool(configs("bs", "--describe", "--all", "--broker", "1")...)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	sortedByName := slices.IsSortedFunc(lines[1:], func(a, b string) int {
		return strings.Compare(strings.SplitN(a, "=", 2)[0], strings.SplitN(b, "=", 2)[0])
	})
	if code != 0 || lines[0] != "All configs for broker 1 are:" || len(lines) < 1+218 || !sortedByName {
		t.Errorf("describe --all: exit %d, %d lines\n%s", code, len(lines), out)
	}
	for _, want := range []string{
		"  inter.broker.protocol.version=2.8-IV1 sensitive=false synonyms={DEFAULT_CONFIG:inter.broker.protocol.version=2.8-IV1}",
		"  log.cleaner.threads=1 sensitive=false synonyms={DEFAULT_CONFIG:log.cleaner.threads=1}",
		"  log.retention.ms=null sensitive=false synonyms={}",
		"  metric.reporters= sensitive=false synonyms={DEFAULT_CONFIG:metric.reporters=}",
		"  num.io.threads=4 sensitive=false synonyms={DYNAMIC_BROKER_CONFIG:num.io.threads=4, DEFAULT_CONFIG:num.io.threads=8}",
		"  ssl.key.password=null sensitive=true synonyms={}",
	} {
		if !slices.Contains(lines, want) {
			t.Errorf("describe --all lacks %q", want)
		}
	}
	expectTool(t, "Completed updating default config for brokers in the cluster.\n", configs("bs", "--alter", "--entity-type", "brokers", "--entity-default", "--add-config", "unclean.leader.election.enable=true")...)
	wait.For(t, 20*time.Second, "the cluster default to show", func() bool {
		_, out, _ := runTool(configs("bs", "--describe", "--entity-type", "brokers", "--entity-default")...)
		return out == "Default configs for brokers in the cluster are:\n  unclean.leader.election.enable=true sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:unclean.leader.election.enable=true}\n"
	})
	expectTool(t, zkWarning+"Configs for brokers '1' are num.io.threads=4\n", configs("zk", "--describe", "--broker", "1")...)
	expectTool(t, zkWarning+"Configs for default brokers are unclean.leader.election.enable=true\n", configs("zk", "--describe", "--broker-defaults")...)
	// Every broker, then the cluster default.
	code, out, _ = runTool(configs("bs", "--describe", "--entity-type", "brokers")...)
	if code != 0 || !strings.HasPrefix(out, "Dynamic configs for broker 1 are:\n  num.io.threads=4 ") ||
		!strings.Contains(out, "\nDynamic configs for broker 2 are:\nDefault configs for brokers in the cluster are:\n  unclean.leader.election.enable=true ") {
		t.Errorf("describe all brokers: exit %d\n%s", code, out)
	}
	// Dynamic broker configs go through ZooKeeper only while the broker is down.
	expectToolBoth(t, 1, zkWarning, "requirement failed: --bootstrap-server option must be specified to update broker configs Set(num.io.threads) when broker 2 is running. "+
		"Broker configuration updates using ZooKeeper are supported for bootstrapping before brokers are started to enable encrypted password configs to be stored in ZooKeeper.\n",
		configs("zk", "--alter", "--broker", "2", "--add-config", "num.io.threads=3")...)
	expectTool(t, zkWarning+"Completed updating config for entity: brokers '2'.\n", configs("zk", "--alter", "--broker", "2", "--add-config", "leader.replication.throttled.rate=1000")...)
}

func TestConfigsBadInput(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{})
	bs := c.BootstrapAddrs()[0]
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--bogus"}, "bogus is not a recognized option\n"},
		{[]string{"--bootstrap-server", bs, "--topic", "t"}, "Command must include exactly one action: --describe, --alter\n"},
		{[]string{"--bootstrap-server", bs, "--describe"}, "At least one entity type must be specified\n"},
		{[]string{"--bootstrap-server", bs, "--describe", "--entity-type", "widgets"}, "Invalid entity type widgets, the entity type must be one of topics,brokers with the --bootstrap-server argument\n"},
		{[]string{"--bootstrap-server", bs, "--describe", "--entity-type", "brokers", "--entity-name", "one"}, "The entity name for brokers must be a valid integer broker id, but it is: one\n"},
		{[]string{"--bootstrap-server", bs, "--alter", "--topic", "t"}, "At least one of --add-config, --add-config-file, or --delete-config must be specified with --alter\n"},
		{[]string{"--bootstrap-server", bs, "--alter", "--topic", "t", "--add-config", "retention.ms"}, "Invalid entity config: all configs to be added must be in the format \"key=val\".\n"},
		{[]string{"--bootstrap-server", bs, "--describe", "--topic", "missing"}, "Error while executing config command with args '--bootstrap-server " + bs + " --describe --topic missing'\nThe topic 'missing' does not exist.\n"},
		{[]string{"--zookeeper", c.ZK, "--alter", "--topic", "missing", "--add-config", "retention.ms=1"}, "Error while executing config command with args '--zookeeper " + c.ZK + " --alter --topic missing --add-config retention.ms=1'\nTopic missing does not exist.\n"},
		{[]string{"--zookeeper", c.ZK, "--describe", "--topic", "t", "--all"}, "--bootstrap-server must be specified for --all\n"},
		{[]string{"--describe", "--topic", "t"}, "One of the required --bootstrap-server or --zookeeper arguments must be specified\n"},
		{[]string{"--bootstrap-server", bs, "--describe", "--topic", "t", "--add-config", "a=b"}, "Option \"[describe]\" can't be used with option \"[add-config]\"\n"},
		{[]string{"--bootstrap-server", bs, "--describe", "--topic", "t", "--entity-name", "u"}, "--entity-{type,name,default} should not be used in conjunction with specific entity flags\n"},
		{[]string{"--bootstrap-server", bs, "--alter", "--entity-type", "brokers", "--add-config", "a=b"}, "an entity-name or default entity must be specified with --alter of users, clients, brokers or ips\n"},
		{[]string{"--bootstrap-server", bs, "--alter", "--topic", "t", "--add-config-file", "/nonexistent/x.properties"}, "open /nonexistent/x.properties: no such file or directory\n"},
	} {
		expectToolError(t, tc.want, append([]string{"configs"}, tc.args...)...)
	}
	expectTool(t, "Created topic t.\n", "topics", "--bootstrap-server", bs, "--create", "--topic", "t")
	awaitTopic(t, bs, "t")
	expectToolError(t, "Error while executing config command with args '--zookeeper "+c.ZK+" --alter --topic t --add-config frob=1'\nUnknown topic config name: frob\n",
		"configs", "--zookeeper", c.ZK, "--alter", "--topic", "t", "--add-config", "frob=1")
	expectToolError(t, "Invalid config(s): retention.ms\n", "configs", "--bootstrap-server", bs, "--alter", "--topic", "t", "--delete-config", "retention.ms")
	expectToolError(t, "Error while executing config command with args '--bootstrap-server "+bs+" --alter --topic t --add-config retention.ms=soon'\nInvalid config value for resource ConfigResource(type=TOPIC, name='t'): Invalid value soon for configuration retention.ms: Not a number of type LONG\n",
		"configs", "--bootstrap-server", bs, "--alter", "--topic", "t", "--add-config", "retention.ms=soon")
	file := filepath.Join(t.TempDir(), "topic.properties")
	if err := os.WriteFile(file, []byte("retention.ms=2000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	expectTool(t, "Completed updating config for topic t.\n", "configs", "--bootstrap-server", bs, "--alter", "--topic", "t", "--add-config-file", file)
	wait.For(t, 20*time.Second, "the config from the file", func() bool {
		_, out, _ := runTool("configs", "--bootstrap-server", bs, "--describe", "--topic", "t")
		return strings.Contains(out, "\n  retention.ms=2000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms=2000")
	})
	expectToolError(t, "Invalid config(s): segment.ms\n", "configs", "--bootstrap-server", bs, "--alter", "--topic", "t", "--delete-config", "segment.ms")
}

// awaitTopic waits until every broker's metadata has the new topic, so that
// whichever broker a tool asks knows it.
func awaitTopic(t *testing.T, bootstrap, topic string) {
	t.Helper()
	for _, addr := range strings.Split(bootstrap, ",") {
		wait.For(t, 20*time.Second, topic+" in the metadata of "+addr, func() bool {
			code, _, _ := runTool("topics", "--bootstrap-server", addr, "--describe", "--topic", topic)
			return code == 0
		})
	}
}

// TestConfigsBrokerLoggers: `kafka-configs --entity-type broker-loggers` describes a broker's
// loggers and changes one's level through --bootstrap-server, in ConfigCommand's words; a logger
// that does not exist is refused before anything changes.
func TestConfigsBrokerLoggers(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 1})
	c.WaitForController()
	bs := c.Addr(1)
	loggers := func() string {
		code, out, errOut := runTool("configs", "--bootstrap-server", bs, "--describe", "--entity-type", "broker-loggers", "--entity-name", "1")
		if code != 0 || !strings.HasPrefix(out, "Dynamic configs for broker-logger 1 are:\n") {
			t.Fatalf("describe broker-loggers: exit %d\n%s%s", code, out, errOut)
		}
		return out
	}
	if out := loggers(); !strings.Contains(out, "\n  root=DEBUG sensitive=false synonyms={}\n") || !strings.Contains(out, "\n  broker-1.controller=DEBUG sensitive=false synonyms={}\n") {
		t.Fatalf("describe broker-loggers:\n%s", out)
	}
	expectTool(t, "Completed updating config for broker-logger 1.\n",
		"configs", "--bootstrap-server", bs, "--alter", "--entity-type", "broker-loggers", "--entity-name", "1", "--add-config", "broker-1.controller=WARN")
	if out := loggers(); !strings.Contains(out, "\n  broker-1.controller=WARN sensitive=false synonyms={}\n") || !strings.Contains(out, "\n  root=DEBUG ") {
		t.Errorf("after setting broker-1.controller to WARN:\n%s", out)
	}
	expectTool(t, "Completed updating config for broker-logger 1.\n",
		"configs", "--bootstrap-server", bs, "--alter", "--entity-type", "broker-loggers", "--entity-name", "1", "--delete-config", "broker-1.controller")
	if out := loggers(); !strings.Contains(out, "\n  broker-1.controller=DEBUG ") {
		t.Errorf("after deleting broker-1.controller's level:\n%s", out)
	}
	bad := []string{"--bootstrap-server", bs, "--alter", "--entity-type", "broker-loggers", "--entity-name", "1", "--add-config", "no.such.logger=INFO"}
	expectToolError(t, "Error while executing config command with args '"+strings.Join(bad, " ")+"'\nInvalid broker logger(s): no.such.logger\n",
		append([]string{"configs"}, bad...)...)
}

// TestConfigsClientQuotas: kafka-configs for users and clients, through
// the brokers (AlterClientQuotas, DescribeClientQuotas) and through
// ZooKeeper, with 2.8's output.
func TestConfigsClientQuotas(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{})
	bs := c.BootstrapAddrs()[0]
	zkWarning := "Warning: --zookeeper is deprecated and will be removed in a future version of Kafka.\nUse --bootstrap-server instead to specify a broker to connect to.\n"
	expectTool(t, "Completed updating config for user alice.\n",
		"configs", "--bootstrap-server", bs, "--alter", "--entity-type", "users", "--entity-name", "alice", "--entity-type", "clients", "--entity-name", "app",
		"--add-config", "producer_byte_rate=1024,request_percentage=12.5")
	expectTool(t, "Completed updating default config for clients in the cluster.\n",
		"configs", "--bootstrap-server", bs, "--alter", "--entity-type", "clients", "--entity-default", "--add-config", "consumer_byte_rate=2048")
	expectTool(t, "Quota configs for user-principal 'alice', client-id 'app' are producer_byte_rate=1024.0, request_percentage=12.5\n",
		"configs", "--bootstrap-server", bs, "--describe", "--entity-type", "users", "--entity-name", "alice", "--entity-type", "clients", "--entity-name", "app")
	expectTool(t, "Quota configs for the default client-id are consumer_byte_rate=2048.0\n",
		"configs", "--bootstrap-server", bs, "--describe", "--entity-type", "clients")
	expectTool(t, zkWarning+"Configs for user-principal 'alice', client-id 'app' are producer_byte_rate=1024,request_percentage=12.5\n",
		"configs", "--zookeeper", c.ZK, "--describe", "--entity-type", "users", "--entity-name", "alice", "--entity-type", "clients", "--entity-name", "app")
	expectTool(t, zkWarning+"Completed updating config for entity: client-id 'batch'.\n",
		"configs", "--zookeeper", c.ZK, "--alter", "--entity-type", "clients", "--entity-name", "batch", "--add-config", "producer_byte_rate=100")
	expectTool(t, "Quota configs for client-id 'batch' are producer_byte_rate=100.0\n",
		"configs", "--bootstrap-server", bs, "--describe", "--entity-type", "clients", "--entity-name", "batch")
	expectTool(t, "Completed updating config for client batch.\n",
		"configs", "--bootstrap-server", bs, "--alter", "--entity-type", "clients", "--entity-name", "batch", "--delete-config", "producer_byte_rate")
	expectTool(t, "", "configs", "--bootstrap-server", bs, "--describe", "--entity-type", "clients", "--entity-name", "batch")

	expectToolError(t, "Invalid config(s): consumer_byte_rate\n",
		"configs", "--bootstrap-server", bs, "--alter", "--entity-type", "clients", "--entity-name", "batch", "--delete-config", "consumer_byte_rate")
	expectToolError(t, "Only quota and SCRAM credential configs can be added for 'users' using --bootstrap-server. Unexpected config names: Set(frob)\n",
		"configs", "--bootstrap-server", bs, "--alter", "--entity-type", "users", "--entity-name", "bob", "--add-config", "frob=1")
	expectToolError(t, "Error while executing config command with args '--bootstrap-server "+bs+" --alter --entity-type users --entity-name bob --add-config producer_byte_rate=fast'\nCannot parse quota configuration value for producer_byte_rate: fast\n",
		"configs", "--bootstrap-server", bs, "--alter", "--entity-type", "users", "--entity-name", "bob", "--add-config", "producer_byte_rate=fast")
	expectToolError(t, "Only 'users' and 'clients' entity types may be specified together\n",
		"configs", "--bootstrap-server", bs, "--describe", "--entity-type", "users", "--entity-type", "topics")

	// IP entities: connection_creation_rate only, an address or a resolvable host.
	expectTool(t, "Completed updating config for ip 10.1.2.3.\n",
		"configs", "--bootstrap-server", bs, "--alter", "--entity-type", "ips", "--entity-name", "10.1.2.3", "--add-config", "connection_creation_rate=20")
	expectTool(t, "Completed updating default config for ips in the cluster.\n",
		"configs", "--bootstrap-server", bs, "--alter", "--entity-type", "ips", "--entity-default", "--add-config", "connection_creation_rate=100")
	expectTool(t, "Quota configs for ip '10.1.2.3' are connection_creation_rate=20.0\nQuota configs for the default ip are connection_creation_rate=100.0\n",
		"configs", "--bootstrap-server", bs, "--describe", "--entity-type", "ips")
	expectTool(t, zkWarning+"Configs for ips '10.1.2.3' are connection_creation_rate=20\n",
		"configs", "--zookeeper", c.ZK, "--describe", "--entity-type", "ips", "--entity-name", "10.1.2.3")
	expectToolError(t, "Only connection quota configs can be added for 'ips' using --bootstrap-server. Unexpected config names: producer_byte_rate\n",
		"configs", "--bootstrap-server", bs, "--alter", "--entity-type", "ips", "--entity-name", "10.1.2.3", "--add-config", "producer_byte_rate=1")
	expectToolError(t, "Error while executing config command with args '--bootstrap-server "+bs+" --alter --entity-type ips --entity-name no-such-host.invalid --add-config connection_creation_rate=1'\nno-such-host.invalid is not a valid IP or resolvable host.\n",
		"configs", "--bootstrap-server", bs, "--alter", "--entity-type", "ips", "--entity-name", "no-such-host.invalid", "--add-config", "connection_creation_rate=1")
}
