package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zkafka/zkafka/internal/testcluster"
	"github.com/zkafka/zkafka/internal/wait"
)

// TestToolsOverSASLSSL: every tool that talks to brokers logs in to a
// SASL_SSL listener with SCRAM-SHA-256 through its client-config option
// (--command-config, --admin.config, --producer.config, --consumer.config),
// with the files scripts/secure-files.sh makes for the secure teaching
// cluster; a wrong password gets the broker's SASL_AUTHENTICATION_FAILED
// message.
func TestToolsOverSASLSSL(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join("..", "..", "scripts", "secure-files.sh")
	if out, err := exec.Command(script, dir, "", "admin:admin-secret", "alice:alice-secret").CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
	c := testcluster.Start(t, testcluster.Options{Properties: map[string]string{
		"listeners":               "PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0",
		"sasl.enabled.mechanisms": "SCRAM-SHA-256",
		"ssl.keystore.type":       "PEM",
		"ssl.keystore.location":   filepath.Join(dir, "broker-1.pem"),
		"ssl.truststore.type":     "PEM",
		"ssl.truststore.location": filepath.Join(dir, "ca.pem"),
		// The authorizer serves the ACL APIs; with no ACLs it lets everyone
		// in, the harness's PLAINTEXT client too.
		"authorizer.class.name":            "kafka.security.authorizer.AclAuthorizer",
		"allow.everyone.if.no.acl.found":   "true",
		"group.initial.rebalance.delay.ms": "0",
	}})
	c.WaitForController()
	addr, _ := c.Broker(1).ListenerAddr("SASL_SSL")
	admin, alice := filepath.Join(dir, "admin.properties"), filepath.Join(dir, "alice.properties")
	for _, user := range []string{"admin", "alice"} {
		expectTool(t, "Warning: --zookeeper is deprecated and will be removed in a future version of Kafka.\nUse --bootstrap-server instead to specify a broker to connect to.\n"+
			"Completed updating config for entity: user-principal '"+user+"'.\n",
			"configs", "--zookeeper", c.ZK, "--alter", "--add-config", "SCRAM-SHA-256=[iterations=8192,password="+user+"-secret]", "--entity-type", "users", "--entity-name", user)
	}
	// The broker learns the credentials from /config/changes.
	wait.For(t, 20*time.Second, "alice to log in", func() bool {
		code, _, _ := runTool("broker-health", "--bootstrap-server", addr, "--command-config", alice)
		return code == 0
	})

	expectTool(t, "Created topic greetings.\n",
		"topics", "--bootstrap-server", addr, "--command-config", admin, "--create", "--topic", "greetings", "--partitions", "1", "--replication-factor", "1")
	c.WaitForLeader("greetings", 0)
	withStdin("hello\nhi\n", func() {
		expectTool(t, "", "console-producer", "--bootstrap-server", addr, "--producer.config", alice, "--topic", "greetings")
	})
	expectTool(t, "hello\nhi\n", "console-consumer", "--bootstrap-server", addr, "--consumer.config", alice,
		"--topic", "greetings", "--group", "readers", "--from-beginning", "--max-messages", "2")
	expectTool(t, "SCRAM credential configs for user-principal 'alice' are SCRAM-SHA-256=iterations=8192\n",
		"configs", "--bootstrap-server", addr, "--command-config", admin, "--describe", "--entity-type", "users", "--entity-name", "alice")
	expectTool(t, "readers\n", "consumer-groups", "--bootstrap-server", addr, "--command-config", admin, "--list")
	expectTool(t, "Adding ACLs for resource `ResourcePattern(resourceType=TOPIC, name=greetings, patternType=LITERAL)`: \n"+
		" \t(principal=User:alice, host=*, operation=READ, permissionType=ALLOW) \n\n"+
		"Current ACLs for resource `ResourcePattern(resourceType=TOPIC, name=greetings, patternType=LITERAL)`: \n"+
		" \t(principal=User:alice, host=*, operation=READ, permissionType=ALLOW) \n\n",
		"acls", "--bootstrap-server", addr, "--command-config", admin, "--add", "--allow-principal", "User:alice", "--operation", "Read", "--topic", "greetings")
	// The other admin tools, each with a harmless request: their option is
	// the same client config.
	for _, args := range [][]string{
		{"broker-api-versions", "--command-config", admin},
		{"log-dirs", "--command-config", admin, "--describe"},
		{"reassign-partitions", "--command-config", admin, "--list"},
		{"leader-election", "--admin.config", admin, "--election-type", "preferred", "--all-topic-partitions"},
		{"preferred-replica-election", "--admin.config", admin},
	} {
		args = append(append(args[:1:1], "--bootstrap-server", addr), args[1:]...)
		if code, out, errOut := runTool(args...); code != 0 {
			t.Errorf("zkafka %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
		}
	}

	wrong := filepath.Join(dir, "mallory.properties")
	data, err := os.ReadFile(alice)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(wrong, []byte(strings.Replace(string(data), "alice-secret", "guess", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	expectToolError(t, "Error while executing topic command : Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-256\n",
		"topics", "--bootstrap-server", addr, "--command-config", wrong, "--list")
	if code, _, errOut := runTool("broker-health", "--bootstrap-server", addr, "--command-config", wrong); code != 1 || !strings.Contains(errOut, "SASL_AUTHENTICATION_FAILED") {
		t.Errorf("broker-health with a wrong password: exit %d, stderr %q", code, errOut)
	}
}
