package security

import (
	"bytes"
	"crypto"
	"crypto/sha1"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"unicode/utf16"

	"github.com/pavlo-v-chernykh/keystore-go/v4"
	"software.sslmate.com/src/go-pkcs12"
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

// keyStore reads the key store, nil when none is configured: a JKS or
// PKCS12 file at ssl.keystore.location (ssl.keystore.type JKS, Kafka's
// default, or PKCS12), or PEM (KIP-651): ssl.keystore.key with
// ssl.keystore.certificate.chain, or a file holding the key and its chain.
func keyStore(p Props) (*tls.Certificate, error) {
	key, chain, location := p("ssl.keystore.key"), p("ssl.keystore.certificate.chain"), p("ssl.keystore.location")
	password := p("ssl.keystore.password")
	if key == "" && chain == "" && location == "" {
		if password != "" {
			return nil, fmt.Errorf("ssl.keystore.password is set without ssl.keystore.location: %w", ErrConfig)
		}
		return nil, nil
	}
	typ, err := storeType("ssl.keystore.type", p("ssl.keystore.type"))
	if err != nil {
		return nil, err
	}
	if typ != "PEM" {
		if key != "" || chain != "" {
			return nil, fmt.Errorf("ssl.keystore.key and ssl.keystore.certificate.chain need ssl.keystore.type PEM, not %s: %w", typ, ErrConfig)
		}
		if password == "" {
			return nil, fmt.Errorf("ssl.keystore.location is set without ssl.keystore.password: %w", ErrConfig)
		}
		cert, err := keyStoreFile(location, password, p("ssl.key.password"))
		if err != nil {
			return nil, fmt.Errorf("ssl.keystore.location %s (ssl.keystore.type %s): %v: %w", location, typ, err, ErrConfig)
		}
		return cert, nil
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

// trustStore reads the trust store, nil (the system's roots) when none is
// configured: a JKS or PKCS12 file at ssl.truststore.location, or PEM
// certificates in ssl.truststore.certificates or a file.
func trustStore(p Props) (*x509.CertPool, error) {
	certs, location, password := p("ssl.truststore.certificates"), p("ssl.truststore.location"), p("ssl.truststore.password")
	if certs == "" && location == "" {
		if password != "" {
			return nil, fmt.Errorf("ssl.truststore.password is set without ssl.truststore.location: %w", ErrConfig)
		}
		return nil, nil
	}
	typ, err := storeType("ssl.truststore.type", p("ssl.truststore.type"))
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if typ != "PEM" {
		if certs != "" {
			return nil, fmt.Errorf("ssl.truststore.certificates needs ssl.truststore.type PEM, not %s: %w", typ, ErrConfig)
		}
		trusted, err := trustStoreFile(location, password)
		if err != nil {
			return nil, fmt.Errorf("ssl.truststore.location %s (ssl.truststore.type %s): %v: %w", location, typ, err, ErrConfig)
		}
		for _, c := range trusted {
			pool.AddCert(c)
		}
		return pool, nil
	}
	if location != "" {
		b, err := os.ReadFile(location)
		if err != nil {
			return nil, fmt.Errorf("ssl.truststore.location: %v: %w", err, ErrConfig)
		}
		certs = string(b)
	}
	if !pool.AppendCertsFromPEM([]byte(certs)) {
		return nil, fmt.Errorf("PEM trust store holds no certificate: %w", ErrConfig)
	}
	return pool, nil
}

// storeType is ssl.keystore.type or ssl.truststore.type in upper case;
// unset, it is JKS, Kafka's default.
func storeType(key, value string) (string, error) {
	switch t := strings.ToUpper(value); t {
	case "":
		return "JKS", nil
	case "JKS", "PKCS12", "PEM":
		return t, nil
	}
	return "", fmt.Errorf("%s %s is not supported, only JKS, PKCS12 and PEM: %w", key, value, ErrConfig)
}

// jksMagic begins every JKS file. Whatever else ssl.*store.location holds is
// read as PKCS12: Java 9 and later load both formats under either type
// (keystore.type.compat), so Kafka takes the PKCS12 file keytool now makes
// by default with the default type JKS.
const jksMagic = "\xfe\xed\xfe\xed"

// keyStoreFile reads the private key entry of a JKS or PKCS12 key store
// file. It must hold exactly one: with several, Java's key manager picks
// per handshake by key type and the issuers the peer accepts, from the
// store's unordered aliases; Kafka has no setting to name one, so such a
// store is refused rather than served by a guess.
func keyStoreFile(location, password, keyPassword string) (*tls.Certificate, error) {
	b, err := os.ReadFile(location)
	if err != nil {
		return nil, err
	}
	if !strings.HasPrefix(string(b), jksMagic) {
		// go-pkcs12 decrypts the key with the store's password, which
		// keytool also gives a PKCS12 store's key.
		if keyPassword != "" && keyPassword != password {
			return nil, errors.New("a PKCS12 key store's key is read with ssl.keystore.password, and ssl.key.password differs")
		}
		key, leaf, rest, err := pkcs12.DecodeChain(b, password)
		if errors.Is(err, pkcs12.ErrIncorrectPassword) {
			return nil, errors.New("wrong ssl.keystore.password")
		}
		if err != nil {
			return nil, notPKCS12(b, "ssl.keystore.type", err)
		}
		return keyPair(key, append([]*x509.Certificate{leaf}, rest...))
	}
	ks, err := loadJKS(b, password, "ssl.keystore.password")
	if err != nil {
		return nil, err
	}
	var aliases []string
	for _, a := range ks.Aliases() {
		if ks.IsPrivateKeyEntry(a) {
			aliases = append(aliases, a)
		}
	}
	switch len(aliases) {
	case 0:
		return nil, errors.New("no private key entry")
	case 1:
	default:
		return nil, fmt.Errorf("%d private key entries (%s), and Kafka has no setting to choose one", len(aliases), strings.Join(aliases, ", "))
	}
	passwordKey := "ssl.key.password"
	if keyPassword == "" {
		// Java reads the key with the store's password then.
		keyPassword, passwordKey = password, "ssl.keystore.password (ssl.key.password is unset)"
	}
	entry, err := ks.GetPrivateKeyEntry(aliases[0], []byte(keyPassword))
	if err != nil {
		return nil, fmt.Errorf("the key of entry %s does not open with %s", aliases[0], passwordKey)
	}
	key, err := x509.ParsePKCS8PrivateKey(entry.PrivateKey)
	if err != nil {
		return nil, fmt.Errorf("entry %s: %v", aliases[0], err)
	}
	chain := make([]*x509.Certificate, len(entry.CertificateChain))
	for i, c := range entry.CertificateChain {
		if chain[i], err = x509.ParseCertificate(c.Content); err != nil {
			return nil, fmt.Errorf("entry %s: %v", aliases[0], err)
		}
	}
	return keyPair(key, chain)
}

// keyPair is the certificate a key entry serves: the one holding the key's
// public key, then its issuers among certs in turn. A JKS entry's chain comes
// in that order; go-pkcs12 gives a PKCS12 store's certificates in the file's
// order, any trusted certificate entries among them.
func keyPair(key any, certs []*x509.Certificate) (*tls.Certificate, error) {
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("unsupported private key %T", key)
	}
	pub, ok := signer.Public().(interface{ Equal(crypto.PublicKey) bool })
	if !ok {
		return nil, fmt.Errorf("unsupported public key %T", signer.Public())
	}
	i := slices.IndexFunc(certs, func(c *x509.Certificate) bool { return pub.Equal(c.PublicKey) })
	if i < 0 {
		return nil, errors.New("no certificate for the private key")
	}
	chain := []*x509.Certificate{certs[i]}
	for c := certs[i]; !bytes.Equal(c.RawIssuer, c.RawSubject); {
		j := slices.IndexFunc(certs, func(x *x509.Certificate) bool {
			return bytes.Equal(x.RawSubject, c.RawIssuer) && !slices.Contains(chain, x)
		})
		if j < 0 {
			break
		}
		c = certs[j]
		chain = append(chain, c)
	}
	cert := &tls.Certificate{PrivateKey: key, Leaf: chain[0]}
	for _, c := range chain {
		cert.Certificate = append(cert.Certificate, c.Raw)
	}
	return cert, nil
}

// trustStoreFile reads the certificates a JKS or PKCS12 trust store file
// trusts: its trusted certificate entries and, in a JKS store, the
// certificate of each private key entry, as Java's trust manager takes them
// (go-pkcs12 refuses a PKCS12 trust store with keys). Without a password a
// JKS store is read unchecked, as Java reads it; a PKCS12 store that has
// one needs it (Java would skip its encrypted certificates, and trust
// nothing).
func trustStoreFile(location, password string) ([]*x509.Certificate, error) {
	b, err := os.ReadFile(location)
	if err != nil {
		return nil, err
	}
	var trusted []*x509.Certificate
	if !strings.HasPrefix(string(b), jksMagic) {
		trusted, err = pkcs12.DecodeTrustStore(b, password)
		if errors.Is(err, pkcs12.ErrIncorrectPassword) {
			if password == "" {
				return nil, errors.New("ssl.truststore.password is unset, and the store has one")
			}
			return nil, errors.New("wrong ssl.truststore.password")
		}
		if err != nil {
			return nil, notPKCS12(b, "ssl.truststore.type", err)
		}
	} else {
		ks, err := loadJKS(b, password, "ssl.truststore.password")
		if err != nil {
			return nil, err
		}
		for _, a := range ks.Aliases() {
			e, err := ks.GetTrustedCertificateEntry(a)
			der := e.Certificate.Content
			if err != nil {
				// A private key entry: Java trusts its certificate.
				chain, _ := ks.GetPrivateKeyEntryCertificateChain(a)
				if len(chain) == 0 {
					continue
				}
				der = chain[0].Content
			}
			c, err := x509.ParseCertificate(der)
			if err != nil {
				return nil, fmt.Errorf("entry %s: %v", a, err)
			}
			trusted = append(trusted, c)
		}
	}
	if len(trusted) == 0 {
		return nil, errors.New("no certificate")
	}
	return trusted, nil
}

// notPKCS12 says why a store file that is not JKS did not read as PKCS12:
// a PEM file rather than a store, or go-pkcs12's reason.
func notPKCS12(b []byte, typeKey string, err error) error {
	if blk, _ := pem.Decode(b); blk != nil {
		return fmt.Errorf("a PEM file, which needs %s PEM", typeKey)
	}
	return fmt.Errorf("not a JKS file; as PKCS12: %v", err)
}

// loadJKS reads a JKS file, checking its integrity with password (the
// value of passwordKey); without one the check is skipped, as Java skips
// it. keystore-go cannot skip it, so the digest it checks is the one an
// empty password gives, the file's own having been checked here.
func loadJKS(b []byte, password, passwordKey string) (keystore.KeyStore, error) {
	ks := keystore.New(keystore.WithOrderedAliases())
	if len(b) < len(jksMagic)+sha1.Size {
		return ks, errors.New("a truncated JKS store")
	}
	body, digest := b[:len(b)-sha1.Size], b[len(b)-sha1.Size:]
	if password != "" && !bytes.Equal(digest, jksDigest(body, password)) {
		return ks, fmt.Errorf("wrong %s, or a tampered JKS store", passwordKey)
	}
	if err := ks.Load(bytes.NewReader(append(slices.Clip(body), jksDigest(body, "")...)), nil); err != nil {
		return ks, fmt.Errorf("a damaged JKS store: %v", err)
	}
	return ks, nil
}

// jksDigest is a JKS file's integrity check: SHA-1 over the password in
// UTF-16BE, the words "Mighty Aphrodite" and the entries.
func jksDigest(body []byte, password string) []byte {
	h := sha1.New()
	for _, u := range utf16.Encode([]rune(password)) {
		h.Write([]byte{byte(u >> 8), byte(u)})
	}
	h.Write([]byte("Mighty Aphrodite"))
	h.Write(body)
	return h.Sum(nil)
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
