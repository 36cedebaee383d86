package main

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkafka/zkafka/broker"
	"github.com/zkafka/zkafka/brokerconfig"
	"github.com/zkafka/zkafka/internal/keytooltest"
	"github.com/zkafka/zkafka/internal/testcluster"
	"github.com/zkafka/zkafka/internal/zkclient"
	"github.com/zkafka/zkafka/internal/zktest"
	"github.com/zkafka/zkafka/security"
)

// missingRoots is zookeeper-security-migration's warning on a cluster without an authorizer and
// delegation tokens, whose brokers made none of those roots; the tool then creates them.
const missingRoots = "Warning: The following secure root paths do not exist in ZooKeeper: /delegation_token,/kafka-acl-extended,/kafka-acl," +
	"/kafka-acl-changes,/kafka-acl-extended/prefixed,/kafka-acl-extended-changes\n" +
	"That might be due to an incorrect chroot is specified when executing the command.\n"

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
	if err := broker.NewServer(cfg, nil).Start(ctx); err == nil || !strings.Contains(err.Error(), "zookeeper.set.acl is true, but ZooKeeper client TLS configuration identifying at least") {
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
		!strings.HasPrefix(errOut, "ERROR: No JAAS configuration file has been specified and no TLS client certificate") {
		t.Errorf("the migration without a JAAS file: exit %d, %q", code, errOut)
	}

	t.Setenv("KAFKA_OPTS", login)
	if code, _, errOut := runTool("zookeeper-security-migration", "--zookeeper.acl", "maybe", "--zookeeper.connect", connect); code != 1 ||
		!strings.Contains(errOut, zkSecurityMigrationUsage) {
		t.Errorf("--zookeeper.acl maybe: exit %d, %q", code, errOut)
	}
	if code, out, errOut := runTool("zookeeper-security-migration", "--zookeeper.acl", "unsecure", "--zookeeper.connect", connect, "--enable.path.check"); code != 1 ||
		out != missingRoots+"Exit the command.\n" || errOut != "" {
		t.Errorf("--enable.path.check with roots missing: exit %d\n%s%s", code, out, errOut)
	}
	if got, _, err := inspector.ACL("/kafka/brokers/ids/1"); err != nil || !slices.Equal(got, secure) {
		t.Errorf("--enable.path.check changed an ACL: %v %v", got, err)
	}
	expectTool(t, missingRoots, "zookeeper-security-migration", "--zookeeper.acl", "unsecure", "--zookeeper.connect", connect)
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

// TestZooKeeperTLS: brokers and tools reach ZooKeeper's secure port with a client certificate
// (zookeeper.ssl.* and --zk-tls-config-file, KIP-515), which makes the secure ACLs name
// x509:<subject>; the migration tool runs with the same certificate.
func TestZooKeeperTLS(t *testing.T) {
	ca := keytooltest.NewCA(t)
	const password = "zk-secret"
	server := zktest.Start(t, zktest.Options{TLS: &zktest.TLSOptions{
		KeyStore: ca.KeyStore("zk.jks", "JKS", "zookeeper", password, password), TrustStore: ca.TrustStore("trust.jks", "JKS", password), Password: password,
	}})
	t.Setenv("KAFKA_OPTS", "")
	tlsProps := map[string]string{
		"zookeeper.ssl.client.enable": "true", "zookeeper.clientCnxnSocket": "org.apache.zookeeper.ClientCnxnSocketNetty",
		"zookeeper.ssl.keystore.location": ca.KeyStore("kafka.jks", "JKS", "kafka", password, password), "zookeeper.ssl.keystore.password": password,
		"zookeeper.ssl.truststore.location": ca.TrustStore("client-trust.p12", "PKCS12", password), "zookeeper.ssl.truststore.password": password,
	}
	zkTLS, err := security.ZooKeeperTLS(tlsProps)
	if err != nil {
		t.Fatal(err)
	}
	connect := server.SecureConnect + "/kafka"
	brokerProps := maps.Clone(tlsProps)
	brokerProps["zookeeper.set.acl"] = "true"
	c := testcluster.Start(t, testcluster.Options{ZooKeeper: connect, ZooKeeperTLS: zkTLS, Properties: brokerProps})
	c.WaitForController()

	var file strings.Builder
	for k, v := range tlsProps {
		file.WriteString(k + "=" + v + "\n")
	}
	file.WriteString("zookeeper.connect=ignored:1\n")
	tlsFile := filepath.Join(t.TempDir(), "zk-tls.properties")
	if err := os.WriteFile(tlsFile, []byte(file.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	zkWarning := "Warning: --zookeeper is deprecated and will be removed in a future version of Kafka.\nUse --bootstrap-server instead to specify a broker to connect to.\n"
	expectTool(t, zkWarning+"Completed updating config for entity: user-principal 'alice'.\n", "configs", "--zookeeper", connect, "--zk-tls-config-file", tlsFile,
		"--alter", "--entity-type", "users", "--entity-name", "alice", "--add-config", "SCRAM-SHA-512=[password=alice-secret]")

	owner := zk.ACL{Perms: zk.PermAll, Scheme: "x509", ID: "CN=kafka"}
	secure := []zk.ACL{owner, {Perms: zk.PermRead, Scheme: "world", ID: "anyone"}}
	for path, want := range map[string][]zk.ACL{"/": secure, "/brokers/ids/1": secure, "/controller": secure, "/config/users/alice": {owner}} {
		if got, _, err := c.ZooKeeper().ACL(path); err != nil || !slices.Equal(got, want) {
			t.Errorf("ACL of %s = %v, %v; want %v", path, got, err, want)
		}
	}
	if code, out, errOut := runTool("configs", "--zookeeper", server.Connect+"/kafka", "--alter", "--entity-type", "users", "--entity-name", "alice",
		"--add-config", "SCRAM-SHA-256=[password=x]"); code != 1 || !strings.Contains(errOut, "not authenticated") {
		t.Errorf("configs --alter through the plaintext port without a certificate: exit %d\n%s%s", code, out, errOut)
	}

	expectTool(t, missingRoots, "zookeeper-security-migration", "--zookeeper.acl", "unsecure", "--zookeeper.connect", connect, "--zk-tls-config-file", tlsFile)
	open := zk.WorldACL(zk.PermAll)
	for _, path := range []string{"/", "/brokers/ids/1", "/config/users/alice", "/kafka-acl"} {
		if got, _, err := c.ZooKeeper().ACL(path); err != nil || !slices.Equal(got, open) {
			t.Errorf("after unsecure: ACL of %s = %v, %v; want %v", path, got, err, open)
		}
	}
}
