package dockertest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zkafka/zkafka/internal/testcluster"
	"github.com/zkafka/zkafka/internal/wait"
)

// TestSecureCluster runs docker-compose.secure.yml on the offline images:
// the brokers turn healthy, which takes their healthcheck's admin login on
// the SASL_SSL listener; the tools service logs in as admin with the
// secure volume's client config; from the host, with the CA of that volume,
// kcat and the tools reach the EXTERNAL listener by name (localhost), alice
// is refused a topic until an ACL lets her, her acks=all writes replicate
// over the brokers' own SASL_SSL listener, and a wrong password is refused.
func TestSecureCluster(t *testing.T) {
	t.Parallel()
	p := NewProject(t, Secure, sessionTimeout)
	p.Up("kafka1", "kafka2", "kafka3")
	h := newHost(t, p, 1)
	h.waitRegistered("1", "2", "3")

	out := p.MustCompose(2*time.Minute, "run", "--rm", "-T", "tools", "topics", "--bootstrap-server", "kafka1:19092",
		"--command-config", "/secure/admin.properties", "--create", "--topic", "secured", "--replica-assignment", "1:2:3")
	if !strings.Contains(out, "Created topic secured.") {
		t.Fatalf("topics --create as admin in the tools container:\n%s", out)
	}
	h.waitZooKeeperISR("secured", 0, 3) // the host has no plaintext listener to ask for metadata

	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	pem := MustDocker(t, time.Minute, "run", "--rm", "-v", p.Volume("secure")+":/secure", "--entrypoint", "cat", "zkafka-zookeeper:offline", "/secure/ca.pem")
	login := func(user, password string) string {
		f := filepath.Join(dir, user+".properties")
		props := fmt.Sprintf("security.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-256\nssl.truststore.type=PEM\nssl.truststore.location=%s\n"+
			"sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username=\"%s\" password=\"%s\";\n", ca, user, password)
		if err := os.WriteFile(f, []byte(props), 0o600); err != nil {
			t.Fatal(err)
		}
		return f
	}
	if err := os.WriteFile(ca, []byte(pem), 0o600); err != nil {
		t.Fatal(err)
	}
	admin, alice, wrong := login("admin", "admin-secret"), login("alice", "alice-secret"), login("mallory", "guess")

	md := h.mustCommand(time.Minute, "kcat", "-b", h.seed(1), "-L", "-X", "security.protocol=SASL_SSL", "-X", "sasl.mechanisms=SCRAM-SHA-256",
		"-X", "sasl.username=admin", "-X", "sasl.password=admin-secret", "-X", "ssl.ca.location="+ca)
	for id := int32(1); id <= 3; id++ {
		if want := fmt.Sprintf("broker %d at %s", id, h.seed(id)); !strings.Contains(md, want) {
			t.Errorf("kcat -L as admin from the host lacks %q:\n%s", want, md)
		}
	}

	zkafka := testcluster.Binary(t)
	bootstrap := strings.Join(h.seeds(), ",")
	produce := fmt.Sprintf("printf 'to-alice\\n' | %s console-producer --bootstrap-server %s --producer.config %s --topic secured --request-required-acks all",
		zkafka, bootstrap, alice)
	if out, err := h.command(time.Minute, "sh", "-c", produce); err == nil || !strings.Contains(out, "TOPIC_AUTHORIZATION_FAILED") {
		t.Errorf("alice producing without an ACL: %v\n%s", err, out)
	}
	h.mustCommand(time.Minute, zkafka, "acls", "--bootstrap-server", bootstrap, "--command-config", admin, "--add",
		"--allow-principal", "User:alice", "--producer", "--consumer", "--topic", "secured", "--group", "alice-readers")
	// Each broker learns the ACL from its change notification.
	wait.For(t, time.Minute, "alice to produce with her ACL", func() bool {
		_, err := h.command(time.Minute, "sh", "-c", produce)
		return err == nil
	})
	got := h.mustCommand(time.Minute, zkafka, "console-consumer", "--bootstrap-server", bootstrap, "--consumer.config", alice,
		"--topic", "secured", "--group", "alice-readers", "--from-beginning", "--max-messages", "1")
	if !strings.Contains(got, "to-alice") {
		t.Errorf("alice consuming with her ACL:\n%s", got)
	}

	out, err := h.command(time.Minute, zkafka, "topics", "--bootstrap-server", bootstrap, "--command-config", wrong, "--list")
	if want := "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-256"; err == nil || !strings.Contains(out, want) {
		t.Errorf("a wrong password: %v\n%s\nwant %q", err, out, want)
	}
}
