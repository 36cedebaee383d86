package security

import (
	"fmt"
	"os"
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
	return &ZooKeeperLogin{Username: entries[0].Options["username"], Password: entries[0].Options["password"]}, nil
}
