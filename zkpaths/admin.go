package zkpaths

import (
	"encoding/json"
	"fmt"

	"github.com/zkafka/zkafka/kafka"
)

// encodeTopicPartition is one entry of a partition list: {"topic":"orders","partition":0}.
func encodeTopicPartition(tp kafka.TopicPartition) []byte {
	return newObject().str("topic", tp.Topic).int("partition", int64(tp.Partition)).bytes()
}

// PartitionReplicas is one entry of a reassignment: the partition's target
// replicas, preferred leader first.
type PartitionReplicas struct {
	Topic     string
	Partition int32
	Replicas  []int32
}

// ReassignPartitionsData is the data of /admin/reassign_partitions, the
// pre-2.4 way to request reassignments (still honoured by the controller):
//
//	{"version":1,"partitions":[{"topic":"orders","partition":0,"replicas":[4,5,6]}]}
type ReassignPartitionsData struct {
	Partitions []PartitionReplicas
}

// Encode returns the version-1 JSON.
func (r ReassignPartitionsData) Encode() []byte {
	list := make([][]byte, len(r.Partitions))
	for i, p := range r.Partitions {
		list[i] = newObject().str("topic", p.Topic).int("partition", int64(p.Partition)).
			raw("replicas", int32Array(p.Replicas)).bytes()
	}
	return newObject().int("version", 1).raw("partitions", jsonArray(list)).bytes()
}

// DecodeReassignPartitionsData reads /admin/reassign_partitions. Unknown
// per-partition fields, such as the "log_dirs" the command-line tool accepts,
// are ignored.
func DecodeReassignPartitionsData(data []byte) (ReassignPartitionsData, error) {
	var r ReassignPartitionsData
	err := decodePartitionList("partition reassignment", data, func(o object, tp kafka.TopicPartition) error {
		var replicas []int32
		if err := o.required("replicas", &replicas); err != nil {
			return err
		}
		r.Partitions = append(r.Partitions, PartitionReplicas{Topic: tp.Topic, Partition: tp.Partition, Replicas: replicas})
		return nil
	})
	if err != nil {
		return ReassignPartitionsData{}, err
	}
	return r, nil
}

// PreferredReplicaElectionData is the data of
// /admin/preferred_replica_election, a request to move leadership back to
// each partition's first replica:
//
//	{"version":1,"partitions":[{"topic":"orders","partition":0}]}
type PreferredReplicaElectionData struct {
	Partitions []kafka.TopicPartition
}

// Encode returns the version-1 JSON.
func (p PreferredReplicaElectionData) Encode() []byte { return encodeTopicPartitions(p.Partitions) }

// DecodePreferredReplicaElectionData reads /admin/preferred_replica_election.
func DecodePreferredReplicaElectionData(data []byte) (PreferredReplicaElectionData, error) {
	tps, err := decodeTopicPartitions("preferred replica election", data)
	if err != nil {
		return PreferredReplicaElectionData{}, err
	}
	return PreferredReplicaElectionData{Partitions: tps}, nil
}

// IsrChangeNotificationData is the data of a sequential
// /isr_change_notification/isr_change_NNNNNNNNNN, written by a partition
// leader after it changed ISRs in ZooKeeper, so the controller propagates
// them:
//
//	{"version":1,"partitions":[{"topic":"orders","partition":0}]}
type IsrChangeNotificationData struct {
	Partitions []kafka.TopicPartition
}

// Encode returns the version-1 JSON.
func (n IsrChangeNotificationData) Encode() []byte { return encodeTopicPartitions(n.Partitions) }

// DecodeIsrChangeNotificationData reads an ISR change notification.
func DecodeIsrChangeNotificationData(data []byte) (IsrChangeNotificationData, error) {
	tps, err := decodeTopicPartitions("ISR change notification", data)
	if err != nil {
		return IsrChangeNotificationData{}, err
	}
	return IsrChangeNotificationData{Partitions: tps}, nil
}

// LogDirFailureEvent is the only log-dir event Kafka defines.
const LogDirFailureEvent int32 = 1

// LogDirEvent is the data of a sequential
// /log_dir_event_notification/log_dir_event_NNNNNNNNNN, written by a broker
// one of whose log directories failed:
//
//	{"version":1,"broker":2,"event":1}
type LogDirEvent struct {
	BrokerID int32
	Event    int32 // LogDirFailureEvent
}

// Encode returns the version-1 JSON.
func (e LogDirEvent) Encode() []byte {
	return newObject().int("version", 1).int("broker", int64(e.BrokerID)).int("event", int64(e.Event)).bytes()
}

// DecodeLogDirEvent reads a log-dir event notification.
func DecodeLogDirEvent(data []byte) (LogDirEvent, error) {
	o, err := parseObject("log dir event", data)
	if err != nil {
		return LogDirEvent{}, err
	}
	if _, err := o.version(); err != nil {
		return LogDirEvent{}, err
	}
	var e LogDirEvent
	if err := o.required("broker", &e.BrokerID); err != nil {
		return LogDirEvent{}, err
	}
	if err := o.required("event", &e.Event); err != nil {
		return LogDirEvent{}, err
	}
	return e, nil
}

func jsonArray(elems [][]byte) []byte {
	b := []byte{'['}
	for i, e := range elems {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, e...)
	}
	return append(b, ']')
}

func encodeTopicPartitions(tps []kafka.TopicPartition) []byte {
	list := make([][]byte, len(tps))
	for i, tp := range tps {
		list[i] = encodeTopicPartition(tp)
	}
	return newObject().int("version", 1).raw("partitions", jsonArray(list)).bytes()
}

func decodeTopicPartitions(kind string, data []byte) ([]kafka.TopicPartition, error) {
	var tps []kafka.TopicPartition
	err := decodePartitionList(kind, data, func(_ object, tp kafka.TopicPartition) error {
		tps = append(tps, tp)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return tps, nil
}

// decodePartitionList reads {"version":1,"partitions":[{"topic":..,"partition":..},..]}
// and calls each for every entry, with the entry's fields for more lookups.
func decodePartitionList(kind string, data []byte, each func(object, kafka.TopicPartition) error) error {
	o, err := parseObject(kind, data)
	if err != nil {
		return err
	}
	if _, err := o.version(); err != nil {
		return err
	}
	var entries []json.RawMessage
	if err := o.required("partitions", &entries); err != nil {
		return err
	}
	for i, raw := range entries {
		e, err := parseObject(fmt.Sprintf("%s: partitions[%d]", kind, i), raw)
		if err != nil {
			return err
		}
		var tp kafka.TopicPartition
		if err := e.required("topic", &tp.Topic); err != nil {
			return err
		}
		if err := e.required("partition", &tp.Partition); err != nil {
			return err
		}
		if tp.Topic == "" || tp.Partition < 0 {
			return malformed(e.kind, "invalid partition %s-%d", tp.Topic, tp.Partition)
		}
		if err := each(e, tp); err != nil {
			return err
		}
	}
	return nil
}
