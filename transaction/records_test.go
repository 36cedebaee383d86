package transaction

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/zkafka/zkafka/kafka"
)

// unhex decodes hex written one field a line, each followed by "|" and what
// the field is.
func unhex(t *testing.T, s string) []byte {
	t.Helper()
	var digits strings.Builder
	for line := range strings.Lines(s) {
		field, _, _ := strings.Cut(line, "|")
		digits.WriteString(strings.Join(strings.Fields(field), ""))
	}
	b, err := hex.DecodeString(digits.String())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestTransactionLogRecordsGoldenBytes holds the record bytes to Kafka 2.8's
// TransactionLogKey and TransactionLogValue schemas (version 0, not
// flexible), written out field by field from the JSON schemas.
func TestTransactionLogRecordsGoldenBytes(t *testing.T) {
	key := unhex(t, `
		0000                  | version 0
		0005 7478 6e2d 31     | transactional id "txn-1"`)
	if got := txnKey("txn-1"); !bytes.Equal(got, key) {
		t.Fatalf("key %x, want %x", got, key)
	}
	ongoing := transit{
		producerID: 4001, producerEpoch: 3, timeoutMs: 60000, state: Ongoing,
		partitions:     []kafka.TopicPartition{{Topic: "in", Partition: 0}, {Topic: "out", Partition: 1}, {Topic: "out", Partition: 2}},
		startTimestamp: 1700000000000, updateTimestamp: 1700000000500,
	}
	value := unhex(t, `
		0000                  | version 0
		0000 0000 0000 0fa1   | producer id 4001
		0003                  | producer epoch 3
		0000 ea60             | transaction timeout 60000 ms
		01                    | state Ongoing
		0000 0002             | 2 topics
		0002 696e             | "in"
		0000 0001 0000 0000   | [0]
		0003 6f75 74          | "out"
		0000 0002 0000 0001 0000 0002   | [1, 2]
		0000 018b cfe5 69f4   | last update 1700000000500
		0000 018b cfe5 6800   | start 1700000000000`)
	if got := txnValue(ongoing); !bytes.Equal(got, value) {
		t.Fatalf("value\n %x\nwant\n %x", got, value)
	}
	empty := transit{producerID: 4001, producerEpoch: 4, timeoutMs: 60000, state: Empty, startTimestamp: -1, updateTimestamp: 1700000000500}
	emptyValue := unhex(t, `
		0000 0000 0000 0000 0fa1 0004 0000 ea60
		00                    | state Empty
		ffff ffff             | partitions null
		0000 018b cfe5 69f4 ffff ffff ffff ffff`)
	if got := txnValue(empty); !bytes.Equal(got, emptyValue) {
		t.Fatalf("empty value\n %x\nwant\n %x", got, emptyValue)
	}

	e, err := DecodeRecord(key, value)
	if err != nil {
		t.Fatal(err)
	}
	if e.TransactionalID != "txn-1" || e.ProducerID != 4001 || e.ProducerEpoch != 3 || e.State != Ongoing || len(e.Partitions) != 3 ||
		e.Start != 1700000000000 || e.LastUpdate != 1700000000500 {
		t.Fatalf("decoded %+v", e)
	}
	const formatted = "txn-1::TransactionMetadata(transactionalId=txn-1, producerId=4001, producerEpoch=3, txnTimeoutMs=60000, " +
		"state=Ongoing, pendingState=None, topicPartitions=Set(in-0, out-1, out-2), txnStartTimestamp=1700000000000, " +
		"txnLastUpdateTimestamp=1700000000500)"
	if e.String() != formatted {
		t.Fatalf("formatter output\n %s\nwant\n %s", e, formatted)
	}
	k, v := e.DumpString()
	if k != "transaction_metadata::transactionalId=txn-1" ||
		v != "producerId:4001,producerEpoch:3,state=Ongoing,partitions=[in-0,out-1,out-2],txnLastUpdateTimestamp=1700000000500,txnTimeoutMs=60000" {
		t.Fatalf("dump %q %q", k, v)
	}
	tomb, err := DecodeRecord(key, nil)
	if err != nil || !tomb.Deleted || tomb.String() != "txn-1::NULL" {
		t.Fatalf("tombstone %+v %v", tomb, err)
	}
}

func TestDecodeRecordRejectsUnknownVersions(t *testing.T) {
	if _, err := DecodeRecord(unhex(t, "0001 0001 61"), nil); err == nil {
		t.Fatal("key version 1 accepted")
	}
	v := txnValue(transit{producerID: 1, state: Empty, startTimestamp: -1})
	v[1] = 1
	if _, err := DecodeRecord(txnKey("a"), v); err == nil {
		t.Fatal("value version 1 accepted")
	}
	v = txnValue(transit{producerID: 1, state: Empty, startTimestamp: -1})
	v[16] = 9 // the state byte
	if _, err := DecodeRecord(txnKey("a"), v); err == nil {
		t.Fatal("state 9 accepted")
	}
}
