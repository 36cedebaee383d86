package zkclient_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkafka/zkafka/internal/keytooltest"
	"github.com/zkafka/zkafka/internal/zkclient"
	"github.com/zkafka/zkafka/internal/zktest"
	"github.com/zkafka/zkafka/security"
)

// Over ZooKeeper's secure port a client's certificate is its identity (KIP-515): znodes created
// with secure ACLs belong to x509:<its subject>, and a client without a certificate gets no session.
func TestTLSClientCertificate(t *testing.T) {
	ca := keytooltest.NewCA(t)
	const password = "zk-secret"
	server := zktest.Start(t, zktest.Options{TLS: &zktest.TLSOptions{
		KeyStore: ca.KeyStore("zk.jks", "JKS", "zookeeper", password, password), TrustStore: ca.TrustStore("trust.jks", "JKS", password), Password: password,
	}})
	props := map[string]string{
		"zookeeper.ssl.client.enable": "true", "zookeeper.clientCnxnSocket": "org.apache.zookeeper.ClientCnxnSocketNetty",
		"zookeeper.ssl.keystore.location": ca.KeyStore("kafka.p12", "PKCS12", "kafka", password, password), "zookeeper.ssl.keystore.password": password,
		"zookeeper.ssl.truststore.location": ca.PEM,
	}
	cfg, err := security.ZooKeeperTLS(props)
	if err != nil || !security.ZooKeeperTLSClientAuth(props) {
		t.Fatalf("ZooKeeperTLS: %v, client auth %v", err, security.ZooKeeperTLSClientAuth(props))
	}
	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	defer cancel()
	c, err := zkclient.Connect(ctx, zkclient.Config{Connect: server.SecureConnect + "/kafka", TLS: cfg, SecureACLs: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.CreateIfMissing("/brokers/ids", nil); err != nil {
		t.Fatal(err)
	}
	want := []zk.ACL{{Perms: zk.PermAll, Scheme: "x509", ID: "CN=kafka"}, {Perms: zk.PermRead, Scheme: "world", ID: "anyone"}}
	if got, _, err := c.ACL("/brokers/ids"); err != nil || !slices.Equal(got, want) {
		t.Errorf("ACL of /brokers/ids = %v, %v; want %v", got, err, want)
	}
	if err := c.ForceExpire(ctx); err != nil {
		t.Errorf("ForceExpire over TLS: %v", err)
	}

	anonymous, err := zkclient.Connect(ctx, zkclient.Config{Connect: server.Connect})
	if err != nil {
		t.Fatal(err)
	}
	defer anonymous.Close()
	if _, err := anonymous.Create("/kafka/brokers/ids/1", nil, 0, nil); !errors.Is(err, zk.ErrNoAuth) {
		t.Errorf("a plaintext client's create under a TLS client's znode: %v, want %v", err, zk.ErrNoAuth)
	}

	delete(props, "zookeeper.ssl.keystore.location")
	delete(props, "zookeeper.ssl.keystore.password")
	noCert, err := security.ZooKeeperTLS(props)
	if err != nil {
		t.Fatal(err)
	}
	short, cancelShort := context.WithTimeout(ctx, 3*time.Second)
	defer cancelShort()
	if c, err := zkclient.Connect(short, zkclient.Config{Connect: server.SecureConnect, TLS: noCert}); err == nil {
		c.Close()
		t.Error("a TLS client without a certificate got a session")
	}
}
