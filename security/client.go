package security

import (
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/zkafka/zkafka/wire"
)

// clientDefaults are the defaults of Kafka 2.8's client configs (SslConfigs,
// SaslConfigs, CommonClientConfigs) that ClientSecurity reads: unlike a
// broker's listener, a client checks the broker's host name unless told
// not to.
var clientDefaults = map[string]string{
	"security.protocol":                     "PLAINTEXT",
	"sasl.mechanism":                        "GSSAPI",
	"ssl.keystore.type":                     "JKS",
	"ssl.truststore.type":                   "JKS",
	"ssl.endpoint.identification.algorithm": "https",
	"ssl.enabled.protocols":                 "TLSv1.2,TLSv1.3",
}

// IsClientSecurityConfig reports whether key is one of the client configs
// ClientSecurity reads, so that a tool can take them out of the properties
// it maps itself.
func IsClientSecurityConfig(key string) bool {
	return key == "security.protocol" || strings.HasPrefix(key, "sasl.") || strings.HasPrefix(key, "ssl.")
}

// ClientSecurity is how a Kafka client with these properties (a tool's
// --command-config, --producer.config or --consumer.config and its
// overrides) reaches a listener: security.protocol; for SSL and SASL_SSL
// TLS with the ssl.truststore.* and ssl.keystore.* stores (PEM) and host
// name verification unless ssl.endpoint.identification.algorithm is empty;
// for SASL_PLAINTEXT and SASL_SSL sasl.mechanism with the username and
// password of sasl.jaas.config's login module (ScramLoginModule's
// tokenauth=true authenticates with a delegation token). Other keys are
// ignored.
func ClientSecurity(props map[string]string) (wire.Security, error) {
	get := func(key string) string {
		if v, ok := props[key]; ok {
			return strings.TrimSpace(v)
		}
		return clientDefaults[key]
	}
	var sec wire.Security
	protocol := strings.ToUpper(get("security.protocol"))
	switch protocol {
	case "PLAINTEXT", "SASL_PLAINTEXT":
	case "SSL", "SASL_SSL":
		var err error
		if sec.TLS, err = ClientTLS(get); err != nil {
			return sec, err
		}
	default:
		//lint:ignore ST1005 the Java client's ConfigException, which the tools print
		return sec, fmt.Errorf("Invalid value %s for configuration security.protocol: String must be one of: PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL", get("security.protocol"))
	}
	if !strings.HasPrefix(protocol, "SASL_") {
		return sec, nil
	}
	if get("sasl.jaas.config") == "" {
		//lint:ignore ST1005 what the Java client says when neither the config nor a JAAS file has its login
		return sec, fmt.Errorf("Could not find a 'KafkaClient' entry in the JAAS configuration. System property 'java.security.auth.login.config' is not set")
	}
	entries, err := ParseJaasConfig(get("sasl.jaas.config"))
	if err != nil {
		return sec, err
	}
	o := entries[0].Options
	mech, ok := ClientMechanism(get("sasl.mechanism"), o["username"], o["password"], strings.EqualFold(o["tokenauth"], "true"))
	if !ok {
		return sec, fmt.Errorf("sasl.mechanism %s is not supported, only PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512: %w", get("sasl.mechanism"), ErrConfig)
	}
	sec.SASL = mech
	return sec, nil
}

// ClientMechanism is the client side of the SASL mechanism named, PLAIN,
// SCRAM-SHA-256 or SCRAM-SHA-512, with a user's credentials (or, for SCRAM
// with token, a delegation token's id and HMAC); ok is false for any other
// mechanism.
func ClientMechanism(name, user, password string, token bool) (m sasl.Mechanism, ok bool) {
	switch name {
	case "PLAIN":
		return plain.Auth{User: user, Pass: password}.AsMechanism(), true
	case "SCRAM-SHA-256":
		return scram.Auth{User: user, Pass: password, IsToken: token}.AsSha256Mechanism(), true
	case "SCRAM-SHA-512":
		return scram.Auth{User: user, Pass: password, IsToken: token}.AsSha512Mechanism(), true
	}
	return nil, false
}
