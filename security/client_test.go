package security

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"
)

// TestClientSecurity: what a client's properties make of a connection, with
// the Java client's defaults and messages.
func TestClientSecurity(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ca"}, IsCA: true, BasicConstraintsValid: true,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	const scram = `org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="alice-secret";`

	sec, err := ClientSecurity(map[string]string{})
	if err != nil || sec.TLS != nil || sec.SASL != nil {
		t.Errorf("no properties: %+v, %v; want PLAINTEXT", sec, err)
	}
	sec, err = ClientSecurity(map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "SCRAM-SHA-512", "sasl.jaas.config": scram})
	if err != nil || sec.TLS != nil || sec.SASL == nil || sec.SASL.Name() != "SCRAM-SHA-512" {
		t.Errorf("SASL_PLAINTEXT: %+v, %v", sec, err)
	}
	tlsProps := map[string]string{"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-256", "sasl.jaas.config": scram,
		"ssl.truststore.type": "PEM", "ssl.truststore.certificates": ca}
	sec, err = ClientSecurity(tlsProps)
	if err != nil || sec.TLS == nil || sec.TLS.InsecureSkipVerify || sec.SASL == nil || sec.SASL.Name() != "SCRAM-SHA-256" {
		t.Errorf("SASL_SSL: %+v, %v; want TLS checking the host name, as the Java client does by default", sec, err)
	}
	tlsProps["ssl.endpoint.identification.algorithm"] = ""
	if sec, err = ClientSecurity(tlsProps); err != nil || sec.TLS == nil || !sec.TLS.InsecureSkipVerify || sec.TLS.VerifyConnection == nil {
		t.Errorf("SASL_SSL without host name verification: %+v, %v; want the chain checked without the host", sec, err)
	}

	for _, tc := range []struct {
		props map[string]string
		says  string
	}{
		{map[string]string{"security.protocol": "TLS"}, "Invalid value TLS for configuration security.protocol: String must be one of: PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL"},
		{map[string]string{"security.protocol": "SASL_PLAINTEXT"}, "Could not find a 'KafkaClient' entry in the JAAS configuration."},
		{map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.jaas.config": scram}, "sasl.mechanism GSSAPI is not supported"},
	} {
		if _, err := ClientSecurity(tc.props); err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%v: %v, want %q", tc.props, err, tc.says)
		}
	}
}
