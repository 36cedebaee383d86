package main

import (
	"bytes"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zkafka/zkafka/brokerconfig"
)

func TestEnvKey(t *testing.T) {
	for _, tc := range []struct {
		name string
		key  string
		ok   bool
	}{
		{"KAFKA_BROKER_ID", "broker.id", true},
		{"KAFKA_ZOOKEEPER_CONNECT", "zookeeper.connect", true},
		{"KAFKA_ADVERTISED_LISTENERS", "advertised.listeners", true},
		{"KAFKA_LISTENER_SECURITY_PROTOCOL_MAP", "listener.security.protocol.map", true},
		{"KAFKA_INTER_BROKER_LISTENER_NAME", "inter.broker.listener.name", true},
		{"KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR", "offsets.topic.replication.factor", true},
		{"KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS", "group.initial.rebalance.delay.ms", true},
		// Confluent's escapes: "__" is an underscore, "___" a dash.
		{"KAFKA_LISTENER_NAME_INTERNAL_SASL__MECH", "listener.name.internal.sasl_mech", true},
		{"KAFKA_CONFLUENT_SUPPORT___METRICS_ENABLE", "confluent.support-metrics.enable", true},
		{"KAFKA_HEAP_OPTS", "", false},
		{"KAFKA_OPTS", "", false},
		{"KAFKA_JMX_PORT", "", false},
		{"KAFKA_JMX_HOSTNAME", "", false},
		{"KAFKA_LOG4J_LOGGERS", "", false},
		{"KAFKA_LOG4J_ROOT_LOGLEVEL", "", false},
		{"KAFKA_", "", false},
		{"ZKAFKA_LOG_LEVEL", "", false},
		{"PATH", "", false},
	} {
		key, ok := envKey(tc.name)
		if key != tc.key || ok != tc.ok {
			t.Errorf("envKey(%q) = %q, %v; want %q, %v", tc.name, key, ok, tc.key, tc.ok)
		}
	}
}

func TestBrokerPropertiesPrecedence(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "server.properties")
	err := os.WriteFile(file, []byte("broker.id=1\nzookeeper.connect=file:2181\nnum.partitions=2\nlog.dirs=/from/file\n"), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	environ := []string{
		"KAFKA_BROKER_ID=2",
		"KAFKA_NUM_PARTITIONS=3",
		"KAFKA_LOG_RETENTION_HOURS=", // empty: unset
		"KAFKA_HEAP_OPTS=-Xmx1G",
		"HOME=/root",
	}
	props, err := brokerProperties(file, environ, []string{"broker.id=3"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"broker.id":         "3",          // override beats env beats file
		"num.partitions":    "3",          // env beats file
		"zookeeper.connect": "file:2181",  // file only
		"log.dirs":          "/from/file", // file only
	}
	if !maps.Equal(props, want) {
		t.Errorf("properties %v, want %v", props, want)
	}
}

func TestBrokerPropertiesWithoutFile(t *testing.T) {
	environ := []string{
		"KAFKA_BROKER_ID=1",
		"KAFKA_ZOOKEEPER_CONNECT=zookeeper:2181",
		"KAFKA_LISTENER_SECURITY_PROTOCOL_MAP=INTERNAL:PLAINTEXT,EXTERNAL:PLAINTEXT",
		"KAFKA_ADVERTISED_LISTENERS=INTERNAL://kafka1:19092,EXTERNAL://localhost:9092",
		"KAFKA_INTER_BROKER_LISTENER_NAME=INTERNAL",
	}
	props, err := brokerProperties("", environ, nil)
	if err != nil {
		t.Fatal(err)
	}
	// No listeners anywhere: they are derived from the advertised ones.
	if got, want := props["listeners"], "INTERNAL://0.0.0.0:19092,EXTERNAL://0.0.0.0:9092"; got != want {
		t.Errorf("listeners %q, want %q", got, want)
	}
	cfg, err := brokerconfig.New(props)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.BrokerID != 1 || cfg.ZooKeeperConnect != "zookeeper:2181" || cfg.InterBrokerListenerName != "INTERNAL" {
		t.Errorf("config: broker.id %d, zookeeper.connect %q, inter.broker.listener.name %q",
			cfg.BrokerID, cfg.ZooKeeperConnect, cfg.InterBrokerListenerName)
	}
	if l, ok := cfg.AdvertisedListener("EXTERNAL"); !ok || l.Host != "localhost" || l.Port != 9092 {
		t.Errorf("EXTERNAL advertised as %v (%v)", l, ok)
	}
	if len(cfg.Unknown) != 0 {
		t.Errorf("unknown keys %v", cfg.Unknown)
	}

	// Explicit listeners are kept.
	props, err = brokerProperties("", append(environ, "KAFKA_LISTENERS=INTERNAL://:19092,EXTERNAL://:9092"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := props["listeners"]; got != "INTERNAL://:19092,EXTERNAL://:9092" {
		t.Errorf("listeners %q", got)
	}
	// An override of advertised.listeners is not the environment's: nothing is derived.
	props, err = brokerProperties("", environ, []string{"advertised.listeners=EXTERNAL://h:1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := props["listeners"]; ok {
		t.Errorf("listeners derived from an override: %q", props["listeners"])
	}
}

func TestBrokerPropertiesErrors(t *testing.T) {
	if _, err := brokerProperties("", []string{"KAFKA_ADVERTISED_LISTENERS=kafka1:9092"}, nil); !errors.Is(err, brokerconfig.ErrConfig) {
		t.Errorf("advertised listener without a name: %v, want ErrConfig", err)
	}
	if _, err := brokerProperties(filepath.Join(t.TempDir(), "none"), nil, nil); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

func TestBrokerCommandLineWithEnvironment(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		args []string
		code int
		want string
	}{
		// No file and no ZooKeeper in the environment: the usage.
		{nil, []string{"broker"}, 2, "KAFKA_ZOOKEEPER_CONNECT"},
		// The environment is enough to reach the config checks.
		{map[string]string{"KAFKA_ZOOKEEPER_CONNECT": "zk:2181", "KAFKA_BROKER_ID": "x"}, []string{"broker"}, 1, `broker.id="x" is not a 32-bit integer`},
		{map[string]string{"KAFKA_ZOOKEEPER_CONNECT": "zk:2181", "KAFKA_BROKER_ID": "x"}, []string{"broker", "--override", "broker.id=-2"}, 1, "broker.id -2 must be -1 or non-negative"},
		{map[string]string{"KAFKA_ZOOKEEPER_CONNECT": "zk:2181", "KAFKA_ADVERTISED_LISTENERS": "nope"}, []string{"broker"}, 2, "is not NAME://host:port"},
		{map[string]string{"KAFKA_ZOOKEEPER_CONNECT": "zk:2181"}, []string{"broker", "extra", "args"}, 2, `unexpected argument "args"`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			var stdout, stderr bytes.Buffer
			if code := run(tc.args, &stdout, &stderr); code != tc.code {
				t.Errorf("env %v zkafka %v: exit %d, want %d (stderr %q)", tc.env, tc.args, code, tc.code, stderr.String())
			}
			if !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("env %v zkafka %v: stderr %q, want it to mention %q", tc.env, tc.args, stderr.String(), tc.want)
			}
		})
	}
}
