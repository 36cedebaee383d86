package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkafka/zkafka/broker"
	"github.com/zkafka/zkafka/brokerconfig"
	"github.com/zkafka/zkafka/internal/testcluster"
	"github.com/zkafka/zkafka/internal/zkclient"
	"github.com/zkafka/zkafka/internal/zktest"
)

// TestZooKeeperSecureACLs: brokers with zookeeper.set.acl=true, logged in to ZooKeeper with SASL
// DIGEST-MD5 from the JAAS file KAFKA_OPTS names, create Kafka's znodes readable by all and
// writable by their identity only, secrets readable by nobody else; tools given the same login
// write, tools without it are refused; zookeeper-security-migration opens and secures the tree.
func TestZooKeeperSecureACLs(t *testing.T) {
	server := zktest.Start(t, zktest.Options{SASLUsers: map[string]string{"kafka": "kafka-secret"}})
	connect := server.Connect + "/kafka"
	jaas := filepath.Join(t.TempDir(), "kafka_jaas.conf")
	if err := os.WriteFile(jaas, []byte(`// the brokers' and tools' ZooKeeper login
Client {
  org.apache.zookeeper.server.auth.DigestLoginModule required
  username="kafka"
  password="kafka-secret";
};
`), 0o600); err != nil {
		t.Fatal(err)
	}
	login := "-Djava.security.auth.login.config=" + jaas

	// zookeeper.set.acl without a login is refused before anything is written.
	t.Setenv("KAFKA_OPTS", "")
	cfg, err := brokerconfig.New(map[string]string{"broker.id": "9", "zookeeper.connect": connect, "zookeeper.set.acl": "true",
		"log.dirs": t.TempDir(), "listeners": "PLAINTEXT://127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if err := broker.NewServer(cfg, nil).Start(ctx); err == nil || !strings.Contains(err.Error(), "zookeeper.set.acl is true, but the verification of the JAAS login file failed") {
		t.Fatalf("a broker with zookeeper.set.acl and no JAAS file: %v", err)
	}

	t.Setenv("KAFKA_OPTS", "-Xmx1G "+login)
	c := testcluster.Start(t, testcluster.Options{ZooKeeper: connect, Properties: map[string]string{"zookeeper.set.acl": "true"}})
	c.WaitForController()
	expectTool(t, "Created topic t.\n", "topics", "--zookeeper", connect, "--create", "--topic", "t", "--partitions", "1", "--replication-factor", "1")
	if code, out, errOut := runTool("configs", "--zookeeper", connect, "--alter", "--entity-type", "users", "--entity-name", "alice",
		"--add-config", "SCRAM-SHA-256=[password=alice-secret]"); code != 0 {
		t.Fatalf("configs --alter users with the login: exit %d\n%s%s", code, out, errOut)
	}

	anonymous, err := zkclient.Connect(ctx, zkclient.Config{Connect: server.Connect})
	if err != nil {
		t.Fatal(err)
	}
	defer anonymous.Close()
	// ZooKeeper shows a znode's ACL only to who may read it or administer it.
	inspector, err := zkclient.Connect(ctx, zkclient.Config{Connect: server.Connect, SASL: &zkclient.SASL{Username: "kafka", Password: "kafka-secret"}})
	if err != nil {
		t.Fatal(err)
	}
	defer inspector.Close()
	owner := zk.ACL{Perms: zk.PermAll, Scheme: "sasl", ID: "kafka"}
	secure := []zk.ACL{owner, {Perms: zk.PermRead, Scheme: "world", ID: "anyone"}}
	open := zk.WorldACL(zk.PermAll)
	expectACLs := func(when string, want map[string][]zk.ACL) {
		t.Helper()
		for path, acl := range want {
			if got, _, err := inspector.ACL("/kafka" + path); err != nil || !slices.Equal(got, acl) {
				t.Errorf("%s: ACL of %s = %v, %v; want %v", when, path, got, err, acl)
			}
		}
	}
	expectACLs("secure brokers and tools", map[string][]zk.ACL{
		"": secure, "/brokers/ids/1": secure, "/controller": secure, "/controller_epoch": secure, "/cluster/id": secure,
		"/brokers/topics/t": secure, "/brokers/topics/t/partitions/0/state": secure, "/config/topics/t": secure,
		"/config/users": {owner}, "/config/users/alice": {owner}, "/consumers": open,
	})
	if _, _, err := anonymous.Get("/kafka/config/users/alice"); !errors.Is(err, zk.ErrNoAuth) {
		t.Errorf("an anonymous read of alice's credentials: %v, want %v", err, zk.ErrNoAuth)
	}

	// zkCli logs in as kafka-run-class.sh would have it: with KAFKA_OPTS.
	if code, out, errOut := runTool("zookeeper-shell", server.Connect, "getAcl", "/kafka/config/users/alice"); code != 0 ||
		!strings.Contains(out, "'sasl,'kafka\n: cdrwa") {
		t.Errorf("zookeeper-shell getAcl of a credential with the login: exit %d\n%s%s", code, out, errOut)
	}

	// A tool without the login reads what is public and cannot write.
	t.Setenv("KAFKA_OPTS", "")
	if code, out, errOut := runTool("configs", "--zookeeper", connect, "--alter", "--entity-type", "topics", "--entity-name", "t",
		"--add-config", "retention.ms=1000"); code != 1 || !strings.Contains(errOut, "not authenticated") {
		t.Errorf("configs --alter without the login: exit %d\n%s%s", code, out, errOut)
	}
	if data, _, err := anonymous.Get("/kafka/config/topics/t"); err != nil || strings.Contains(string(data), "retention.ms") {
		t.Errorf("the refused alter changed the topic's config: %s %v", data, err)
	}
	if code, _, errOut := runTool("zookeeper-security-migration", "--zookeeper.acl", "unsecure", "--zookeeper.connect", connect); code != 1 ||
		!strings.HasPrefix(errOut, "ERROR: No JAAS configuration file has been specified.") {
		t.Errorf("the migration without a JAAS file: exit %d, %q", code, errOut)
	}

	t.Setenv("KAFKA_OPTS", login)
	if code, _, errOut := runTool("zookeeper-security-migration", "--zookeeper.acl", "maybe", "--zookeeper.connect", connect); code != 1 ||
		!strings.Contains(errOut, zkSecurityMigrationUsage) {
		t.Errorf("--zookeeper.acl maybe: exit %d, %q", code, errOut)
	}
	// Without an authorizer and delegation tokens the brokers made none of their roots; the tool
	// warns, then creates them.
	missing := "Warning: The following secure root paths do not exist in ZooKeeper: /delegation_token,/kafka-acl-extended,/kafka-acl," +
		"/kafka-acl-changes,/kafka-acl-extended/prefixed,/kafka-acl-extended-changes\n" +
		"That might be due to an incorrect chroot is specified when executing the command.\n"
	expectTool(t, missing, "zookeeper-security-migration", "--zookeeper.acl", "unsecure", "--zookeeper.connect", connect)
	expectACLs("unsecure", map[string][]zk.ACL{
		"": open, "/brokers/ids/1": open, "/controller": open, "/brokers/topics/t/partitions/0/state": open,
		"/config/users/alice": open, "/kafka-acl": open,
	})
	if _, err := anonymous.Create("/kafka/admin/written-while-open", nil, 0, nil); err != nil {
		t.Fatal(err)
	}
	expectTool(t, "", "zookeeper-security-migration", "--zookeeper.acl", "secure", "--zookeeper.connect", connect)
	expectACLs("secure again", map[string][]zk.ACL{
		"": secure, "/brokers/ids/1": secure, "/controller": secure, "/brokers/topics/t/partitions/0/state": secure,
		"/config/users/alice": {owner}, "/admin/written-while-open": secure, "/kafka-acl": secure, "/consumers": open,
	})
}
