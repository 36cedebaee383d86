// Package security holds what a Kafka 2.8 broker authenticates with, as
// org.apache.kafka.common.security does: the SASL servers for PLAIN
// (RFC 4616, users from a PlainLoginModule JAAS entry) and SCRAM-SHA-256/512
// (RFC 5802/7677, Kafka's ScramSaslServer), SCRAM credentials in the form
// /config/users/<user> stores them (ScramCredentialUtils), and TLS configs
// built from key and trust stores as DefaultSslEngineFactory reads them:
// JKS (Kafka's default type), PKCS12 or PEM (KIP-651).
//
// A Server runs one exchange: the broker feeds it the client's tokens and
// sends back its challenges. An *AuthenticationError's message is shown to
// the client as Kafka's SaslAuthenticationException is; any other error gets
// Kafka's generic "invalid credentials" message, so a client learns nothing
// about which users exist.
package security
