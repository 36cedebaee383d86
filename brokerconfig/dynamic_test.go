package brokerconfig

import (
	"slices"
	"strings"
	"testing"
)

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
		// Kafka's static configs, read or not, are refused; its dynamic
		// ones are kept even where this broker does not act on them.
		{map[string]string{"background.threads": "4", "log.cleaner.threads": "2"}, ""},
		{map[string]string{"zookeeper.sync.time.ms": "100"}, "Cannot update these configs dynamically: Set(zookeeper.sync.time.ms)"},
		{map[string]string{"log.cleaner.threads": "two"}, "Invalid value two for configuration log.cleaner.threads: Not a number of type INT"},
		// DynamicConfig.Broker's replication throttles: longs of at least 0.
		{map[string]string{"leader.replication.throttled.rate": "1048576", "follower.replication.throttled.rate": "0"}, ""},
		{map[string]string{"follower.replication.throttled.rate": "-1"}, "Invalid value -1 for configuration follower.replication.throttled.rate: Value must be at least 0"},
		{map[string]string{"leader.replication.throttled.rate": "1MB"}, "Invalid value 1MB for configuration leader.replication.throttled.rate: Not a number of type LONG"},
	} {
		err := ValidateDynamicBrokerConfig(tc.cfg)
		if (tc.wantError == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.wantError)) {
			t.Errorf("%v: %v, want %q", tc.cfg, err, tc.wantError)
		}
	}
}

func TestBrokerDefaultsAndNames(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		ok         bool
	}{
		{"log.cleanup.policy", "delete", true}, // a broker synonym of a topic config
		{"num.partitions", "1", true},          // a key New reads
		{"log.dirs", "", false},                // read, but Kafka's default is null (log.dir is the fallback)
		{"log.cleaner.threads", "1", true},     // Kafka's, not read here
		{"my.plugin.setting", "", false},
	} {
		if got, ok := BrokerDefault(tc.name); got != tc.want || ok != tc.ok {
			t.Errorf("BrokerDefault(%s) = %q, %v; want %q, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
	names := BrokerConfigNames()
	for _, n := range []string{"log.cleanup.policy", "group.max.size", "broker.id"} {
		if !slices.Contains(names, n) {
			t.Errorf("BrokerConfigNames lacks %s", n)
		}
	}
	slices.Sort(names)
	if len(slices.Compact(names)) != len(BrokerConfigNames()) {
		t.Error("BrokerConfigNames repeats a name")
	}
}
