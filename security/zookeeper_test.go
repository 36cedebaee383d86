package security

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestParseJaasFile(t *testing.T) {
	contexts, err := ParseJaasFile(`/* brokers */
KafkaServer {
  org.apache.kafka.common.security.plain.PlainLoginModule required
  username="admin" // the inter-broker user
  password="a;b{c}"
  user_admin="a;b{c}";
};
Client {
  org.apache.zookeeper.server.auth.DigestLoginModule required username="kafka" password="k//s";
};`)
	if err != nil {
		t.Fatal(err)
	}
	if got := contexts["KafkaServer"][0].Options["password"]; got != "a;b{c}" || len(contexts["KafkaServer"][0].Options) != 3 {
		t.Errorf("KafkaServer: %+v", contexts["KafkaServer"])
	}
	if got := contexts["Client"][0]; got.Module != DigestLoginModule || got.Options["password"] != "k//s" {
		t.Errorf("Client: %+v", got)
	}
	for _, bad := range []string{
		"Client { m required a=b; }",            // no ';' after the context
		"Client { m required a=b }; ",           // no ';' after the entry
		"Client m required a=b; };",             // no '{'
		"Client { m maybe; };",                  // bad flag
		"A { m required; }; A { m required; };", // twice
	} {
		if _, err := ParseJaasFile(bad); !errors.Is(err, ErrConfig) {
			t.Errorf("ParseJaasFile(%q): %v, want ErrConfig", bad, err)
		}
	}
}

func TestZooKeeperSASL(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	digest := write("digest.conf", `Client { org.apache.zookeeper.server.auth.DigestLoginModule required username="kafka" password="s"; };
ZkClient { org.apache.zookeeper.server.auth.DigestLoginModule required username="other" password="t"; };`)
	kerberos := write("krb.conf", `Client { com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true; };`)
	serverOnly := write("server.conf", `KafkaServer { org.apache.kafka.common.security.plain.PlainLoginModule required; };`)
	noPassword := write("nopass.conf", `Client { org.apache.zookeeper.server.auth.DigestLoginModule required username="kafka"; };`)

	login, err := ZooKeeperSASL(map[string]string{JavaLoginConfigProp: digest})
	if err != nil || login == nil || *login != (ZooKeeperLogin{Username: "kafka", Password: "s"}) {
		t.Errorf("the Client context: %+v, %v", login, err)
	}
	login, err = ZooKeeperSASL(map[string]string{JavaLoginConfigProp: digest, ZkLoginContextNameProp: "ZkClient"})
	if err != nil || login == nil || login.Username != "other" {
		t.Errorf("zookeeper.sasl.clientconfig=ZkClient: %+v, %v", login, err)
	}
	for name, props := range map[string]map[string]string{
		"no file":           {},
		"no Client context": {JavaLoginConfigProp: serverOnly},
	} {
		if login, err := ZooKeeperSASL(props); login != nil || err != nil {
			t.Errorf("%s: %+v, %v; want no login", name, login, err)
		}
	}
	for name, props := range map[string]map[string]string{
		"a missing file":              {JavaLoginConfigProp: filepath.Join(dir, "missing")},
		"Kerberos":                    {JavaLoginConfigProp: kerberos},
		"no password":                 {JavaLoginConfigProp: noPassword},
		"zookeeper.sasl.client=false": {JavaLoginConfigProp: digest, ZkSaslClientProp: "false"},
	} {
		if _, err := ZooKeeperSASL(props); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: %v, want ErrConfig", name, err)
		}
	}
}

func TestSystemProperties(t *testing.T) {
	t.Setenv("KAFKA_OPTS", "-Xmx1G -Djava.security.auth.login.config==/etc/kafka/jaas.conf  -Dzookeeper.sasl.client=true -Dflag")
	got := SystemProperties()
	if len(got) != 3 || got[JavaLoginConfigProp] != "/etc/kafka/jaas.conf" || got[ZkSaslClientProp] != "true" || got["flag"] != "" {
		t.Errorf("SystemProperties() = %v", got)
	}
}
