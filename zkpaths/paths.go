package zkpaths

import (
	"fmt"
	"strconv"
	"strings"
)

// Fixed znode paths, relative to the chroot of zookeeper.connect.
const (
	Controller               = "/controller"
	ControllerEpoch          = "/controller_epoch"
	Brokers                  = "/brokers"
	BrokerIDs                = "/brokers/ids"
	BrokerTopics             = "/brokers/topics"
	BrokerSeqID              = "/brokers/seqid"
	ClusterID                = "/cluster/id"
	Config                   = "/config"
	ConfigChanges            = "/config/changes"
	ConfigTopics             = "/config/topics"
	ConfigBrokers            = "/config/brokers"
	ConfigClients            = "/config/clients"
	ConfigUsers              = "/config/users"
	ConfigIPs                = "/config/ips"
	Admin                    = "/admin"
	DeleteTopics             = "/admin/delete_topics"
	ReassignPartitions       = "/admin/reassign_partitions"
	PreferredReplicaElection = "/admin/preferred_replica_election"
	IsrChangeNotification    = "/isr_change_notification"
	LogDirEventNotification  = "/log_dir_event_notification"
	LatestProducerIDBlock    = "/latest_producer_id_block"
	Consumers                = "/consumers"
	Feature                  = "/feature"
	Cluster                  = "/cluster"
)

// Prefixes for PERSISTENT_SEQUENTIAL creates: ZooKeeper appends a 10-digit,
// zero-padded counter, e.g. /config/changes/config_change_0000000042.
const (
	ConfigChangePrefix = ConfigChanges + "/config_change_"
	IsrChangePrefix    = IsrChangeNotification + "/isr_change_"
	LogDirEventPrefix  = LogDirEventNotification + "/log_dir_event_"
)

// PersistentPaths are created empty (if missing) at every broker start, in
// this order, as Kafka's ZkData.PersistentZkPaths.
var PersistentPaths = []string{
	Consumers,
	BrokerIDs,
	BrokerTopics,
	ConfigChanges,
	DeleteTopics,
	BrokerSeqID,
	IsrChangeNotification,
	LatestProducerIDBlock,
	LogDirEventNotification,
	ConfigTopics,
	ConfigClients,
	ConfigUsers,
	ConfigBrokers,
	ConfigIPs,
}

// Config entity types: the second component of /config/<type>/<name> and the
// first of a change notification's entity_path.
const (
	EntityTopics  = "topics"
	EntityClients = "clients"
	EntityUsers   = "users"
	EntityBrokers = "brokers"
	EntityIPs     = "ips"
)

// DefaultEntity is the entity name of the cluster-wide default, as in
// /config/brokers/<default>.
const DefaultEntity = "<default>"

func itoa(n int32) string { return strconv.FormatInt(int64(n), 10) }

// BrokerPath is /brokers/ids/<id>, a broker's ephemeral registration.
func BrokerPath(id int32) string { return BrokerIDs + "/" + itoa(id) }

// TopicPath is /brokers/topics/<t>, the topic's replica assignment.
func TopicPath(topic string) string { return BrokerTopics + "/" + topic }

// TopicPartitionsPath is /brokers/topics/<t>/partitions (no data).
func TopicPartitionsPath(topic string) string { return TopicPath(topic) + "/partitions" }

// PartitionPath is /brokers/topics/<t>/partitions/<p> (no data).
func PartitionPath(topic string, partition int32) string {
	return TopicPartitionsPath(topic) + "/" + itoa(partition)
}

// PartitionStatePath is /brokers/topics/<t>/partitions/<p>/state, the
// partition's leader and ISR.
func PartitionStatePath(topic string, partition int32) string {
	return PartitionPath(topic, partition) + "/state"
}

// EntityConfigPath is /config/<entityType>/<entityName>. A user+client quota
// entity nests: EntityConfigPath(EntityUsers, "alice/clients/app").
func EntityConfigPath(entityType, entityName string) string {
	return Config + "/" + entityType + "/" + entityName
}

// TopicConfigPath is /config/topics/<t>.
func TopicConfigPath(topic string) string { return ConfigTopics + "/" + topic }

// BrokerConfigPath is /config/brokers/<entity>, where entity is a broker id
// or DefaultEntity.
func BrokerConfigPath(entity string) string { return ConfigBrokers + "/" + entity }

