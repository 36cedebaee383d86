package main

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/zkafka/zkafka/internal/testcluster"
	"github.com/zkafka/zkafka/internal/wait"
)

// TestConfigsScramCredentials: kafka-configs sets, describes and deletes
// users' SCRAM credentials through ZooKeeper (the tool derives the
// credential, beside a quota in the same command) and through the brokers
// (AlterUserScramCredentials, DescribeUserScramCredentials), with 2.8's
// output and refusals; the credentials authenticate SCRAM clients.
func TestConfigsScramCredentials(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Properties: map[string]string{
		"listeners":               "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
		"sasl.enabled.mechanisms": "SCRAM-SHA-256,SCRAM-SHA-512",
	}})
	c.WaitForController()
	bs := c.BootstrapAddrs()[0]
	saslAddr, _ := c.Broker(1).ListenerAddr("SASL_PLAINTEXT")
	zkWarning := "Warning: --zookeeper is deprecated and will be removed in a future version of Kafka.\nUse --bootstrap-server instead to specify a broker to connect to.\n"
	zkArgs := func(args ...string) []string { return append([]string{"configs", "--zookeeper", c.ZK}, args...) }
	bsArgs := func(args ...string) []string { return append([]string{"configs", "--bootstrap-server", bs}, args...) }
	authenticates := func(m sasl.Mechanism) bool { return saslAuthenticates(saslAddr, m) }
	alice256 := scram.Auth{User: "alice", Pass: "alice-secret"}.AsSha256Mechanism()
	alice512 := scram.Auth{User: "alice", Pass: "alice-secret"}.AsSha512Mechanism()

	// --zookeeper: credentials and a quota in one command, stored as they are.
	expectTool(t, zkWarning+"Completed updating config for entity: user-principal 'alice'.\n",
		zkArgs("--alter", "--add-config", "SCRAM-SHA-256=[iterations=8192,password=alice-secret],SCRAM-SHA-512=[password=alice-secret],producer_byte_rate=1024",
			"--entity-type", "users", "--entity-name", "alice")...)
	b64 := `[A-Za-z0-9+/]+=*`
	cred := func(iterations string) string {
		return "salt=" + b64 + ",stored_key=" + b64 + ",server_key=" + b64 + ",iterations=" + iterations
	}
	stored := regexp.MustCompile(`^` + regexp.QuoteMeta(zkWarning) + `Configs for user-principal 'alice' are SCRAM-SHA-256=` + cred("8192") +
		`,SCRAM-SHA-512=` + cred("4096") + `,producer_byte_rate=1024\n$`)
	if code, out, errOut := runTool(zkArgs("--describe", "--entity-type", "users", "--entity-name", "alice")...); code != 0 || !stored.MatchString(out) {
		t.Errorf("describe alice through ZooKeeper: exit %d\n%s%s", code, out, errOut)
	}
	wait.For(t, 20*time.Second, "alice to authenticate with both SCRAMs", func() bool { return authenticates(alice256) && authenticates(alice512) })
	expectTool(t, "Quota configs for user-principal 'alice' are producer_byte_rate=1024.0\n"+
		"SCRAM credential configs for user-principal 'alice' are SCRAM-SHA-256=iterations=8192, SCRAM-SHA-512=iterations=4096\n",
		bsArgs("--describe", "--entity-type", "users", "--entity-name", "alice")...)

	// --bootstrap-server: AlterUserScramCredentials with the tool's salt.
	expectTool(t, "Completed updating config for user bob.\n",
		bsArgs("--alter", "--entity-type", "users", "--entity-name", "bob", "--add-config", "SCRAM-SHA-512=[iterations=16384,password=bob-secret]")...)
	expectTool(t, "Quota configs for user-principal 'alice' are producer_byte_rate=1024.0\n"+
		"SCRAM credential configs for user-principal 'alice' are SCRAM-SHA-256=iterations=8192, SCRAM-SHA-512=iterations=4096\n"+
		"SCRAM credential configs for user-principal 'bob' are SCRAM-SHA-512=iterations=16384\n",
		bsArgs("--describe", "--entity-type", "users")...)
	wait.For(t, 20*time.Second, "bob to authenticate", func() bool {
		return authenticates(scram.Auth{User: "bob", Pass: "bob-secret"}.AsSha512Mechanism())
	})
	// A user with neither quota nor credential: nothing to print.
	expectTool(t, "", bsArgs("--describe", "--entity-type", "users", "--entity-name", "nobody")...)
	expectTool(t, zkWarning+"Configs for user-principal 'nobody' are \n", zkArgs("--describe", "--entity-type", "users", "--entity-name", "nobody")...)

	// Deletions, one through each path.
	expectTool(t, zkWarning+"Completed updating config for entity: user-principal 'alice'.\n",
		zkArgs("--alter", "--entity-type", "users", "--entity-name", "alice", "--delete-config", "SCRAM-SHA-512")...)
	wait.For(t, 20*time.Second, "alice's SCRAM-SHA-512 credential to stop authenticating", func() bool { return !authenticates(alice512) })
	expectTool(t, "Completed updating config for user alice.\n",
		bsArgs("--alter", "--entity-type", "users", "--entity-name", "alice", "--delete-config", "SCRAM-SHA-256")...)
	expectTool(t, "Quota configs for user-principal 'alice' are producer_byte_rate=1024.0\n",
		bsArgs("--describe", "--entity-type", "users", "--entity-name", "alice")...)
	expectTool(t, zkWarning+"Configs for user-principal 'alice' are producer_byte_rate=1024\n",
		zkArgs("--describe", "--entity-type", "users", "--entity-name", "alice")...)

	// Refusals, with 2.8's messages.
	for _, tc := range []struct {
		want string
		args []string
	}{
		{"Cannot alter both quota and SCRAM credential configs simultaneously for 'users' using --bootstrap-server.\n",
			bsArgs("--alter", "--entity-type", "users", "--entity-name", "bob", "--add-config", "producer_byte_rate=1,SCRAM-SHA-256=[password=x]")},
		{"The use of --entity-default or --user-defaults is not allowed with User SCRAM Credentials using --bootstrap-server.\n",
			bsArgs("--alter", "--entity-type", "users", "--entity-default", "--add-config", "SCRAM-SHA-256=[password=x]")},
		{"Only quota configs can be added for 'clients' using --bootstrap-server. Unexpected config names: Set(SCRAM-SHA-256)\n",
			bsArgs("--alter", "--entity-type", "clients", "--entity-name", "app", "--add-config", "SCRAM-SHA-256=[password=x]")},
		{"Only quota and SCRAM credential configs can be deleted for 'users' using --bootstrap-server. Unexpected config names: ArrayBuffer(frob)\n",
			bsArgs("--alter", "--entity-type", "users", "--entity-name", "bob", "--delete-config", "frob")},
		{"Iterations 100 is less than the minimum 4096 required for SCRAM-SHA-256\n",
			bsArgs("--alter", "--entity-type", "users", "--entity-name", "bob", "--add-config", "SCRAM-SHA-256=[iterations=100,password=x]")},
		{"Iterations 100 is less than the minimum 4096 required for SCRAM_SHA_256\n",
			zkArgs("--alter", "--entity-type", "users", "--entity-name", "bob", "--add-config", "SCRAM-SHA-256=[iterations=100,password=x]")},
		{"Invalid credential property SCRAM_SHA_512=pass=x\n",
			bsArgs("--alter", "--entity-type", "users", "--entity-name", "bob", "--add-config", "SCRAM-SHA-512=[pass=x]")},
		{"Invalid config(s): SCRAM-SHA-256\n",
			zkArgs("--alter", "--entity-type", "users", "--entity-name", "bob", "--delete-config", "SCRAM-SHA-256")},
		{"requirement failed: Unknown Dynamic Configuration: Set(SCRAM-SHA-256).\n",
			zkArgs("--alter", "--entity-type", "users", "--entity-default", "--add-config", "SCRAM-SHA-256=[password=x]")},
	} {
		code, out, errOut := runTool(tc.args...)
		if code != 1 || strings.TrimPrefix(errOut, zkWarning) != tc.want {
			t.Errorf("zkafka %s: exit %d, stderr %q, want %q (stdout %q)", strings.Join(tc.args, " "), code, errOut, tc.want, out)
		}
	}
	// The broker's refusals.
	args := bsArgs("--alter", "--entity-type", "users", "--entity-name", "bob", "--add-config", "SCRAM-SHA-256=[iterations=20000,password=x]")
	expectToolError(t, "Error while executing config command with args '"+strings.Join(args[1:], " ")+"'\nToo many iterations\n", args...)
	args = bsArgs("--alter", "--entity-type", "users", "--entity-name", "bob", "--delete-config", "SCRAM-SHA-256")
	expectToolError(t, "Error while executing config command with args '"+strings.Join(args[1:], " ")+"'\nAttempt to delete a user credential that does not exist\n", args...)
}

// saslAuthenticates reports whether a client logging in with m reaches the
// SASL listener at addr.
func saslAuthenticates(addr string, m sasl.Mechanism) bool {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.SASL(m), kgo.RequestRetries(0))
	if err != nil {
		return false
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return cl.Ping(ctx) == nil
}
