package transaction

// The records of __transaction_state in Kafka 2.8's schemas
// (TransactionLogKey and TransactionLogValue, both version 0, written with
// a leading int16 version and not flexible):
//
//	key   version 0: transactional id
//	value version 0: producer id, producer epoch, transaction timeout (ms),
//	                 state (int8, State's byte), partitions (nullable array
//	                 of topic and partition ids; null when Empty), last
//	                 update timestamp, start timestamp
//
// A null value is a tombstone: the transactional id expired.

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/kafka"
)

// keyVersion and valueVersion are the only versions Kafka 2.8 writes.
const (
	keyVersion   = 0
	valueVersion = 0
)

func txnKey(transactionalID string) []byte {
	k := kmsg.TxnMetadataKey{Version: keyVersion, TransactionalID: transactionalID}
	return k.AppendTo(nil)
}

// txnValue encodes a transition as Kafka's valueToBytes: the partitions
// grouped by topic, null for an Empty transaction.
func txnValue(t transit) []byte {
	v := kmsg.NewTxnMetadataValue()
	v.Version = valueVersion
	v.ProducerID, v.ProducerEpoch, v.TimeoutMillis = t.producerID, t.producerEpoch, t.timeoutMs
	v.State = kmsg.TransactionState(t.state)
	v.LastUpdateTimestamp, v.StartTimestamp = t.updateTimestamp, t.startTimestamp
	if t.state != Empty {
		v.Topics = []kmsg.TxnMetadataValueTopic{}
		for _, tp := range t.partitions {
			if n := len(v.Topics); n > 0 && v.Topics[n-1].Topic == tp.Topic {
				v.Topics[n-1].Partitions = append(v.Topics[n-1].Partitions, tp.Partition)
				continue
			}
			v.Topics = append(v.Topics, kmsg.TxnMetadataValueTopic{Topic: tp.Topic, Partitions: []int32{tp.Partition}})
		}
	}
	return v.AppendTo(nil)
}

// LogEntry is one __transaction_state record decoded: a transactional id
// and its metadata, or a tombstone (Deleted).
type LogEntry struct {
	TransactionalID string
	Deleted         bool
	ProducerID      int64
	ProducerEpoch   int16
	TimeoutMs       int32
	State           State
	Partitions      []kafka.TopicPartition
	LastUpdate      int64 // ms
	Start           int64 // ms; -1 when no transaction has started
}

// DecodeRecord reads one __transaction_state record as Kafka's
// readTxnRecordKey and readTxnRecordValue do: an unknown key or value
// version is an error.
func DecodeRecord(key, value []byte) (LogEntry, error) {
	var k kmsg.TxnMetadataKey
	if err := k.ReadFrom(key); err != nil {
		return LogEntry{}, fmt.Errorf("transaction log key: %w", err)
	}
	if k.Version != keyVersion {
		return LogEntry{}, fmt.Errorf("unknown version %d of the transaction log key", k.Version)
	}
	e := LogEntry{TransactionalID: k.TransactionalID}
	if value == nil {
		e.Deleted = true
		return e, nil
	}
	var v kmsg.TxnMetadataValue
	if err := v.ReadFrom(value); err != nil {
		return LogEntry{}, fmt.Errorf("transaction log value of %s: %w", k.TransactionalID, err)
	}
	if v.Version != valueVersion {
		return LogEntry{}, fmt.Errorf("unknown version %d of the transaction log value", v.Version)
	}
	if v.State < 0 || State(v.State) > PrepareEpochFence {
		return LogEntry{}, fmt.Errorf("unknown transaction state %d of %s", v.State, k.TransactionalID)
	}
	e.ProducerID, e.ProducerEpoch, e.TimeoutMs = v.ProducerID, v.ProducerEpoch, v.TimeoutMillis
	e.State, e.LastUpdate, e.Start = State(v.State), v.LastUpdateTimestamp, v.StartTimestamp
	if e.State != Empty {
		for _, t := range v.Topics {
			for _, p := range t.Partitions {
				e.Partitions = append(e.Partitions, kafka.TopicPartition{Topic: t.Topic, Partition: p})
			}
		}
	}
	return e, nil
}

// String formats the entry as Kafka's TransactionLogMessageFormatter
// prints a record (kafka-console-consumer --formatter
// "kafka.coordinator.transaction.TransactionLog$TransactionLogMessageFormatter"):
// the id, "::", and the TransactionMetadata's toString, or NULL for a
// tombstone.
func (e LogEntry) String() string {
	if e.Deleted {
		return e.TransactionalID + "::NULL"
	}
	return fmt.Sprintf("%s::TransactionMetadata(transactionalId=%s, producerId=%d, producerEpoch=%d, txnTimeoutMs=%d, "+
		"state=%s, pendingState=None, topicPartitions=%s, txnStartTimestamp=%d, txnLastUpdateTimestamp=%d)",
		e.TransactionalID, e.TransactionalID, e.ProducerID, e.ProducerEpoch, e.TimeoutMs, e.State,
		partitionSet(e.Partitions), e.Start, e.LastUpdate)
}

// DumpString formats the entry as Kafka's DumpLogSegments prints a
// __transaction_state record with --print-data-log: the key and the
// payload.
func (e LogEntry) DumpString() (key, payload string) {
	key = "transaction_metadata::transactionalId=" + e.TransactionalID
	if e.Deleted {
		return key, "<DELETE>"
	}
	parts := make([]string, len(e.Partitions))
	for i, tp := range e.Partitions {
		parts[i] = tp.String()
	}
	return key, fmt.Sprintf("producerId:%d,producerEpoch:%d,state=%s,partitions=[%s],txnLastUpdateTimestamp=%d,txnTimeoutMs=%d",
		e.ProducerID, e.ProducerEpoch, e.State, strings.Join(parts, ","), e.LastUpdate, e.TimeoutMs)
}

// partitionSet prints partitions as a Scala mutable Set does: "Set(t-0, t-1)".
func partitionSet(tps []kafka.TopicPartition) string {
	parts := make([]string, len(tps))
	for i, tp := range tps {
		parts[i] = tp.String()
	}
	return "Set(" + strings.Join(parts, ", ") + ")"
}

// sortedPartitions returns a set's partitions by topic then partition, the
// order they are written in.
func sortedPartitions(set map[kafka.TopicPartition]bool) []kafka.TopicPartition {
	return slices.SortedFunc(maps.Keys(set), kafka.Compare)
}
