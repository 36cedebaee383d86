package broker

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/zkafka/zkafka/brokerconfig"
)

func layered(static, dynDefault, dynBroker map[string]string) *configManager {
	return &configManager{static: static, dynDefault: dynDefault, dynBroker: dynBroker}
}

func TestTopicDefaultsFromBrokerLayers(t *testing.T) {
	for _, tc := range []struct {
		name                          string
		static, dynDefault, dynBroker map[string]string
		config, want                  string
	}{
		{"Kafka's default", nil, nil, nil, "retention.ms", "604800000"},
		{"hours", map[string]string{"log.retention.hours": "1"}, nil, nil, "retention.ms", "3600000"},
		{"minutes over hours", map[string]string{"log.retention.hours": "1", "log.retention.minutes": "2"}, nil, nil, "retention.ms", "120000"},
		{"dynamic ms over static", map[string]string{"log.retention.minutes": "2"}, map[string]string{"log.retention.ms": "5"}, nil, "retention.ms", "5"},
		{"per broker over default", nil, map[string]string{"log.retention.ms": "5"}, map[string]string{"log.retention.ms": "6"}, "retention.ms", "6"},
		{"forever", map[string]string{"log.retention.hours": "-5"}, nil, nil, "retention.ms", "-1"},
		{"roll hours", map[string]string{"log.roll.hours": "2"}, nil, nil, "segment.ms", "7200000"},
		{"flush falls back", nil, nil, nil, "flush.ms", strconv.FormatInt(math.MaxInt64, 10)},
		{"plain synonym", nil, map[string]string{"log.cleanup.policy": "compact"}, nil, "cleanup.policy", "compact"},
		{"no synonym", nil, nil, nil, "leader.replication.throttled.replicas", ""},
	} {
		if got := layered(tc.static, tc.dynDefault, tc.dynBroker).topicDefault(tc.config); got != tc.want {
			t.Errorf("%s: %s = %q, want %q", tc.name, tc.config, got, tc.want)
		}
	}
	m := layered(map[string]string{"log.segment.bytes": "2048"}, map[string]string{"log.cleanup.policy": "compact,delete"}, nil)
	if c := m.logDefaults(); c.SegmentBytes != 2048 || c.CleanupPolicy != "compact,delete" || c.MaxMessageBytes != 1048588 {
		t.Errorf("log defaults %+v", c)
	}
}

func TestSynonymsAsKafkaReportsThem(t *testing.T) {
	m := layered(map[string]string{"log.retention.hours": "100"}, map[string]string{"log.retention.minutes": "3"}, nil)
	var got []string
	for _, s := range m.synonyms("log.retention.hours", brokerconfig.BrokerConfigSynonyms("log.retention.hours")) {
		got = append(got, s.Name+"="+*s.Value)
	}
	// Entries before the first one under the described name are dropped.
	if want := "log.retention.hours=100 log.retention.hours=168"; strings.Join(got, " ") != want {
		t.Errorf("synonyms %v, want %s", got, want)
	}
	if syn := m.synonyms("log.retention.ms", brokerconfig.BrokerConfigSynonyms("log.retention.ms")); len(syn) != 0 {
		t.Errorf("log.retention.ms synonyms %v, want none (Kafka drops them all)", syn)
	}
}
