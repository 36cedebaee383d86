package coordinator

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/kafka"
)

// The bytes Kafka 2.8's GroupMetadataManager writes, field by field.
func TestRecordSchemas(t *testing.T) {
	for _, tc := range []struct {
		name string
		got  []byte
		want string
	}{
		{"offset commit key v1", offsetCommitKey("g", "t", 1), "0001" + "00016" + "7" + "000174" + "00000001"},
		{"offset commit value v3", offsetCommitValue(OffsetAndMetadata{Offset: 42, LeaderEpoch: 7, Metadata: "m", CommitTimestamp: 1000, ExpireTimestamp: -1}),
			"0003" + "000000000000002a" + "00000007" + "00016d" + "00000000000003e8"},
		{"offset commit value v1 (retention time set)", offsetCommitValue(OffsetAndMetadata{Offset: 42, LeaderEpoch: 7, Metadata: "", CommitTimestamp: 1000, ExpireTimestamp: 2000}),
			"0001" + "000000000000002a" + "0000" + "00000000000003e8" + "00000000000007d0"},
		{"group metadata key v2", groupMetadataKey("g"), "0002" + "000167"},
	} {
		if want, _ := hex.DecodeString(tc.want); !bytes.Equal(tc.got, want) {
			t.Errorf("%s: %x, want %s", tc.name, tc.got, tc.want)
		}
	}

	g := newGroup("g", 0, time.UnixMilli(0))
	g.protocolName, g.generation = "range", 3
	g.add(&member{id: "m1", instanceID: "i1", clientID: "c", protocolType: "consumer", clientHost: "/h", rebalanceTimeout: time.Second, sessionTimeout: 2 * time.Second,
		protocols: []protocol{{name: "range", metadata: []byte{1}}}}, nil)
	var v kmsg.GroupMetadataValue
	if err := v.ReadFrom(groupMetadataValue(g, map[string][]byte{"m1": {9}}, 5)); err != nil {
		t.Fatal(err)
	}
	m := v.Members[0]
	if v.Version != 3 || v.ProtocolType != "consumer" || *v.Protocol != "range" || *v.Leader != "m1" || v.Generation != 3 || v.CurrentStateTimestamp != 5 ||
		m.MemberID != "m1" || *m.InstanceID != "i1" || m.RebalanceTimeoutMillis != 1000 || m.SessionTimeoutMillis != 2000 ||
		!bytes.Equal(m.Subscription, []byte{1}) || !bytes.Equal(m.Assignment, []byte{9}) {
		t.Fatalf("group metadata value v3 decoded as %+v", v)
	}

	// A batch the coordinator writes decodes back, tombstones included.
	batch := EncodeBatch([]Record{{Key: []byte("k1"), Value: []byte("v1")}, {Key: []byte("k2")}}, 7)
	var got []storedRecord
	if _, err := decodeBatches(batch, func(r storedRecord) { got = append(got, r) }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || string(got[0].value) != "v1" || got[1].value != nil || got[1].offset != 1 {
		t.Fatalf("decoded %+v", got)
	}
}

func TestCompressedBatchesLoad(t *testing.T) {
	plain := EncodeBatch([]Record{{Key: offsetCommitKey("g", "t", 0), Value: offsetCommitValue(OffsetAndMetadata{Offset: 5, ExpireTimestamp: -1})}}, 1)
	var b kmsg.RecordBatch
	if err := b.ReadFrom(plain); err != nil {
		t.Fatal(err)
	}
	comp, err := kgo.DefaultCompressor(kgo.GzipCompression())
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	b.Records, _ = comp.Compress(&buf, b.Records)
	b.Attributes = 1 // gzip
	gz := b.AppendTo(nil)
	binary.BigEndian.PutUint32(gz[8:], uint32(len(gz)-12))
	l := loaded{offsets: map[string]map[kafka.TopicPartition]committedOffset{}, groups: map[string]*kmsg.GroupMetadataValue{}}
	if _, err := decodeBatches(gz, l.apply); err != nil {
		t.Fatal(err)
	}
	if o := l.offsets["g"][kafka.TopicPartition{Topic: "t", Partition: 0}]; o.Offset != 5 {
		t.Fatalf("offset from a gzip batch: %+v", o)
	}
}
