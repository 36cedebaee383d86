#!/usr/bin/env bash
# The files of the secure teaching cluster, made with openssl: a CA, a certificate per broker and the
# clients' configs. ./scripts/cluster.sh up --secure runs it once into ./data/secure;
# docker-compose.secure.yml runs it once into its "secure" volume.
#
#   ./scripts/secure-files.sh DIR HOSTS USER:PASSWORD...
#
# writes (or overwrites) into DIR:
#   ca.key, ca.pem         the cluster's CA; every broker and client trusts ca.pem (ssl.truststore.location)
#   broker-N.pem           broker N's key and certificate, signed by the CA (ssl.keystore.location), for
#                          N = 1..3; each names localhost and 127.0.0.1, and the host name HOSTS makes of N
#                          when HOSTS is not empty (kafka%d: kafka1, kafka2, kafka3)
#   USER.properties        a Java client config for each user, logging in with SCRAM-SHA-256 over SASL_SSL
#                          (the tools' --command-config, --producer.config, --consumer.config)
#   USER.kcat.conf         the same login for kcat -F (librdkafka's names)
#
# ca.pem comes last, so a DIR with ca.pem is complete. The configs name the files by their path in
# DIR, so DIR must be where the clients will find it. The users themselves are SCRAM credentials in
# ZooKeeper, which kafka-configs.sh makes; this script only writes files.
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[ $# -ge 2 ] || die "usage: $0 DIR HOSTS USER:PASSWORD..."
DIR=$1 HOSTS=$2
shift 2
case $DIR in /*) ;; *) DIR=$PWD/$DIR ;; esac
command -v openssl >/dev/null || die "openssl is not installed"
mkdir -p "$DIR"
umask 077

# Ten years: a teaching cluster's data directory should not stop working in the middle of a course.
DAYS=3650

# quietly runs openssl, showing its chatter only when it fails.
quietly() {
	local out
	out=$("$@" 2>&1) || die "$*: $out"
}

quietly openssl req -x509 -newkey rsa:2048 -nodes -days "$DAYS" -subj "/CN=zkafka teaching CA" \
	-keyout "$DIR/ca.key" -out "$DIR/ca.tmp.pem" \
	-addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign"

for n in 1 2 3; do
	names="DNS:localhost,IP:127.0.0.1"
	if [ -n "$HOSTS" ]; then
		# shellcheck disable=SC2059 # HOSTS is the format
		names="DNS:$(printf "$HOSTS" "$n"),$names"
	fi
	quietly openssl req -newkey rsa:2048 -nodes -subj "/CN=broker-$n" \
		-keyout "$DIR/broker-$n.key" -out "$DIR/broker-$n.csr"
	# The broker also presents this certificate as a client when ssl.client.auth asks for one.
	quietly openssl x509 -req -in "$DIR/broker-$n.csr" -CA "$DIR/ca.tmp.pem" -CAkey "$DIR/ca.key" \
		-set_serial "$((1000 + n))" -days "$DAYS" -out "$DIR/broker-$n.crt" \
		-extfile <(printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth,clientAuth\n' "$names")
	# A PEM key store is one file with the private key and its certificate chain.
	cat "$DIR/broker-$n.key" "$DIR/broker-$n.crt" >"$DIR/broker-$n.pem"
	rm -f "$DIR/broker-$n.key" "$DIR/broker-$n.csr" "$DIR/broker-$n.crt"
done

for login in "$@"; do
	user=${login%%:*} password=${login#*:}
	cat >"$DIR/$user.properties" <<-PROPS
		# $user's login to the secure teaching cluster: SCRAM-SHA-256 over SASL_SSL, trusting its CA.
		security.protocol=SASL_SSL
		sasl.mechanism=SCRAM-SHA-256
		sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="$user" password="$password";
		ssl.truststore.type=PEM
		ssl.truststore.location=$DIR/ca.pem
	PROPS
	cat >"$DIR/$user.kcat.conf" <<-CONF
		# $user's login to the secure teaching cluster, for kcat -F (librdkafka's property names).
		security.protocol=SASL_SSL
		sasl.mechanisms=SCRAM-SHA-256
		sasl.username=$user
		sasl.password=$password
		ssl.ca.location=$DIR/ca.pem
	CONF
done

mv "$DIR/ca.tmp.pem" "$DIR/ca.pem"
