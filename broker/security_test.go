package broker_test

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/zkafka/zkafka/internal/zktest"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/adminzk"
	"github.com/zkafka/zkafka/internal/keytooltest"
	"github.com/zkafka/zkafka/internal/testcluster"
	"github.com/zkafka/zkafka/internal/zkclient"
	"github.com/zkafka/zkafka/security"
	"github.com/zkafka/zkafka/wire"
	"github.com/zkafka/zkafka/zkpaths"
)

// testPKI is a CA with a broker certificate (for 127.0.0.1 and localhost)
// and a client certificate, in PEM.
type testPKI struct {
	caPEM, serverCert, serverKey, clientCert, clientKey string
	pool                                                *x509.CertPool
	client                                              tls.Certificate
}

func newTestPKI(t *testing.T) *testPKI {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "zkafka-test-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ = x509.ParseCertificate(caDER)
	issue := func(serial int64, subject pkix.Name, usage x509.ExtKeyUsage) (string, string) {
		key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: subject,
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
			ExtKeyUsage: []x509.ExtKeyUsage{usage}, KeyUsage: x509.KeyUsageDigitalSignature,
			IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost"}}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		kder, _ := x509.MarshalPKCS8PrivateKey(key)
		return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
			string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}))
	}
	p := &testPKI{caPEM: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})), pool: x509.NewCertPool()}
	p.pool.AddCert(ca)
	p.serverCert, p.serverKey = issue(2, pkix.Name{CommonName: "broker"}, x509.ExtKeyUsageServerAuth)
	p.clientCert, p.clientKey = issue(3, pkix.Name{CommonName: "client", Organization: []string{"zkafka"}}, x509.ExtKeyUsageClientAuth)
	p.client, err = tls.X509KeyPair([]byte(p.clientCert), []byte(p.clientKey))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// files writes the CA and the client's key and certificate for kcat.
func (p *testPKI) files(t *testing.T) (ca, cert, key string) {
	dir := t.TempDir()
	for name, s := range map[string]string{"ca.pem": p.caPEM, "client.pem": p.clientCert, "client.key": p.clientKey} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "ca.pem"), filepath.Join(dir, "client.pem"), filepath.Join(dir, "client.key")
}

const adminJaas = `org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";`

// secureProperties are a broker's listeners (PLAINTEXT for the harness,
// SASL_PLAINTEXT, SASL_SSL and SSL with required client certificates) with
// PLAIN and both SCRAMs enabled and PEM stores given inline.
func secureProperties(p *testPKI) map[string]string {
	props := map[string]string{
		"listeners":                         "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0,SSL://127.0.0.1:0",
		"sasl.enabled.mechanisms":           "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
		"ssl.keystore.type":                 "PEM",
		"ssl.keystore.key":                  p.serverKey,
		"ssl.keystore.certificate.chain":    p.serverCert,
		"ssl.truststore.type":               "PEM",
		"ssl.truststore.certificates":       p.caPEM,
		"listener.name.ssl.ssl.client.auth": "required",
	}
	for _, l := range []string{"sasl_plaintext", "sasl_ssl"} {
		props["listener.name."+l+".plain.sasl.jaas.config"] = adminJaas
	}
	return props
}

