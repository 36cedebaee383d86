package brokerconfig

import (
	"errors"
	"maps"
	"math"
	"strings"
	"testing"
	"time"
)

func TestConfigDefaults(t *testing.T) {
	c, err := New(map[string]string{"zookeeper.connect": "localhost:2181/kafka"})
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"broker.id", c.BrokerID, int32(-1)},
		{"zookeeper.session.timeout.ms", c.ZooKeeperSessionTimeout, 18 * time.Second},
		{"zookeeper.connection.timeout.ms", c.ZooKeeperConnectionTimeout, 18 * time.Second},
		{"log.dirs", c.LogDirs[0], "/tmp/kafka-logs"},
		{"message.max.bytes", c.MessageMaxBytes, int32(1048588)},
		{"log.segment.bytes", c.LogSegmentBytes, int64(1 << 30)},
		{"log.retention.hours", c.LogRetentionTime, 168 * time.Hour},
		{"offsets.topic.num.partitions", c.OffsetsTopicNumPartitions, int32(50)},
		{"replica.lag.time.max.ms", c.ReplicaLagTimeMax, 30 * time.Second},
		{"unclean.leader.election.enable", c.UncleanLeaderElectionEnable, false},
		{"auto.create.topics.enable", c.AutoCreateTopicsEnable, true},
		{"listeners", c.Listeners[0].String(), "PLAINTEXT://:9092"},
		{"inter.broker.listener.name", c.InterBrokerListenerName, "PLAINTEXT"},
		{"num.replica.alter.log.dirs.threads", c.NumReplicaAlterLogDirsThreads, int32(0)}, // null: one per log dir
	}
	for _, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("%s = %v, want %v", ch.name, ch.got, ch.want)
		}
	}
}

func TestConfigPrecedenceAndParsing(t *testing.T) {
	props, err := ParseProperties(strings.NewReader(`
# comment
! another comment
broker.id = 3
zookeeper.connect=localhost:2181
log.retention.hours=1
log.retention.minutes=5
listeners=PLAINTEXT://127.0.0.1:9093,\
  INTERNAL://127.0.0.1:19093
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT
inter.broker.listener.name=INTERNAL
advertised.listeners=PLAINTEXT://localhost:9093,INTERNAL://b3:19093
super.users=User:admin
made.up.key=1
`))
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(props)
	if err != nil {
		t.Fatal(err)
	}
	if c.BrokerID != 3 || c.LogRetentionTime != 5*time.Minute || len(c.Listeners) != 2 {
		t.Fatalf("parsed %+v", c)
	}
	if l, ok := c.AdvertisedListener("INTERNAL"); !ok || l.Host != "b3" || l.Port != 19093 {
		t.Fatalf("advertised INTERNAL = %+v %v", l, ok)
	}
	// super.users is the AclAuthorizer's: known, though not KafkaConfig's.
	if len(c.Unknown) != 1 || c.Unknown[0] != "made.up.key" {
		t.Fatalf("unknown keys %v", c.Unknown)
	}
}

func TestConfigErrors(t *testing.T) {
	base := func(k, v string) map[string]string {
		return map[string]string{"zookeeper.connect": "localhost:2181", k: v}
	}
	cases := []map[string]string{
		{},
		base("broker.id", "abc"),
		base("broker.id", "-5"),
		base("broker.id", "1001"),
		base("listeners", "localhost:9092"),
		base("listeners", "SSL://:9093"),
		base("listeners", "FOO://:9093"),
		base("inter.broker.listener.name", "INTERNAL"),
		base("auto.create.topics.enable", "maybe"),
		base("log.segment.bytes", "1"),
		base("max.connections", "-1"),
		base("max.connections.per.ip", "0"),
		base("max.connections.per.ip.overrides", "127.0.0.1"),
		base("max.connections.per.ip.overrides", "bad/host:5"),
		base("queued.max.request.bytes", "1000"),
		base("inter.broker.protocol.version", "3.0"),
		base("inter.broker.protocol.version", "2.9-IV0"),
		base("inter.broker.protocol.version", "latest"),
		base("num.replica.alter.log.dirs.threads", "0"),
		base("num.recovery.threads.per.data.dir", "0"),
	}
	for _, props := range cases {
		if _, err := New(props); !errors.Is(err, ErrConfig) {
			t.Errorf("New(%v) = %v, want ErrConfig", props, err)
		}
	}
	if _, err := ParseOverrides([]string{"novalue"}); !errors.Is(err, ErrConfig) {
		t.Errorf("override without '=': %v", err)
	}
}

