package broker

import (
	"errors"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

func TestParseConfigValue(t *testing.T) {
	for _, tc := range []struct {
		typ       configType
		in, want  string
		wantError string
	}{
		{configTypeInt, " 42 ", "42", ""},
		{configTypeInt, "3000000000", "", "Invalid value 3000000000 for configuration c: Not a number of type INT"},
		{configTypeLong, "abc", "", "Invalid value abc for configuration c: Not a number of type LONG"},
		{configTypeBoolean, "TRUE", "true", ""},
		{configTypeBoolean, "yes", "", "Invalid value yes for configuration c: Expected value to be either true or false"},
		{configTypeDouble, "0.5", "0.5", ""},
		{configTypeDouble, "1", "1.0", ""},
		{configTypeList, " compact , delete ", "compact,delete", ""},
		{configTypeList, "  ", "", ""},
		{configTypeString, " lz4 ", "lz4", ""},
	} {
		got, err := parseConfigValue("c", tc.typ, tc.in)
		switch {
		case tc.wantError != "" && (err == nil || err.Error() != tc.wantError):
			t.Errorf("%v %q: error %v, want %q", tc.typ, tc.in, err, tc.wantError)
		case tc.wantError == "" && (err != nil || got != tc.want):
			t.Errorf("%v %q = %q, %v; want %q", tc.typ, tc.in, got, err, tc.want)
		}
	}
}

func TestValidateTopicConfig(t *testing.T) {
	for _, tc := range []struct {
		cfg       map[string]string
		code      *kerr.Error // nil: a value error (INVALID_REQUEST on the wire), unless wantError is empty
		wantError string
	}{
		{map[string]string{"retention.ms": "-1", "cleanup.policy": "", "min.cleanable.dirty.ratio": "1"}, nil, ""},
		{map[string]string{"leader.replication.throttled.replicas": "0:1, 1:2"}, nil, ""},
		{map[string]string{"message.format.version": "2.8.1"}, nil, ""},
		{map[string]string{"message.format.version": "0.10.2-IV0"}, nil, ""},
		{map[string]string{"no.such": "1"}, kerr.InvalidConfig, "Unknown topic config name: no.such"},
		{map[string]string{"retention.ms": "-2"}, nil, "Invalid value -2 for configuration retention.ms: Value must be at least -1"},
		{map[string]string{"min.cleanable.dirty.ratio": "1.5"}, nil, "Value must be no more than 1"},
		{map[string]string{"compression.type": "zip"}, nil, "String must be one of: uncompressed, zstd, lz4, snappy, gzip, producer"},
		{map[string]string{"message.timestamp.type": "Now"}, nil, "String must be one of: CreateTime, LogAppendTime"},
		{map[string]string{"follower.replication.throttled.replicas": "x"}, nil, "must be the literal '*'"},
		{map[string]string{"message.format.version": "3.0"}, nil, "Version `3.0` is not a valid version"},
		{map[string]string{"min.compaction.lag.ms": "10", "max.compaction.lag.ms": "5"}, kerr.InvalidConfig,
			"conflict topic config setting min.compaction.lag.ms (10) > max.compaction.lag.ms (5)"},
	} {
		_, err := validateTopicConfig(tc.cfg)
		if tc.wantError == "" {
			if err != nil {
				t.Errorf("%v: %v", tc.cfg, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.wantError) {
			t.Errorf("%v: error %v, want %q", tc.cfg, err, tc.wantError)
			continue
		}
		var te *topicError
		var ve *configValueError
		if tc.code != nil && (!errors.As(err, &te) || te.code != tc.code) {
			t.Errorf("%v: %v is not %v", tc.cfg, err, tc.code)
		}
		if tc.code == nil && !errors.As(err, &ve) {
			t.Errorf("%v: %v is not a value error", tc.cfg, err)
		}
	}
}

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
		{"flush falls back", nil, nil, nil, "flush.ms", maxLong},
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
	for _, s := range m.synonyms("log.retention.hours", brokerConfigSynonyms("log.retention.hours")) {
		got = append(got, s.Name+"="+*s.Value)
	}
	// Entries before the first one under the described name are dropped.
	if want := "log.retention.hours=100 log.retention.hours=168"; strings.Join(got, " ") != want {
		t.Errorf("synonyms %v, want %s", got, want)
	}
	if syn := m.synonyms("log.retention.ms", brokerConfigSynonyms("log.retention.ms")); len(syn) != 0 {
		t.Errorf("log.retention.ms synonyms %v, want none (Kafka drops them all)", syn)
	}
}

func TestValidateDynamicBrokerConfig(t *testing.T) {
	for _, tc := range []struct {
		cfg       map[string]string
		wantError string
	}{
		{map[string]string{"log.retention.ms": "-1", "unclean.leader.election.enable": "true", "my.plugin.setting": "x"}, ""},
		{map[string]string{"broker.id": "2", "log.dirs": "/x"}, "Cannot update these configs dynamically: Set(broker.id, log.dirs)"},
		{map[string]string{"log.retention.hours": "2"}, "Cannot update these configs dynamically: Set(log.retention.hours)"},
		{map[string]string{"log.segment.bytes": "abc"}, "Invalid value abc for configuration log.segment.bytes: Not a number of type INT"},
		{map[string]string{"min.insync.replicas": "0"}, "Value must be at least 1"},
	} {
		err := validateDynamicBrokerConfig(tc.cfg)
		if (tc.wantError == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.wantError)) {
			t.Errorf("%v: %v, want %q", tc.cfg, err, tc.wantError)
		}
	}
}