// DeleteTopicPath is /admin/delete_topics/<t>, the request to delete a topic.
func DeleteTopicPath(topic string) string { return DeleteTopics + "/" + topic }

// ConfigChangePath is the full path of a child of /config/changes.
func ConfigChangePath(child string) string { return ConfigChanges + "/" + child }

// IsrChangePath is the full path of a child of /isr_change_notification.
func IsrChangePath(child string) string { return IsrChangeNotification + "/" + child }

// LogDirEventPath is the full path of a child of /log_dir_event_notification.
func LogDirEventPath(child string) string { return LogDirEventNotification + "/" + child }

// ConsumerGroupPath is /consumers/<g>.
func ConsumerGroupPath(group string) string { return Consumers + "/" + group }

// ConsumerIDsPath is /consumers/<g>/ids, whose children are the group's live
// consumers.
func ConsumerIDsPath(group string) string { return ConsumerGroupPath(group) + "/ids" }

// ConsumerIDPath is /consumers/<g>/ids/<consumerId>, a consumer's ephemeral
// registration.
func ConsumerIDPath(group, consumerID string) string {
	return ConsumerIDsPath(group) + "/" + consumerID
}

// ConsumerOwnersTopicPath is /consumers/<g>/owners/<t>.
func ConsumerOwnersTopicPath(group, topic string) string {
	return ConsumerGroupPath(group) + "/owners/" + topic
}

// ConsumerOwnerPath is /consumers/<g>/owners/<t>/<p>, the ephemeral claim on
// a partition; its data is the owning consumer thread id.
func ConsumerOwnerPath(group, topic string, partition int32) string {
	return ConsumerOwnersTopicPath(group, topic) + "/" + itoa(partition)
}

// ConsumerOffsetsTopicPath is /consumers/<g>/offsets/<t>.
func ConsumerOffsetsTopicPath(group, topic string) string {
	return ConsumerGroupPath(group) + "/offsets/" + topic
}

// ConsumerOffsetPath is /consumers/<g>/offsets/<t>/<p>, the committed offset.
func ConsumerOffsetPath(group, topic string, partition int32) string {
	return ConsumerOffsetsTopicPath(group, topic) + "/" + itoa(partition)
}

// ParseBrokerID parses a child name of /brokers/ids.
func ParseBrokerID(child string) (int32, error) {
	id, err := strconv.ParseInt(child, 10, 32)
	if err != nil || id < 0 {
		return 0, fmt.Errorf("%w: broker id %q is not a non-negative int32", ErrMalformed, child)
	}
	return int32(id), nil
}

// SequenceNumber returns the counter ZooKeeper appended to a sequential
// znode's name: 42 for "config_change_0000000042". Children processed in
// order of this number are processed in creation order.
func SequenceNumber(childName string) (int64, error) {
	const digits = 10
	if len(childName) < digits {
		return 0, fmt.Errorf("%w: %q has no sequence suffix", ErrMalformed, childName)
	}
	suffix := childName[len(childName)-digits:]
	for _, c := range []byte(suffix) {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("%w: %q has no sequence suffix", ErrMalformed, childName)
		}
	}
	return strconv.ParseInt(suffix, 10, 64)
}

// SecureRootPaths are the roots whose trees zookeeper-security-migration
// secures or opens, as 2.8's ZkData.SecureRootPaths with ZkAclStore's
// paths; /consumers is not among them, the old consumers writing there.
var SecureRootPaths = []string{
	Admin,
	Brokers,
	Cluster,
	Config,
	Controller,
	ControllerEpoch,
	IsrChangeNotification,
	LatestProducerIDBlock,
	LogDirEventNotification,
	DelegationTokenAuth,
	ACLExtended,
	ACLLiteral,
	ACLLiteralChanges,
	ACLPrefixed,
	ACLExtendedChanges,
}

// SensitiveRootPaths hold secrets (SCRAM credentials, broker passwords,
// delegation tokens): with secure ACLs nobody but their creator may read
// them (ZkData.SensitiveRootPaths).
var SensitiveRootPaths = []string{ConfigUsers, ConfigBrokers, DelegationTokens}

// Sensitive reports whether path is under one of SensitiveRootPaths, by
// prefix as Kafka checks it.
func Sensitive(path string) bool {
	for _, p := range SensitiveRootPaths {
		if strings.HasPrefix(path, p) {
			return true
		}
	}
	return false
}
