package security

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"maps"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zkafka/zkafka/internal/keytooltest"
)

func props(m map[string]string) Props { return func(key string) string { return m[key] } }

// handshake completes a TLS handshake between a listener with the server
// config and a client with the client config, and returns what each side
// saw.
func handshake(t *testing.T, server, client *tls.Config) (srv, cl tls.ConnectionState, srvErr, clErr error) {
	t.Helper()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", server)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	type result struct {
		state tls.ConnectionState
		err   error
	}
	done := make(chan result, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			done <- result{err: err}
			return
		}
		defer c.Close()
		tc := c.(*tls.Conn)
		tc.SetDeadline(time.Now().Add(10 * time.Second))
		err = tc.Handshake()
		done <- result{tc.ConnectionState(), err}
	}()
	client = client.Clone()
	client.ServerName = "localhost"
	c, clErr := tls.DialWithDialer(&net.Dialer{Timeout: 10 * time.Second}, "tcp", ln.Addr().String(), client)
	if clErr == nil {
		defer c.Close()
		cl = c.ConnectionState()
	}
	r := <-done
	return r.state, cl, r.err, clErr
}

// TestKeyStores serves TLS from JKS and PKCS12 key stores keytool made,
// checks client certificates against JKS and PKCS12 trust stores, and
// refuses bad stores and passwords with ErrConfig.
func TestKeyStores(t *testing.T) {
	ca := keytooltest.NewCA(t)
	// The JKS key has a password of its own; keytool gives the PKCS12 key
	// the store's.
	jks := ca.KeyStore("jks.jks", "JKS", "jks", "store-secret", "key-secret")
	p12 := ca.KeyStore("p12.p12", "PKCS12", "p12", "store-secret", "store-secret")
	jksTrust := ca.TrustStore("trust.jks", "JKS", "trust-secret")
	p12Trust := ca.TrustStore("trust.p12", "PKCS12", "trust-secret")

	jksKey := map[string]string{"ssl.keystore.location": jks, "ssl.keystore.password": "store-secret", "ssl.key.password": "key-secret"}
	// No type: Kafka's default JKS, under which Java reads PKCS12 too. No
	// ssl.key.password: the key opens with the store's.
	p12Key := map[string]string{"ssl.keystore.location": p12, "ssl.keystore.password": "store-secret"}
	with := func(ms ...map[string]string) Props {
		all := map[string]string{}
		for _, m := range ms {
			maps.Copy(all, m)
		}
		return props(all)
	}
	serverTLS := func(t *testing.T, p Props, clientAuth string) *tls.Config {
		t.Helper()
		cfg, err := ServerTLS(p, clientAuth)
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	clientTLS := func(t *testing.T, p Props) *tls.Config {
		t.Helper()
		cfg, err := ClientTLS(p)
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}

	for _, tc := range []struct {
		name  string
		props Props
		cn    string
	}{
		{"JKS", with(jksKey), "jks"},
		{"PKCS12 as JKS", with(p12Key), "p12"},
		{"JKS as PKCS12", with(jksKey, map[string]string{"ssl.keystore.type": "PKCS12"}), "jks"},
	} {
		t.Run("serve "+tc.name, func(t *testing.T) {
			_, cl, srvErr, clErr := handshake(t, serverTLS(t, tc.props, ClientAuthNone), &tls.Config{RootCAs: ca.Pool})
			if srvErr != nil || clErr != nil {
				t.Fatalf("handshake: server %v, client %v", srvErr, clErr)
			}
			// The key entry's chain: its certificate, then the CA's.
			if got := cl.PeerCertificates; len(got) != 2 || got[0].Subject.CommonName != tc.cn || got[1].Subject.CommonName != "zkafka-test-ca" {
				t.Fatalf("the server sent %d certificates, the first for %s", len(got), got[0].Subject)
			}
		})
	}

	// Client certificates both ways: each key store's as the client's,
	// checked against the other type's trust store; the client checks the
	// server against a JKS trust store read without its password, or a
	// PKCS12 one with it, and host names with https.
	for _, tc := range []struct {
		name                     string
		serverKey, clientKey     map[string]string
		serverTrust, clientTrust map[string]string
		client                   string
	}{
		{"JKS server, PKCS12 client", jksKey, p12Key,
			map[string]string{"ssl.truststore.location": p12Trust, "ssl.truststore.type": "PKCS12", "ssl.truststore.password": "trust-secret"},
			map[string]string{"ssl.truststore.location": jksTrust}, "p12"},
		{"PKCS12 server, JKS client", p12Key, jksKey,
			map[string]string{"ssl.truststore.location": jksTrust, "ssl.truststore.password": "trust-secret"},
			map[string]string{"ssl.truststore.location": p12Trust, "ssl.truststore.type": "pkcs12", "ssl.truststore.password": "trust-secret"}, "jks"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			server := serverTLS(t, with(tc.serverKey, tc.serverTrust), ClientAuthRequired)
			client := clientTLS(t, with(tc.clientKey, tc.clientTrust, map[string]string{"ssl.endpoint.identification.algorithm": "https"}))
			srv, _, srvErr, clErr := handshake(t, server, client)
			if srvErr != nil || clErr != nil {
				t.Fatalf("handshake: server %v, client %v", srvErr, clErr)
			}
			if got := srv.PeerCertificates; len(got) == 0 || got[0].Subject.CommonName != tc.client {
				t.Fatalf("the server saw client certificates %v", got)
			}
			// Without a certificate the server refuses the client.
			client.Certificates = nil
			if _, _, srvErr, _ = handshake(t, server, client); srvErr == nil {
				t.Fatal("a client without a certificate was served")
			}
		})
	}

	// A copy of the JKS key store with a second key pair.
	two := filepath.Join(t.TempDir(), "two.jks")
	b, err := os.ReadFile(jks)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(two, b, 0o600); err != nil {
		t.Fatal(err)
	}
	ca.Keytool("-genkeypair", "-alias", "second", "-keyalg", "EC", "-groupname", "secp256r1", "-dname", "CN=second",
		"-keystore", two, "-storepass", "store-secret", "-keypass", "key-secret")
	garbage := filepath.Join(t.TempDir(), "garbage")
	if err := os.WriteFile(garbage, []byte("not a key store"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A JKS trust store cut short, which no password checks.
	truncated := filepath.Join(t.TempDir(), "truncated.jks")
	if b, err = os.ReadFile(jksTrust); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(truncated, b[:len(b)-30], 0o600); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name  string
		props map[string]string
		want  string
	}{
		{"wrong JKS store password", map[string]string{"ssl.keystore.location": jks, "ssl.keystore.password": "wrong", "ssl.key.password": "key-secret"},
			"wrong ssl.keystore.password, or a tampered JKS store"},
		{"wrong PKCS12 store password", map[string]string{"ssl.keystore.location": p12, "ssl.keystore.type": "PKCS12", "ssl.keystore.password": "wrong"},
			"wrong ssl.keystore.password"},
		{"wrong JKS key password", map[string]string{"ssl.keystore.location": jks, "ssl.keystore.password": "store-secret", "ssl.key.password": "wrong"},
			"the key of entry jks does not open with ssl.key.password"},
		{"JKS key password unset", map[string]string{"ssl.keystore.location": jks, "ssl.keystore.password": "store-secret"},
			"the key of entry jks does not open with ssl.keystore.password (ssl.key.password is unset)"},
		{"PKCS12 key password other than the store's", map[string]string{"ssl.keystore.location": p12, "ssl.keystore.password": "store-secret", "ssl.key.password": "other"},
			"ssl.key.password differs"},
		{"no store password", map[string]string{"ssl.keystore.location": jks},
			"ssl.keystore.location is set without ssl.keystore.password"},
		{"store password without a store", map[string]string{"ssl.keystore.password": "store-secret"},
			"ssl.keystore.password is set without ssl.keystore.location"},
		{"no private key entry", map[string]string{"ssl.keystore.location": jksTrust, "ssl.keystore.password": "trust-secret"},
			"no private key entry"},
		{"several private key entries", map[string]string{"ssl.keystore.location": two, "ssl.keystore.password": "store-secret", "ssl.key.password": "key-secret"},
			"2 private key entries (jks, second)"},
		{"PEM file as JKS", map[string]string{"ssl.keystore.location": ca.PEM, "ssl.keystore.password": "x"},
			"(ssl.keystore.type JKS): a PEM file, which needs ssl.keystore.type PEM"},
		{"not a store", map[string]string{"ssl.keystore.location": garbage, "ssl.keystore.password": "x"},
			"not a JKS file; as PKCS12: pkcs12: error reading P12 data"},
		{"unsupported type", map[string]string{"ssl.keystore.location": jks, "ssl.keystore.type": "JCEKS"},
			"ssl.keystore.type JCEKS is not supported, only JKS, PKCS12 and PEM"},
		{"PEM key with type JKS", map[string]string{"ssl.keystore.key": "k", "ssl.keystore.certificate.chain": "c"},
			"ssl.keystore.key and ssl.keystore.certificate.chain need ssl.keystore.type PEM, not JKS"},
		{"missing store", map[string]string{"ssl.keystore.location": filepath.Join(t.TempDir(), "none.jks"), "ssl.keystore.password": "x"},
			"no such file or directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ServerTLS(props(tc.props), ClientAuthNone)
			if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("got %v, want a line with %q", err, tc.want)
			}
		})
	}

	for _, tc := range []struct {
		name  string
		props map[string]string
		want  string
	}{
		{"wrong JKS trust store password", map[string]string{"ssl.truststore.location": jksTrust, "ssl.truststore.password": "wrong"},
			"wrong ssl.truststore.password, or a tampered JKS store"},
		{"wrong PKCS12 trust store password", map[string]string{"ssl.truststore.location": p12Trust, "ssl.truststore.password": "wrong"},
			"wrong ssl.truststore.password"},
		{"PKCS12 trust store without its password", map[string]string{"ssl.truststore.location": p12Trust},
			"ssl.truststore.password is unset, and the store has one"},
		{"damaged JKS trust store", map[string]string{"ssl.truststore.location": truncated},
			"a damaged JKS store: read 0 entry"},
		{"trust store password without a store", map[string]string{"ssl.truststore.password": "trust-secret"},
			"ssl.truststore.password is set without ssl.truststore.location"},
		{"PEM certificates with type PKCS12", map[string]string{"ssl.truststore.certificates": "c", "ssl.truststore.type": "PKCS12"},
			"ssl.truststore.certificates needs ssl.truststore.type PEM, not PKCS12"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ClientTLS(props(tc.props))
			if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("got %v, want a line with %q", err, tc.want)
			}
		})
	}
}

