package security

import (
	"crypto/tls"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The Java system properties with which a Kafka 2.8 broker or tool learns
// how to authenticate to ZooKeeper (JaasUtils). Kafka's scripts pass them to
// the JVM from KAFKA_OPTS; zkafka reads them from there.
const (
	JavaLoginConfigProp     = "java.security.auth.login.config"
	ZkSaslClientProp        = "zookeeper.sasl.client"
	ZkLoginContextNameProp  = "zookeeper.sasl.clientconfig"
	defaultZkLoginContext   = "Client"
	DigestLoginModule       = "org.apache.zookeeper.server.auth.DigestLoginModule"
	kafkaOptsEnv            = "KAFKA_OPTS"
	defaultZkSaslClientProp = "true"
)

// SystemProperties are the -Dkey=value words of KAFKA_OPTS, as
// kafka-run-class.sh hands them to the JVM (split on blanks, unquoted).
func SystemProperties() map[string]string {
	props := map[string]string{}
	for _, w := range strings.Fields(os.Getenv(kafkaOptsEnv)) {
		if kv, ok := strings.CutPrefix(w, "-D"); ok {
			k, v, _ := strings.Cut(kv, "=")
			// -Djava.security.auth.login.config==file replaces the JVM's
			// other login files rather than adding to them: one file either way.
			if k == JavaLoginConfigProp {
				v = strings.TrimPrefix(v, "=")
			}
			props[k] = v
		}
	}
	return props
}

// ZooKeeperLogin is the SASL identity a ZooKeeper client authenticates with:
// ZooKeeper's DigestLoginModule, which speaks DIGEST-MD5.
type ZooKeeperLogin struct {
	Username, Password string
}

// ZkSecuritySysConfig describes the properties as JaasUtils'
// zkSecuritySysConfigString does, for error messages.
func ZkSecuritySysConfig(props map[string]string) string {
	get := func(k, def string) string {
		if v, ok := props[k]; ok {
			return v
		}
		return def
	}
	return fmt.Sprintf("[%s=%s, %s=%s, %s=%s]", JavaLoginConfigProp, get(JavaLoginConfigProp, "null"),
		ZkSaslClientProp, get(ZkSaslClientProp, "default:"+defaultZkSaslClientProp),
		ZkLoginContextNameProp, get(ZkLoginContextNameProp, "default:"+defaultZkLoginContext))
}

// ZooKeeperSASL reports, as JaasUtils.isZkSaslEnabled does, whether the
// JAAS file named by the system properties has the ZooKeeper client's login
// context ("Client" unless zookeeper.sasl.clientconfig says otherwise), and
// returns its login; nil when there is none. A context present while
// zookeeper.sasl.client is false is an error, as in Kafka.
func ZooKeeperSASL(props map[string]string) (*ZooKeeperLogin, error) {
	file := props[JavaLoginConfigProp]
	if file == "" {
		return nil, nil
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("exception while loading Zookeeper JAAS login context %s: %v: %w", ZkSecuritySysConfig(props), err, ErrConfig)
	}
	contexts, err := ParseJaasFile(string(data))
	if err != nil {
		return nil, fmt.Errorf("exception while loading Zookeeper JAAS login context %s: %s: %w", ZkSecuritySysConfig(props), err, ErrConfig)
	}
	name := defaultZkLoginContext
	if v, ok := props[ZkLoginContextNameProp]; ok {
		name = v
	}
	entries, ok := contexts[name]
	if !ok {
		return nil, nil
	}
	enabled := defaultZkSaslClientProp
	if v, ok := props[ZkSaslClientProp]; ok {
		enabled = v
	}
	if !strings.EqualFold(enabled, "true") {
		return nil, fmt.Errorf("exception while determining if ZooKeeper is secure %s: the JAAS context is there but %s is not true: %w", ZkSecuritySysConfig(props), ZkSaslClientProp, ErrConfig)
	}
	if len(entries) == 0 {
		return nil, fmt.Errorf("login context %s has no login module: %w", name, ErrConfig)
	}
	// Java's ZooKeeper client takes its credentials from the context's first module.
	if e := entries[0]; e.Module != DigestLoginModule {
		return nil, fmt.Errorf("login context %s: login module %s is not supported for ZooKeeper; use %s (SASL DIGEST-MD5): %w", name, e.Module, DigestLoginModule, ErrConfig)
	}
	login := &ZooKeeperLogin{Username: entries[0].Options["username"], Password: entries[0].Options["password"]}
	if login.Username == "" || login.Password == "" {
		return nil, fmt.Errorf("login context %s: %s needs username and password options: %w", name, DigestLoginModule, ErrConfig)
	}
	return login, nil
}

// ZooKeeperTLS is the TLS config a ZooKeeper client connects with (KIP-515),
// from Kafka's zookeeper.ssl.* configs in props: nil unless
// zookeeper.ssl.client.enable is true. Kafka requires
// zookeeper.clientCnxnSocket too (Java's client needs its Netty socket for
// TLS); the key store, when there is one, is the client's certificate,
// which ZooKeeper's x509 provider makes the session's identity. A store's
// type, when unset, follows its file name's extension as ZooKeeper's does.
// The caller sets ServerName per server.
func ZooKeeperTLS(props map[string]string) (*tls.Config, error) {
	if !strings.EqualFold(strings.TrimSpace(props["zookeeper.ssl.client.enable"]), "true") {
		return nil, nil
	}
	if props["zookeeper.clientCnxnSocket"] == "" {
		return nil, fmt.Errorf("zookeeper.ssl.client.enable is true but zookeeper.clientCnxnSocket is not set (org.apache.zookeeper.ClientCnxnSocketNetty): %w", ErrConfig)
	}
	for _, k := range []string{"zookeeper.ssl.crl.enable", "zookeeper.ssl.ocsp.enable"} {
		if strings.EqualFold(props[k], "true") {
			return nil, fmt.Errorf("%s is not supported: %w", k, ErrConfig)
		}
	}
	if s := props["zookeeper.ssl.cipher.suites"]; s != "" {
		return nil, fmt.Errorf("zookeeper.ssl.cipher.suites is not supported (Go chooses its cipher suites): %w", ErrConfig)
	}
	ssl := func(key string) string {
		v := props["zookeeper."+key]
		switch key {
		case "ssl.endpoint.identification.algorithm":
			if _, set := props["zookeeper."+key]; !set || strings.EqualFold(v, "HTTPS") {
				return "https" // Kafka's default; any other value turns ZooKeeper's host name check off
			}
			return ""
		case "ssl.keystore.type", "ssl.truststore.type":
			if v == "" {
				return storeTypeOfFile(props["zookeeper."+strings.TrimSuffix(key, ".type")+".location"])
			}
		}
		return v
	}
	cfg, err := ClientTLS(ssl)
	if err != nil {
		return nil, fmt.Errorf("ZooKeeper TLS: %w", err)
	}
	return cfg, nil
}

// ZooKeeperTLSClientAuth is Kafka's zkTlsClientAuthEnabled: TLS to ZooKeeper
// with a client certificate, which authenticates the client as SASL would.
func ZooKeeperTLSClientAuth(props map[string]string) bool {
	return strings.EqualFold(strings.TrimSpace(props["zookeeper.ssl.client.enable"]), "true") &&
		props["zookeeper.clientCnxnSocket"] != "" && props["zookeeper.ssl.keystore.location"] != ""
}

// storeTypeOfFile is ZooKeeper's KeyStoreFileType.fromFilename: JKS, PEM or
// PKCS12 by extension, JKS otherwise.
func storeTypeOfFile(path string) string {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".pem":
		return "PEM"
	case ".p12", ".pfx":
		return "PKCS12"
	}
	return "JKS"
}

