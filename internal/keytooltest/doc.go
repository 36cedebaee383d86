// Package keytooltest is for tests only: a CA that makes JKS and PKCS12 key
// and trust stores with the JDK's keytool, as Kafka's documentation makes
// them, so the security package and the broker read stores Java wrote.
package keytooltest