// TestKeyPairChain: a key entry serves its certificate and then its
// issuers, whatever order the store gave them in, without the unrelated
// certificates it also holds.
func TestKeyPairChain(t *testing.T) {
	issue := func(cn string, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*x509.Certificate, *ecdsa.PrivateKey) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn},
			NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
		if parent == nil {
			parent, parentKey = tmpl, key
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
		if err != nil {
			t.Fatal(err)
		}
		c, err := x509.ParseCertificate(der)
		if err != nil {
			t.Fatal(err)
		}
		return c, key
	}
	root, rootKey := issue("root", nil, nil)
	inter, interKey := issue("intermediate", root, rootKey)
	leaf, leafKey := issue("leaf", inter, interKey)
	other, otherKey := issue("other", nil, nil)

	cert, err := keyPair(leafKey, []*x509.Certificate{other, root, leaf, inter})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, der := range cert.Certificate {
		c, _ := x509.ParseCertificate(der)
		got = append(got, c.Subject.CommonName)
	}
	if strings.Join(got, ",") != "leaf,intermediate,root" || cert.Leaf != leaf || cert.PrivateKey != leafKey {
		t.Fatalf("chain %v, leaf %s", got, cert.Leaf.Subject)
	}
	if _, err := keyPair(otherKey, []*x509.Certificate{root, leaf, inter}); err == nil || err.Error() != "no certificate for the private key" {
		t.Fatalf("a key without its certificate: %v", err)
	}
}