// ZooKeeperSecurity is how a Kafka process reaches ZooKeeper: its SASL login,
// its TLS config, and whether the znodes it creates get secure ACLs.
type ZooKeeperSecurity struct {
	Login      *ZooKeeperLogin
	TLS        *tls.Config
	SecureACLs bool
}

// ZooKeeperClientSecurity resolves ZooKeeperSecurity as 2.8's brokers and
// tools do: the SASL login of the system properties, TLS from tlsProps
// (zookeeper.ssl.*), and secure ACLs when setACL says so or, without it,
// whenever the client is authenticated. Secure ACLs without authentication
// are refused with Kafka's message.
func ZooKeeperClientSecurity(tlsProps map[string]string, setACL *bool) (ZooKeeperSecurity, error) {
	props := SystemProperties()
	login, err := ZooKeeperSASL(props)
	if err != nil {
		return ZooKeeperSecurity{}, err
	}
	tlsCfg, err := ZooKeeperTLS(tlsProps)
	if err != nil {
		return ZooKeeperSecurity{}, err
	}
	authenticated := login != nil || ZooKeeperTLSClientAuth(tlsProps)
	secure := authenticated
	if setACL != nil {
		secure = *setACL
	}
	if secure && !authenticated {
		return ZooKeeperSecurity{}, fmt.Errorf("zookeeper.set.acl is true, but ZooKeeper client TLS configuration identifying at least zookeeper.ssl.client.enable, "+
			"zookeeper.clientCnxnSocket, and zookeeper.ssl.keystore.location was not present and the verification of the JAAS login file failed %s",
			ZkSecuritySysConfig(props))
	}
	return ZooKeeperSecurity{Login: login, TLS: tlsCfg, SecureACLs: secure}, nil
}
