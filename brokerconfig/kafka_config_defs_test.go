package brokerconfig

import (
	"bufio"
	"os"
	"slices"
	"strings"
	"testing"
)

// TestKafkaConfigDefsAreKafka282s holds the table to the golden list of the
// configs Kafka 2.8.2's KafkaConfig defines.
func TestKafkaConfigDefsAreKafka282s(t *testing.T) {
	f, err := os.Open("testdata/kafka-2.8.2-broker-configs.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var want []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" && !strings.HasPrefix(line, "#") {
			want = append(want, line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, def := range kafkaConfigDefs {
		got = append(got, def.Name)
		if def.Doc == "" {
			t.Errorf("%s has no documentation", def.Name)
		}
		if def.Null && def.Default != "" {
			t.Errorf("%s has both a null default and %q", def.Name, def.Default)
		}
	}
	slices.Sort(got)
	if len(want) != 218 || !slices.Equal(got, want) {
		t.Errorf("KafkaConfig defines %d configs, the table %d; only in the table: %v; only in 2.8.2: %v",
			len(want), len(got), missing(got, want), missing(want, got))
	}
	for _, def := range zkafkaConfigDefs {
		if slices.Contains(want, def.Name) {
			t.Errorf("zkafka's own %s is Kafka's", def.Name)
		}
	}
}

// missing lists the names of a that b lacks.
func missing(a, b []string) []string {
	var out []string
	for _, n := range a {
		if !slices.Contains(b, n) {
			out = append(out, n)
		}
	}
	return out
}

func TestBrokerConfigTypesAndDefaults(t *testing.T) {
	for _, tc := range []struct {
		name      string
		typ       Type
		def       string
		hasDef    bool
		sensitive bool
	}{
		{"log.cleaner.threads", TypeInt, "1", true, false},
		{"inter.broker.protocol.version", TypeString, "2.8-IV1", true, false},
		{"ssl.key.password", TypePassword, "", false, true},
		{"sasl.jaas.config", TypePassword, "", false, true},
		{"log.dirs", TypeString, "", false, false},
		{"listeners", TypeString, "", false, false},
		{"log.cleanup.policy", TypeList, "delete", true, false},
		{"metric.reporters", TypeList, "", true, false},
		{"authorizer.class.name", TypeString, "", true, false},
		{"log.cleaner.io.max.bytes.per.second", TypeDouble, "1.7976931348623157E308", true, false},
		{"log.cleaner.min.cleanable.ratio", TypeDouble, "0.5", true, false},
		{"offsets.topic.replication.factor", TypeShort, "3", true, false},
		{"log.flush.interval.messages", TypeLong, "9223372036854775807", true, false},
		{"log.retention.hours", TypeInt, "168", true, false},
		{"log.retention.ms", TypeLong, "", false, false},
		{"message.max.bytes", TypeInt, "1048588", true, false},
		{"listener.security.protocol.map", TypeString, "PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL", true, false},
		{"create.topic.policy.class.name", TypeClass, "", false, false},
		{"sasl.enabled.mechanisms", TypeList, "GSSAPI", true, false},
		{"zkafka.clock.skew.ms", TypeLong, "0", true, false},
		{"zkafka.pprof.listener", TypeString, "", false, false},
		// KafkaConfig.configType finds the throttles in DynamicConfig.Broker
		// and a listener override's type in its base config.
		{"leader.replication.throttled.rate", TypeLong, "", false, false},
		{"listener.name.plaintext.max.connections", TypeInt, "", false, false},
		{"my.plugin.setting", TypeUnknown, "", false, true},
	} {
		typ := BrokerConfigType(tc.name)
		def, ok := BrokerDefault(tc.name)
		sensitive := typ == TypeUnknown || typ == TypePassword
		if typ != tc.typ || def != tc.def || ok != tc.hasDef || sensitive != tc.sensitive {
			t.Errorf("%s: %v, default %q %v, sensitive %v; want %v, %q %v, %v",
				tc.name, typ, def, ok, sensitive, tc.typ, tc.def, tc.hasDef, tc.sensitive)
		}
	}
	if doc := BrokerConfigDoc("log.cleaner.threads"); doc == nil || *doc != "The number of background threads to use for log cleaning" {
		t.Errorf("log.cleaner.threads doc = %v", doc)
	}
	if doc := BrokerConfigDoc("leader.replication.throttled.rate"); doc != nil {
		t.Errorf("KafkaConfig documents leader.replication.throttled.rate: %q", *doc)
	}
}

func TestListenerOverrideSynonyms(t *testing.T) {
	for name, want := range map[string][]string{
		"listener.name.plaintext.max.connections":       {"listener.name.plaintext.max.connections", "max.connections"},
		"listener.name.sasl_ssl.plain.sasl.jaas.config": {"listener.name.sasl_ssl.plain.sasl.jaas.config", "sasl.jaas.config"},
		"listener.name.internal.ssl.keystore.location":  {"listener.name.internal.ssl.keystore.location", "ssl.keystore.location"},
		"log.retention.minutes":                         {"log.retention.ms", "log.retention.minutes", "log.retention.hours"},
		"max.connections":                               {"max.connections"},
	} {
		if got := BrokerConfigSynonyms(name); !slices.Equal(got, want) {
			t.Errorf("BrokerConfigSynonyms(%s) = %v, want %v", name, got, want)
		}
	}
}
