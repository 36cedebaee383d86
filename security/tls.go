package security

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strings"
)

// Props reads a security config by its key, already resolved through any
// listener prefix; "" when unset.
type Props func(key string) string

// The values of ssl.client.auth.
const (
	ClientAuthNone      = "none"
	ClientAuthRequested = "requested"
	ClientAuthRequired  = "required"
)

// ServerTLS is the TLS config of an SSL or SASL_SSL listener: its key store
// and, for clientAuth other than none, its trust store to check clients'
// certificates against.
func ServerTLS(p Props, clientAuth string) (*tls.Config, error) {
	cert, err := keyStore(p)
	if err != nil {
		return nil, err
	}
	if cert == nil {
		return nil, fmt.Errorf("ssl.keystore.location or ssl.keystore.key and ssl.keystore.certificate.chain are required on an SSL listener: %w", ErrConfig)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{*cert}}
	if cfg.MinVersion, err = minVersion(p("ssl.enabled.protocols")); err != nil {
		return nil, err
	}
	switch strings.ToLower(clientAuth) {
	case "", ClientAuthNone:
		cfg.ClientAuth = tls.NoClientCert
	case ClientAuthRequested:
		cfg.ClientAuth = tls.VerifyClientCertIfGiven
	case ClientAuthRequired:
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	default:
		return nil, fmt.Errorf("ssl.client.auth %q must be none, requested or required: %w", clientAuth, ErrConfig)
	}
	if cfg.ClientAuth != tls.NoClientCert {
		if cfg.ClientCAs, err = trustStore(p); err != nil {
			return nil, err
		}
	}
	return cfg, nil
}

// ClientTLS is the TLS config a broker connects to another broker's SSL or
// SASL_SSL listener with: the trust store (the system's roots when none is
// set), the key store for a listener that wants client certificates, and
// host name verification unless ssl.endpoint.identification.algorithm is
// empty. The caller sets ServerName per connection.
func ClientTLS(p Props) (*tls.Config, error) {
	cfg := &tls.Config{}
	var err error
	if cfg.MinVersion, err = minVersion(p("ssl.enabled.protocols")); err != nil {
		return nil, err
	}
	if cfg.RootCAs, err = trustStore(p); err != nil {
		return nil, err
	}
	cert, err := keyStore(p)
	if err != nil {
		return nil, err
	}
	if cert != nil {
		cfg.Certificates = []tls.Certificate{*cert}
	}
	if p("ssl.endpoint.identification.algorithm") == "" {
		// Kafka then checks the chain but not the host: Go can only skip
		// both, so the chain is checked here.
		roots := cfg.RootCAs
		cfg.InsecureSkipVerify = true
		cfg.VerifyConnection = func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return errors.New("the broker sent no certificate")
			}
			inter := x509.NewCertPool()
			for _, c := range cs.PeerCertificates[1:] {
				inter.AddCert(c)
			}
			_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter})
			return err
		}
	}
	return cfg, nil
}

// minVersion is the lowest of ssl.enabled.protocols.
func minVersion(protocols string) (uint16, error) {
	versions := map[string]uint16{"TLSv1.2": tls.VersionTLS12, "TLSv1.3": tls.VersionTLS13}
	var lowest uint16
	for _, name := range strings.Split(protocols, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		v, ok := versions[name]
		if !ok {
			return 0, fmt.Errorf("ssl.enabled.protocols: %s is not supported, only TLSv1.2 and TLSv1.3: %w", name, ErrConfig)
		}
		if lowest == 0 || v < lowest {
			lowest = v
		}
	}
	if lowest == 0 {
		lowest = tls.VersionTLS12
	}
	return lowest, nil
}

// keyStore reads a PEM key store (KIP-651): ssl.keystore.key with
// ssl.keystore.certificate.chain, or the file at ssl.keystore.location
// holding the key and its chain; nil when none is configured.
func keyStore(p Props) (*tls.Certificate, error) {
	key, chain, location := p("ssl.keystore.key"), p("ssl.keystore.certificate.chain"), p("ssl.keystore.location")
	if key == "" && chain == "" && location == "" {
		return nil, nil
	}
	if t := p("ssl.keystore.type"); !strings.EqualFold(t, "PEM") {
		return nil, fmt.Errorf("ssl.keystore.type %s is not supported: use PEM (KIP-651): %w", t, ErrConfig)
	}
	if location != "" {
		if key != "" || chain != "" {
			return nil, fmt.Errorf("ssl.keystore.location cannot be set with ssl.keystore.key or ssl.keystore.certificate.chain: %w", ErrConfig)
		}
		b, err := os.ReadFile(location)
		if err != nil {
			return nil, fmt.Errorf("ssl.keystore.location: %v: %w", err, ErrConfig)
		}
		key, chain = string(b), string(b)
	}
	if key == "" || chain == "" {
		return nil, fmt.Errorf("ssl.keystore.key and ssl.keystore.certificate.chain must both be set: %w", ErrConfig)
	}
	if blk, _ := pem.Decode([]byte(onlyBlocks(key, "PRIVATE KEY"))); blk != nil && blk.Type == "ENCRYPTED PRIVATE KEY" {
		return nil, fmt.Errorf("ssl.keystore.key: encrypted PEM keys are not supported: %w", ErrConfig)
	}
	cert, err := tls.X509KeyPair([]byte(onlyBlocks(chain, "CERTIFICATE")), []byte(onlyBlocks(key, "PRIVATE KEY")))
	if err != nil {
		return nil, fmt.Errorf("PEM key store: %v: %w", err, ErrConfig)
	}
	return &cert, nil
}

// trustStore reads a PEM trust store: ssl.truststore.certificates or the
// file at ssl.truststore.location; nil (the system's roots) when neither is
// set.
func trustStore(p Props) (*x509.CertPool, error) {
	certs, location := p("ssl.truststore.certificates"), p("ssl.truststore.location")
	if certs == "" && location == "" {
		return nil, nil
	}
	if t := p("ssl.truststore.type"); !strings.EqualFold(t, "PEM") {
		return nil, fmt.Errorf("ssl.truststore.type %s is not supported: use PEM (KIP-651): %w", t, ErrConfig)
	}
	if location != "" {
		b, err := os.ReadFile(location)
		if err != nil {
			return nil, fmt.Errorf("ssl.truststore.location: %v: %w", err, ErrConfig)
		}
		certs = string(b)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM([]byte(certs)) {
		return nil, fmt.Errorf("PEM trust store holds no certificate: %w", ErrConfig)
	}
	return pool, nil
}

// onlyBlocks keeps the PEM blocks whose type ends with suffix, so one file
// can hold a key and its chain.
func onlyBlocks(s, suffix string) string {
	var out []byte
	rest := []byte(s)
	for {
		var blk *pem.Block
		blk, rest = pem.Decode(rest)
		if blk == nil {
			return string(out)
		}
		if strings.HasSuffix(blk.Type, suffix) {
			out = append(out, pem.EncodeToMemory(blk)...)
		}
	}
}
