package zkpaths

import (
	"errors"
	"slices"
	"testing"
)

func TestPathBuilders(t *testing.T) {
	tests := []struct{ got, want string }{
		{BrokerPath(3), "/brokers/ids/3"},
		{TopicPath("orders"), "/brokers/topics/orders"},
		{TopicPartitionsPath("orders"), "/brokers/topics/orders/partitions"},
		{PartitionPath("orders", 11), "/brokers/topics/orders/partitions/11"},
		{PartitionStatePath("orders", 0), "/brokers/topics/orders/partitions/0/state"},
		{TopicConfigPath("orders"), "/config/topics/orders"},
		{BrokerConfigPath(DefaultEntity), "/config/brokers/<default>"},
		{BrokerConfigPath("2"), "/config/brokers/2"},
		{EntityConfigPath(EntityUsers, "alice/clients/app"), "/config/users/alice/clients/app"},
		{DeleteTopicPath("orders"), "/admin/delete_topics/orders"},
		{ConfigChangePrefix, "/config/changes/config_change_"},
		{IsrChangePrefix, "/isr_change_notification/isr_change_"},
		{LogDirEventPrefix, "/log_dir_event_notification/log_dir_event_"},
		{ConfigChangePath("config_change_0000000001"), "/config/changes/config_change_0000000001"},
		{IsrChangePath("isr_change_0000000001"), "/isr_change_notification/isr_change_0000000001"},
		{LogDirEventPath("log_dir_event_0000000001"), "/log_dir_event_notification/log_dir_event_0000000001"},
		{ConsumerGroupPath("g"), "/consumers/g"},
		{ConsumerIDsPath("g"), "/consumers/g/ids"},
		{ConsumerIDPath("g", "g_h-1-abcd0123"), "/consumers/g/ids/g_h-1-abcd0123"},
		{ConsumerOwnersTopicPath("g", "t"), "/consumers/g/owners/t"},
		{ConsumerOwnerPath("g", "t", 4), "/consumers/g/owners/t/4"},
		{ConsumerOffsetsTopicPath("g", "t"), "/consumers/g/offsets/t"},
		{ConsumerOffsetPath("g", "t", 4), "/consumers/g/offsets/t/4"},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

func TestFixedPaths(t *testing.T) {
	// The order and content of Kafka 2.8.2's ZkData.PersistentZkPaths, whose
	// config types (ConfigType.all) end with the IP entities of KIP-612.
	want := []string{
		"/consumers", "/brokers/ids", "/brokers/topics", "/config/changes", "/admin/delete_topics",
		"/brokers/seqid", "/isr_change_notification", "/latest_producer_id_block",
		"/log_dir_event_notification", "/config/topics", "/config/clients", "/config/users", "/config/brokers",
		"/config/ips",
	}
	if !slices.Equal(PersistentPaths, want) {
		t.Fatalf("PersistentPaths = %q\nwant %q", PersistentPaths, want)
	}
	for got, want := range map[string]string{
		Controller: "/controller", ControllerEpoch: "/controller_epoch", ClusterID: "/cluster/id",
		ReassignPartitions: "/admin/reassign_partitions", PreferredReplicaElection: "/admin/preferred_replica_election",
		Feature: "/feature", ConfigChanges: "/config/changes",
	} {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
}

func TestSequenceNumber(t *testing.T) {
	for in, want := range map[string]int64{
		"config_change_0000000042": 42,
		"isr_change_0000000000":    0,
		"log_dir_event_2147483647": 2147483647,
		"0000000007":               7,
	} {
		if got, err := SequenceNumber(in); err != nil || got != want {
			t.Errorf("SequenceNumber(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "config_change_", "config_change_00000000x2", "42"} {
		if _, err := SequenceNumber(in); !errors.Is(err, ErrMalformed) {
			t.Errorf("SequenceNumber(%q) error = %v, want ErrMalformed", in, err)
		}
	}
}

func TestParseIDs(t *testing.T) {
	if id, err := ParseBrokerID("1001"); err != nil || id != 1001 {
		t.Errorf("ParseBrokerID(1001) = %d, %v", id, err)
	}
	for _, in := range []string{"", "-1", "b1", "99999999999"} {
		if _, err := ParseBrokerID(in); !errors.Is(err, ErrMalformed) {
			t.Errorf("ParseBrokerID(%q) error = %v, want ErrMalformed", in, err)
		}
	}
	if p, err := ParsePartitionID("17"); err != nil || p != 17 {
		t.Errorf("ParsePartitionID(17) = %d, %v", p, err)
	}
	for _, in := range []string{"", "-1", "+1", "01", "1.0", "x", "2147483648"} {
		if _, err := ParsePartitionID(in); err == nil {
			t.Errorf("ParsePartitionID(%q) accepted", in)
		}
	}
}