// addScramUser stores a user's SCRAM credentials in /config/users as
// kafka-configs does, with a change notification.
func addScramUser(t *testing.T, zkc *zkclient.Client, user, password string) {
	t.Helper()
	err := adminzk.New(zkc, zap.NewNop()).ChangeEntityConfig(zkpaths.EntityUsers, user, func(cfg map[string]string) (bool, error) {
		for _, m := range security.ScramMechanisms {
			cfg[m.Name] = m.NewCredential(password, 8192).String()
		}
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func mechanism(name, user, pass string) sasl.Mechanism {
	switch name {
	case "PLAIN":
		return plain.Auth{User: user, Pass: pass}.AsMechanism()
	case "SCRAM-SHA-256":
		return scram.Auth{User: user, Pass: pass}.AsSha256Mechanism()
	}
	return scram.Auth{User: user, Pass: pass}.AsSha512Mechanism()
}

// TestSASLClients authenticates franz-go, sarama and kcat (librdkafka) with
// PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 over SASL_PLAINTEXT and SASL_SSL,
// and with a client certificate over SSL; each produces a record and reads
// it back.
func TestSASLClients(t *testing.T) {
	p := newTestPKI(t)
	c := testcluster.Start(t, testcluster.Options{Properties: secureProperties(p)})
	addScramUser(t, c.ZooKeeper(), "alice", "alice-secret")
	b := c.Broker(1)
	addr := func(l string) string { a, _ := b.ListenerAddr(l); return a }
	tlsCfg := &tls.Config{RootCAs: p.pool}
	caFile, certFile, keyFile := p.files(t)

	// The credentials reach the broker through the config notification.
	c.WaitFor("alice's SCRAM credentials", func() bool {
		cl, err := wire.DialSecure(context.Background(), addr("SASL_PLAINTEXT"), "t", wire.Security{SASL: mechanism("SCRAM-SHA-512", "alice", "alice-secret")})
		if err == nil {
			cl.Close()
		}
		return err == nil
	})

	for _, listener := range []string{"SASL_PLAINTEXT", "SASL_SSL"} {
		for _, mech := range []string{"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"} {
			t.Run(listener+"/"+mech, func(t *testing.T) {
				topic := strings.ToLower(listener + "-" + mech)
				opts := []kgo.Opt{kgo.SeedBrokers(addr(listener)), kgo.SASL(mechanism(mech, "alice", "alice-secret")),
					kgo.DefaultProduceTopic(topic), kgo.AllowAutoTopicCreation()}
				if listener == "SASL_SSL" {
					opts = append(opts, kgo.DialTLSConfig(tlsCfg))
				}
				produceAndConsume(t, opts, topic, "franz-go")

				sc := sarama.NewConfig()
				sc.Version = sarama.V2_8_0_0
				sc.Producer.Return.Successes = true
				sc.Net.SASL.Enable, sc.Net.SASL.Mechanism = true, sarama.SASLMechanism(mech)
				sc.Net.SASL.User, sc.Net.SASL.Password = "alice", "alice-secret"
				sc.Net.SASL.Handshake = true
				if mech != "PLAIN" {
					sm := mechanism(mech, "alice", "alice-secret")
					sc.Net.SASL.SCRAMClientGeneratorFunc = func() sarama.SCRAMClient { return &saramaSCRAM{m: sm} }
				}
				if listener == "SASL_SSL" {
					sc.Net.TLS.Enable, sc.Net.TLS.Config = true, tlsCfg
				}
				prod, err := sarama.NewSyncProducer([]string{addr(listener)}, sc)
				if err != nil {
					t.Fatalf("sarama: %v", err)
				}
				if _, _, err := prod.SendMessage(&sarama.ProducerMessage{Topic: topic, Value: sarama.StringEncoder("sarama")}); err != nil {
					t.Fatalf("sarama produce: %v", err)
				}
				prod.Close()

				args := []string{"-b", addr(listener), "-X", "security.protocol=" + strings.ToLower(listener), "-X", "sasl.mechanisms=" + mech,
					"-X", "sasl.username=alice", "-X", "sasl.password=alice-secret"}
				if listener == "SASL_SSL" {
					args = append(args, "-X", "ssl.ca.location="+caFile)
				}
				kcat(t, "kcat\n", append(args, "-t", topic, "-P")...)
				got := kcat(t, "", append(args, "-t", topic, "-C", "-q", "-o", "beginning", "-e", "-f", "%s\n")...)
				if got != "franz-go\nsarama\nkcat\n" {
					t.Fatalf("kcat read %q", got)
				}
			})
		}
	}
	t.Run("SSL", func(t *testing.T) {
		produceAndConsume(t, []kgo.Opt{kgo.SeedBrokers(addr("SSL")), kgo.DialTLSConfig(&tls.Config{RootCAs: p.pool, Certificates: []tls.Certificate{p.client}}),
			kgo.DefaultProduceTopic("ssl"), kgo.AllowAutoTopicCreation()}, "ssl", "franz-go")
		args := []string{"-b", addr("SSL"), "-X", "security.protocol=ssl", "-X", "ssl.ca.location=" + caFile,
			"-X", "ssl.certificate.location=" + certFile, "-X", "ssl.key.location=" + keyFile}
		if out := kcat(t, "", append(args, "-t", "ssl", "-C", "-q", "-o", "beginning", "-e", "-f", "%s\n")...); out != "franz-go\n" {
			t.Fatalf("kcat read %q", out)
		}
		// Without a certificate the handshake fails: ssl.client.auth=required.
		cl, err := wire.DialSecure(context.Background(), addr("SSL"), "t", wire.Security{TLS: tlsCfg})
		if err == nil {
			_, err = cl.Request(context.Background(), kmsg.NewPtrMetadataRequest())
			cl.Close()
		}
		if err == nil {
			t.Fatal("an SSL client without a certificate was served")
		}
	})
}

// TestSSLListenerJKS: a broker serves its SSL listener from a JKS key store
// keytool made, given as Kafka's documentation gives it (no
// ssl.keystore.type: the default JKS), and franz-go produces over it.
func TestSSLListenerJKS(t *testing.T) {
	ca := keytooltest.NewCA(t)
	c := testcluster.Start(t, testcluster.Options{Properties: map[string]string{
		"listeners":             "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0",
		"ssl.keystore.location": ca.KeyStore("broker.keystore.jks", "JKS", "localhost", "store-secret", "key-secret"),
		"ssl.keystore.password": "store-secret",
		"ssl.key.password":      "key-secret",
	}})
	addr, _ := c.Broker(1).ListenerAddr("SSL")
	produceAndConsume(t, []kgo.Opt{kgo.SeedBrokers(addr), kgo.DialTLSConfig(&tls.Config{RootCAs: ca.Pool}),
		kgo.DefaultProduceTopic("jks"), kgo.AllowAutoTopicCreation()}, "jks", "over a JKS key store")
}

func produceAndConsume(t *testing.T, opts []kgo.Opt, topic, value string) {
	t.Helper()
	cl, err := kgo.NewClient(append(opts, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte(value)}).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
	fs := cl.PollRecords(ctx, 1)
	if err := fs.Err0(); err != nil {
		t.Fatalf("consume: %v", err)
	}
	if recs := fs.Records(); len(recs) != 1 || string(recs[0].Value) != value {
		t.Fatalf("consumed %v", recs)
	}
}

// saramaSCRAM is sarama's SCRAMClient over franz-go's SCRAM client, as
// sarama leaves the SCRAM implementation to the application.
type saramaSCRAM struct {
	m       sasl.Mechanism
	session sasl.Session
	first   []byte // the client-first message, sent at the first Step
	done    bool
}

func (s *saramaSCRAM) Begin(_, _, _ string) error {
	var err error
	s.session, s.first, err = s.m.Authenticate(context.Background(), "")
	return err
}

func (s *saramaSCRAM) Step(challenge string) (string, error) {
	if s.first != nil {
		msg := s.first
		s.first = nil
		return string(msg), nil
	}
	done, next, err := s.session.Challenge([]byte(challenge))
	s.done = done
	return string(next), err
}

func (s *saramaSCRAM) Done() bool { return s.done }

// rawConn sends request frames and reads response frames on a plain
// connection, to see exactly what a SASL listener serves.
type rawConn struct {
	t    *testing.T
	c    net.Conn
	corr int32
}

func (r *rawConn) send(req kmsg.Request, v int16) {
	req.SetVersion(v)
	r.corr++
	if _, err := r.c.Write(wire.AppendRequest(nil, r.corr, "raw", req)); err != nil {
		r.t.Fatal(err)
	}
}

// read returns the next response's body, or an error once the broker
// closed the connection.
func (r *rawConn) read(resp kmsg.Response) error {
	r.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	frame, err := wire.ReadFrame(bufio.NewReader(r.c), 1<<20)
	if err != nil {
		return err
	}
	body := frame[4:]
	if resp.IsFlexible() && resp.Key() != 18 {
		body = body[1:] // an empty tag buffer in the header (ApiVersions' stays v0)
	}
	return resp.ReadFrom(body)
}

// TestSASLRefusals: before authentication only ApiVersions and
// SaslHandshake are served; an unknown mechanism, a wrong password or a
// malformed token gets Kafka's error and a closed connection; a TLS
// handshake on a plaintext listener (and plaintext on a TLS one) is
// closed; the broker serves on.
func TestSASLRefusals(t *testing.T) {
	p := newTestPKI(t)
	c := testcluster.Start(t, testcluster.Options{Properties: secureProperties(p)})
	b := c.Broker(1)
	saslAddr, _ := b.ListenerAddr("SASL_PLAINTEXT")
	dial := func() *rawConn {
		conn, err := net.Dial("tcp", saslAddr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		return &rawConn{t: t, c: conn}
	}
	closed := func(r *rawConn, what string) {
		t.Helper()
		if err := r.read(kmsg.NewPtrMetadataResponse()); err == nil {
			t.Fatalf("%s: the connection was not closed", what)
		}
	}

	r := dial()
	r.send(kmsg.NewPtrMetadataRequest(), 9)
	closed(r, "Metadata before authentication")

	r = dial()
	r.send(kmsg.NewPtrApiVersionsRequest(), 3)
	avResp := kmsg.NewPtrApiVersionsResponse()
	avResp.SetVersion(3)
	if err := r.read(avResp); err != nil {
		t.Fatalf("ApiVersions before authentication: %v", err)
	}
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Mechanism = "GSSAPI"
	r.send(hs, 1)
	hsResp := kmsg.NewPtrSASLHandshakeResponse()
	hsResp.SetVersion(1)
	if err := r.read(hsResp); err != nil || hsResp.ErrorCode != kerr.UnsupportedSaslMechanism.Code ||
		strings.Join(hsResp.SupportedMechanisms, ",") != "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512" {
		t.Fatalf("GSSAPI handshake: %v %+v", err, hsResp)
	}
	closed(r, "an unknown mechanism")

	for token, msg := range map[string]string{
		"\x00alice\x00wrong": "Authentication failed: Invalid username or password",
		"\xff\xfe":           "Invalid SASL/PLAIN response: expected 3 tokens, got 1",
	} {
		r = dial()
		hs.Mechanism = "PLAIN"
		r.send(hs, 1)
		if err := r.read(hsResp); err != nil || hsResp.ErrorCode != 0 {
			t.Fatalf("PLAIN handshake: %v %+v", err, hsResp)
		}
		auth := kmsg.NewPtrSASLAuthenticateRequest()
		auth.SASLAuthBytes = []byte(token)
		r.send(auth, 2)
		authResp := kmsg.NewPtrSASLAuthenticateResponse()
		authResp.SetVersion(2)
		if err := r.read(authResp); err != nil || authResp.ErrorCode != kerr.SaslAuthenticationFailed.Code || authResp.ErrorMessage == nil || *authResp.ErrorMessage != msg {
			t.Fatalf("token %q: %v %+v", token, err, authResp)
		}
		r.send(kmsg.NewPtrMetadataRequest(), 9)
		closed(r, "after a failed authentication")
	}

	// franz-go sees SASL_AUTHENTICATION_FAILED for a wrong SCRAM password.
	addScramUser(t, c.ZooKeeper(), "alice", "alice-secret")
	cl, err := kgo.NewClient(kgo.SeedBrokers(saslAddr), kgo.SASL(mechanism("SCRAM-SHA-256", "alice", "wrong")))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := cl.Ping(ctx); !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Fatalf("wrong SCRAM password: %v", err)
	}

	// TLS on the plaintext listener, plaintext on the TLS one.
	tc, err := tls.Dial("tcp", saslAddr, &tls.Config{RootCAs: p.pool})
	if err == nil {
		tc.Close()
		t.Fatal("a TLS handshake on SASL_PLAINTEXT succeeded")
	}
	sslAddr, _ := b.ListenerAddr("SASL_SSL")
	conn, err := net.Dial("tcp", sslAddr)
	if err != nil {
		t.Fatal(err)
	}
	r = &rawConn{t: t, c: conn}
	r.send(kmsg.NewPtrApiVersionsRequest(), 3)
	closed(r, "plaintext on SASL_SSL")
	conn.Close()

	produceAndConsume(t, []kgo.Opt{kgo.SeedBrokers(saslAddr), kgo.SASL(mechanism("PLAIN", "alice", "alice-secret")),
		kgo.DefaultProduceTopic("after"), kgo.AllowAutoTopicCreation()}, "after", "still serving")
}

// TestInterBrokerSASLSSL: three brokers whose inter-broker listener is
// SASL_SSL with SCRAM-SHA-512 replicate, and the controller reaches them.
func TestInterBrokerSASLSSL(t *testing.T) {
	p := newTestPKI(t)
	chroot := zktest.NewChroot(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	zkc, err := zkclient.Connect(ctx, zkclient.Config{Connect: chroot})
	if err != nil {
		t.Fatal(err)
	}
	defer zkc.Close()
	for _, path := range zkpaths.PersistentPaths {
		if err := zkc.CreateIfMissing(path, nil); err != nil {
			t.Fatal(err)
		}
	}
	// The brokers' own user must exist before they fetch from each other.
	addScramUser(t, zkc, "broker", "broker-secret")
	props := secureProperties(p)
	props["inter.broker.listener.name"] = "SASL_SSL"
	props["sasl.mechanism.inter.broker.protocol"] = "SCRAM-SHA-512"
	props["listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config"] = `org.apache.kafka.common.security.scram.ScramLoginModule required username="broker" password="broker-secret";`
	props["ssl.endpoint.identification.algorithm"] = "https"
	props["offsets.topic.replication.factor"] = "3"
	c := testcluster.Start(t, testcluster.Options{Brokers: 3, ZooKeeper: chroot, Properties: props})
	cl := c.Client()
	adm := kmsg.NewPtrCreateTopicsRequest()
	topic := kmsg.NewCreateTopicsRequestTopic()
	topic.Topic, topic.NumPartitions, topic.ReplicationFactor = "replicated", 3, 3
	adm.Topics = append(adm.Topics, topic)
	if _, err := adm.RequestWith(ctx, cl); err != nil {
		t.Fatal(err)
	}
	for part := range int32(3) {
		c.WaitForLeader("replicated", part)
	}
	pcl := c.Client(kgo.DefaultProduceTopic("replicated"), kgo.RequiredAcks(kgo.AllISRAcks()))
	for i := range 30 {
		if err := pcl.ProduceSync(ctx, &kgo.Record{Value: []byte{byte(i)}}).FirstErr(); err != nil {
			t.Fatalf("produce: %v", err)
		}
	}
	c.WaitFor("every replica in sync", func() bool {
		for part := range int32(3) {
			st, ok := c.PartitionState("replicated", part)
			if !ok || len(st.ISR) != 3 {
				return false
			}
		}
		return true
	})
}

// TestSASLReauthentication: with connections.max.reauth.ms the broker tells
// the client its session lifetime, and franz-go re-authenticates on the same
// connections (KIP-368) and keeps producing past several lifetimes.
func TestSASLReauthentication(t *testing.T) {
	props := secureProperties(newTestPKI(t))
	props["listener.name.sasl_plaintext.connections.max.reauth.ms"] = "1000"
	c := testcluster.Start(t, testcluster.Options{Properties: props})
	addr, _ := c.Broker(1).ListenerAddr("SASL_PLAINTEXT")
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.SASL(mechanism("PLAIN", "alice", "alice-secret")),
		kgo.DefaultProduceTopic("reauth"), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := range 8 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte{byte(i)}}).FirstErr(); err != nil {
			t.Fatalf("produce %d: %v", i, err)
		}
		time.Sleep(400 * time.Millisecond)
	}
}
