package broker_test

import (
	"bufio"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/internal/testcluster"
)

// kafka282BrokerConfigs are the configs Kafka 2.8.2's KafkaConfig defines,
// from brokerconfig's golden list.
func kafka282BrokerConfigs(t *testing.T) []string {
	t.Helper()
	f, err := os.Open("../brokerconfig/testdata/kafka-2.8.2-broker-configs.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var names []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" && !strings.HasPrefix(line, "#") {
			names = append(names, line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return names
}

// TestDescribeBrokerConfigsAsKafka28 describes a broker as `kafka-configs
// --describe --all` does and finds every config Kafka 2.8.2 defines, with
// 2.8's types, defaults, sensitivity and synonyms.
func TestDescribeBrokerConfigsAsKafka28(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Properties: map[string]string{"log.cleaner.min.cleanable.ratio": " 0.50"}})
	err := alterErr(adminOf(c).AlterBrokerConfigs(ctxT(t, 10*time.Second), []kadm.AlterConfig{
		{Op: kadm.SetConfig, Name: "leader.replication.throttled.rate", Value: kadm.StringPtr("1000")},
	}, 1))
	if err != nil {
		t.Fatal(err)
	}
	var configs map[string]kmsg.DescribeConfigsResponseResourceConfig
	c.WaitFor("the throttle to reach broker 1's dynamic config", func() bool {
		res := describeRaw(t, c.Addr(1), kmsg.ConfigResourceTypeBroker, "1")
		configs = map[string]kmsg.DescribeConfigsResponseResourceConfig{}
		for _, e := range res.Configs {
			configs[e.Name] = e
		}
		_, ok := configs["leader.replication.throttled.rate"]
		return res.ErrorCode == 0 && ok
	})
	for _, name := range kafka282BrokerConfigs(t) {
		if _, ok := configs[name]; !ok {
			t.Errorf("%s not described", name)
		}
	}

	str := kmsg.StringPtr
	for _, tc := range []struct {
		name      string
		typ       kmsg.ConfigType
		value     *string
		source    kmsg.ConfigSource
		sensitive bool
		readOnly  bool
		synonyms  []synonym
	}{
		{"log.cleaner.threads", kmsg.ConfigTypeInt, str("1"), kmsg.ConfigSourceDefaultConfig, false, false,
			[]synonym{{kmsg.ConfigSourceDefaultConfig, "log.cleaner.threads", str("1")}}},
		{"inter.broker.protocol.version", kmsg.ConfigTypeString, str("2.8-IV1"), kmsg.ConfigSourceDefaultConfig, false, true,
			[]synonym{{kmsg.ConfigSourceDefaultConfig, "inter.broker.protocol.version", str("2.8-IV1")}}},
		{"ssl.key.password", kmsg.ConfigTypePassword, nil, kmsg.ConfigSourceDefaultConfig, true, true, nil},
		{"authorizer.class.name", kmsg.ConfigTypeString, str(""), kmsg.ConfigSourceDefaultConfig, false, true,
			[]synonym{{kmsg.ConfigSourceDefaultConfig, "authorizer.class.name", str("")}}},
		{"log.retention.ms", kmsg.ConfigTypeLong, nil, kmsg.ConfigSourceDefaultConfig, false, false, nil},
		{"log.retention.hours", kmsg.ConfigTypeInt, str("168"), kmsg.ConfigSourceDefaultConfig, false, true,
			[]synonym{{kmsg.ConfigSourceDefaultConfig, "log.retention.hours", str("168")}}},
		{"log.cleaner.min.cleanable.ratio", kmsg.ConfigTypeDouble, str("0.5"), kmsg.ConfigSourceStaticBrokerConfig, false, false,
			[]synonym{{kmsg.ConfigSourceStaticBrokerConfig, "log.cleaner.min.cleanable.ratio", str(" 0.50")},
				{kmsg.ConfigSourceDefaultConfig, "log.cleaner.min.cleanable.ratio", str("0.5")}}},
		{"offsets.topic.replication.factor", kmsg.ConfigTypeShort, str("1"), kmsg.ConfigSourceStaticBrokerConfig, false, true,
			[]synonym{{kmsg.ConfigSourceStaticBrokerConfig, "offsets.topic.replication.factor", str("1")},
				{kmsg.ConfigSourceDefaultConfig, "offsets.topic.replication.factor", str("3")}}},
		{"leader.replication.throttled.rate", kmsg.ConfigTypeLong, str("1000"), kmsg.ConfigSourceDynamicBrokerConfig, false, true,
			[]synonym{{kmsg.ConfigSourceDynamicBrokerConfig, "leader.replication.throttled.rate", str("1000")}}},
	} {
		e, ok := configs[tc.name]
		if !ok {
			continue // reported above
		}
		var got []synonym
		for _, s := range e.ConfigSynonyms {
			got = append(got, synonym{s.Source, s.Name, s.Value})
		}
		sameSynonyms := slices.EqualFunc(got, tc.synonyms, func(a, b synonym) bool {
			return a.source == b.source && a.name == b.name && (a.value == nil) == (b.value == nil) && (a.value == nil || *a.value == *b.value)
		})
		if e.ConfigType != tc.typ || (e.Value == nil) != (tc.value == nil) || (e.Value != nil && *e.Value != *tc.value) ||
			e.Source != tc.source || e.IsSensitive != tc.sensitive || e.ReadOnly != tc.readOnly || !sameSynonyms {
			t.Errorf("%s = %v %v from %v, sensitive %v, read-only %v, synonyms %v; want %v %v from %v, %v, %v, %v",
				tc.name, e.ConfigType, javaStr(e.Value), e.Source, e.IsSensitive, e.ReadOnly, got,
				tc.typ, javaStr(tc.value), tc.source, tc.sensitive, tc.readOnly, tc.synonyms)
		}
	}
	if doc := configs["log.cleaner.threads"].Documentation; doc == nil || *doc != "The number of background threads to use for log cleaning" {
		t.Errorf("log.cleaner.threads documentation = %v", javaStr(doc))
	}
	if doc := configs["leader.replication.throttled.rate"].Documentation; doc != nil {
		t.Errorf("leader.replication.throttled.rate documentation = %q, want null as KafkaConfig does not define it", *doc)
	}
}

type synonym struct {
	source kmsg.ConfigSource
	name   string
	value  *string
}

// String is the synonym as kafka-configs prints it.
func (s synonym) String() string { return s.source.String() + ":" + s.name + "=" + javaStr(s.value) }

func javaStr(s *string) string {
	if s == nil {
		return "null"
	}
	return *s
}