// TestInterBrokerProtocolVersion: /feature is enabled from
// inter.broker.protocol.version 2.7-IV0 and AlterIsr from 2.7-IV2, as Kafka
// 2.8's ApiVersion orders them (2.7 alone is 2.7-IV2; the default is 2.8-IV1).
func TestInterBrokerProtocolVersion(t *testing.T) {
	for v, want := range map[string][2]bool{
		"": {true, true}, "2.8-IV1": {true, true}, "2.8": {true, true}, "2.8-IV0": {true, true},
		"2.7": {true, true}, "2.7.1": {true, true}, "2.7-IV2": {true, true}, "2.7-IV1": {true, false}, "2.7-IV0": {true, false},
		"2.6": {false, false}, "2.0-IV1": {false, false}, "1.1": {false, false}, "0.10.2-IV0": {false, false}, "0.8.2": {false, false},
	} {
		props := map[string]string{"zookeeper.connect": "localhost:2181"}
		if v != "" {
			props["inter.broker.protocol.version"] = v
		}
		c, err := New(props)
		if err != nil {
			t.Errorf("inter.broker.protocol.version=%q: %v", v, err)
			continue
		}
		if got := [2]bool{c.FeatureVersioning, c.AlterIsr}; got != want {
			t.Errorf("inter.broker.protocol.version=%q: feature versioning, AlterIsr %v, want %v", v, got, want)
		}
	}
	if _, err := New(map[string]string{"zookeeper.connect": "localhost:2181", "inter.broker.protocol.version": "2.9"}); err == nil {
		t.Error("inter.broker.protocol.version=2.9 accepted")
	}
}

// TestConnectionLimits reads the connection and memory limits as
// KafkaConfig does: 2.8's defaults, "host:count" overrides split at the last
// colon (IPv6), listener.name.<l>.max.connections known, not warned about.

func TestConnectionLimits(t *testing.T) {
	c, err := New(map[string]string{"zookeeper.connect": "localhost:2181"})
	if err != nil {
		t.Fatal(err)
	}
	if c.MaxConnections != math.MaxInt32 || c.MaxConnectionsPerIP != math.MaxInt32 || c.QueuedMaxRequestBytes != -1 ||
		len(c.MaxConnectionsPerIPOverrides) != 0 || len(c.ListenerMaxConnections) != 0 {
		t.Fatalf("defaults: %d %d %d %v %v", c.MaxConnections, c.MaxConnectionsPerIP, c.QueuedMaxRequestBytes,
			c.MaxConnectionsPerIPOverrides, c.ListenerMaxConnections)
	}
	c, err = New(map[string]string{
		"zookeeper.connect":                       "localhost:2181",
		"max.connections.per.ip":                  "0",
		"max.connections.per.ip.overrides":        "10.0.0.1:5, ::1:7,localhost:9",
		"listener.name.plaintext.max.connections": "3",
		"queued.max.request.bytes":                "104857600",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int32{"10.0.0.1": 5, "::1": 7, "localhost": 9}
	if !maps.Equal(c.MaxConnectionsPerIPOverrides, want) || c.ListenerMaxConnections["PLAINTEXT"] != 3 ||
		c.QueuedMaxRequestBytes != 104857600 || len(c.Unknown) != 0 {
		t.Fatalf("overrides %v, listener limits %v, queued %d, unknown %v",
			c.MaxConnectionsPerIPOverrides, c.ListenerMaxConnections, c.QueuedMaxRequestBytes, c.Unknown)
	}
}

func TestReaderDefaultsAndFirstError(t *testing.T) {
	p := NewReader(map[string]string{"log.cleaner.enable": "false", "group.max.size": "x", "offsets.commit.timeout.ms": "y"})
	if p.Bool("log.cleaner.enable") {
		t.Error("log.cleaner.enable: supplied false read as true")
	}
	if got := p.Ms("group.min.session.timeout.ms"); got != 6*time.Second {
		t.Errorf("group.min.session.timeout.ms = %v, want Kafka's default 6s", got)
	}
	if p.Err() != nil {
		t.Fatalf("error before any bad read: %v", p.Err())
	}
	p.Int32("group.max.size")
	p.Ms("offsets.commit.timeout.ms")
	if err := p.Err(); !errors.Is(err, ErrConfig) || err.Error() != `group.max.size="x" is not a 32-bit integer: invalid configuration` {
		t.Errorf("Err() = %v, want the first bad key's error", err)
	}
}
