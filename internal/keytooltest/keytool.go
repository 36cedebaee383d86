package keytooltest

import (
	"crypto/x509"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// CA is a test certificate authority whose key pair keytool keeps in a
// PKCS12 store in a test's temporary directory.
type CA struct {
	t     testing.TB
	dir   string
	store string
	// PEM is the file holding the CA's certificate.
	PEM string
	// Pool holds the CA's certificate, for Go clients and servers.
	Pool *x509.CertPool
}

const caPassword = "ca-secret"

// NewCA makes a CA.
func NewCA(t testing.TB) *CA {
	t.Helper()
	dir := t.TempDir()
	ca := &CA{t: t, dir: dir, store: filepath.Join(dir, "ca.p12"), PEM: filepath.Join(dir, "ca.pem")}
	ca.Keytool("-genkeypair", "-alias", "ca", "-keyalg", "EC", "-groupname", "secp256r1", "-dname", "CN=zkafka-test-ca",
		"-ext", "bc:c", "-validity", "2", "-keystore", ca.store, "-storepass", caPassword)
	ca.Keytool("-exportcert", "-rfc", "-alias", "ca", "-keystore", ca.store, "-storepass", caPassword, "-file", ca.PEM)
	b, err := os.ReadFile(ca.PEM)
	if err != nil {
		t.Fatal(err)
	}
	ca.Pool = x509.NewCertPool()
	if !ca.Pool.AppendCertsFromPEM(b) {
		t.Fatalf("%s holds no certificate", ca.PEM)
	}
	return ca
}

// KeyStore makes the key store file name of type storeType (JKS or
// PKCS12) as Kafka's documentation does: a key pair under alias, its
// certificate signed by the CA for 127.0.0.1 and localhost with the CA
// after it in the chain, and the CA as a trusted entry caroot. keytool
// gives a PKCS12 store's key the store's password whatever keyPassword is.
func (ca *CA) KeyStore(name, storeType, alias, storePassword, keyPassword string) string {
	ca.t.Helper()
	path := filepath.Join(ca.dir, name)
	store := []string{"-keystore", path, "-storetype", storeType, "-storepass", storePassword}
	ca.Keytool(append([]string{"-genkeypair", "-alias", alias, "-keyalg", "EC", "-groupname", "secp256r1", "-dname", "CN=" + alias,
		"-validity", "2", "-keypass", keyPassword}, store...)...)
	csr, crt := filepath.Join(ca.dir, name+".csr"), filepath.Join(ca.dir, name+".crt")
	ca.Keytool(append([]string{"-certreq", "-alias", alias, "-keypass", keyPassword, "-file", csr}, store...)...)
	ca.Keytool("-gencert", "-alias", "ca", "-keystore", ca.store, "-storepass", caPassword, "-infile", csr, "-outfile", crt,
		"-rfc", "-validity", "2", "-ext", "san=ip:127.0.0.1,dns:localhost")
	ca.Keytool(append([]string{"-importcert", "-noprompt", "-alias", "caroot", "-file", ca.PEM}, store...)...)
	ca.Keytool(append([]string{"-importcert", "-alias", alias, "-keypass", keyPassword, "-file", crt}, store...)...)
	return path
}

// TrustStore makes the trust store file name of type storeType holding
// the CA as the trusted entry caroot.
func (ca *CA) TrustStore(name, storeType, storePassword string) string {
	ca.t.Helper()
	path := filepath.Join(ca.dir, name)
	ca.Keytool("-importcert", "-noprompt", "-alias", "caroot", "-file", ca.PEM,
		"-keystore", path, "-storetype", storeType, "-storepass", storePassword)
	return path
}

// Keytool runs keytool with args, failing the test with its output when it
// fails.
func (ca *CA) Keytool(args ...string) {
	ca.t.Helper()
	// A JVM that compiles less and collects simply starts in half the time.
	cmd := exec.Command("keytool", append([]string{"-J-XX:TieredStopAtLevel=1", "-J-XX:+UseSerialGC"}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		ca.t.Fatalf("keytool %v: %v\n%s", args, err, out)
	}
}
