package broker_test

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/brokerconfig"
	"github.com/zkafka/zkafka/internal/testcluster"
	"github.com/zkafka/zkafka/wire"
)

// recordBatch builds a valid v2 batch holding one record per value.
func recordBatch(values ...[]byte) []byte {
	var records []byte
	for i, v := range values {
		r := kmsg.Record{OffsetDelta: int32(i), Value: v}
		// AppendTo writes the Length field as given: encode once with 0
		// (a one-byte varint) to learn the body's size.
		r.Length = int32(len(r.AppendTo(nil)) - 1)
		records = r.AppendTo(records)
	}
	now := time.Now().UnixMilli()
	b := kmsg.RecordBatch{
		Magic: 2, LastOffsetDelta: int32(len(values) - 1), FirstTimestamp: now, MaxTimestamp: now,
		ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1, NumRecords: int32(len(values)), Records: records,
	}
	raw := b.AppendTo(nil)
	binary.BigEndian.PutUint32(raw[8:], uint32(len(raw)-12))
	binary.BigEndian.PutUint32(raw[17:], crc32.Checksum(raw[21:], crc32.MakeTable(crc32.Castagnoli)))
	return raw
}

func produceReq(topic string, partition int32, records []byte) *kmsg.ProduceRequest {
	req := kmsg.NewPtrProduceRequest()
	req.Acks, req.TimeoutMillis = 1, 5000
	req.Topics = []kmsg.ProduceRequestTopic{{Topic: topic, Partitions: []kmsg.ProduceRequestTopicPartition{{Partition: partition, Records: records}}}}
	return req
}

func produceCode(t *testing.T, c *testcluster.Cluster, addr string, req *kmsg.ProduceRequest) (int16, int64) {
	t.Helper()
	resp := raw(t, addr, req, 7).(*kmsg.ProduceResponse)
	p := resp.Topics[0].Partitions[0]
	return p.ErrorCode, p.BaseOffset
}

func createTopicRaw(t *testing.T, addr, name string, partitions int32) int16 {
	t.Helper()
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = 10000
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, partitions, 1
	req.Topics = append(req.Topics, rt)
	resp := raw(t, addr, req, 5).(*kmsg.CreateTopicsResponse)
	return resp.Topics[0].ErrorCode
}

func TestBadProduceInput(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 1, Properties: map[string]string{"message.max.bytes": "2000"}})
	addr := c.Addr(1)
	if code := createTopicRaw(t, addr, "bad-input", 1); code != 0 {
		t.Fatalf("create topic: %v", kerr.ErrorForCode(code))
	}
	c.WaitForLeader("bad-input", 0)

	good := recordBatch([]byte("a"), []byte("b"))
	if code, off := produceCode(t, c, addr, produceReq("bad-input", 0, good)); code != 0 || off != 0 {
		t.Fatalf("good batch: code %d offset %d", code, off)
	}
	corrupt := recordBatch([]byte("c"))
	corrupt[len(corrupt)-1] ^= 0xff
	if code, _ := produceCode(t, c, addr, produceReq("bad-input", 0, corrupt)); code != kerr.CorruptMessage.Code {
		t.Errorf("bad CRC: code %d, want CORRUPT_MESSAGE", code)
	}
	huge := recordBatch(make([]byte, 3000))
	if code, _ := produceCode(t, c, addr, produceReq("bad-input", 0, huge)); code != kerr.MessageTooLarge.Code {
		t.Errorf("oversized batch: code %d, want MESSAGE_TOO_LARGE", code)
	}
	if code, _ := produceCode(t, c, addr, produceReq("bad/topic", 0, good)); code != kerr.InvalidTopicException.Code {
		t.Errorf("illegal topic name: code %d, want INVALID_TOPIC_EXCEPTION", code)
	}
	if code, _ := produceCode(t, c, addr, produceReq("__consumer_offsets", 0, good)); code != kerr.InvalidTopicException.Code {
		t.Errorf("produce to __consumer_offsets: code %d, want INVALID_TOPIC_EXCEPTION", code)
	}
	if code, _ := produceCode(t, c, addr, produceReq("no-such-topic", 0, good)); code != kerr.UnknownTopicOrPartition.Code {
		t.Errorf("unknown topic: code %d, want UNKNOWN_TOPIC_OR_PARTITION", code)
	}
	bad := produceReq("bad-input", 0, good)
	bad.Acks = 2
	if code, _ := produceCode(t, c, addr, bad); code != kerr.InvalidRequiredAcks.Code {
		t.Errorf("acks=2: code %d, want INVALID_REQUIRED_ACKS", code)
	}
	// Nothing of the rejected batches was appended: the next offset is 2.
	if code, off := produceCode(t, c, addr, produceReq("bad-input", 0, good)); code != 0 || off != 2 {
		t.Fatalf("after rejected batches: code %d offset %d, want offset 2", code, off)
	}
}

func TestIllegalTopicNames(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 1})
	for _, name := range []string{"", ".", "..", "has space", "slash/", string(make([]byte, 250))} {
		if code := createTopicRaw(t, c.Addr(1), name, 1); code != kerr.InvalidTopicException.Code {
			t.Errorf("CreateTopics %q: code %d, want INVALID_TOPIC_EXCEPTION", name, code)
		}
	}
	md := kmsg.NewPtrMetadataRequest()
	bad := "bad name"
	md.AllowAutoTopicCreation = true
	md.Topics = []kmsg.MetadataRequestTopic{{Topic: &bad}}
	resp := raw(t, c.Addr(1), md, 9).(*kmsg.MetadataResponse)
	if resp.Topics[0].ErrorCode != kerr.InvalidTopicException.Code {
		t.Errorf("Metadata auto-create of %q: code %d", bad, resp.Topics[0].ErrorCode)
	}
}

// stillServes checks the broker answers ApiVersions on a new connection.
func stillServes(t *testing.T, addr string) {
	t.Helper()
	resp := raw(t, addr, kmsg.NewPtrApiVersionsRequest(), 3).(*kmsg.ApiVersionsResponse)
	if resp.ErrorCode != 0 || len(resp.ApiKeys) == 0 {
		t.Fatalf("broker stopped serving: %+v", resp)
	}
}

// expectClosed writes b and expects the broker to close the connection.
func expectClosed(t *testing.T, addr string, b []byte) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write(b); err != nil {
		t.Fatal(err)
	}
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if n, err := conn.Read(make([]byte, 64)); err == nil {
		t.Fatalf("connection answered %d bytes instead of closing", n)
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("connection left open")
	}
}

func TestMalformedFrames(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 1, Properties: map[string]string{"socket.request.max.bytes": "1048576"}})
	addr := c.Addr(1)

	// Garbage: a frame whose body does not decode as its API.
	garbage := append(binary.BigEndian.AppendUint32(nil, 12), 0, 0, 0, 7, 0, 0, 0, 1, 0xff, 0xff, 0xde, 0xad)
	expectClosed(t, addr, garbage)
	stillServes(t, addr)

	// Over socket.request.max.bytes: closed after the size prefix alone.
	expectClosed(t, addr, binary.BigEndian.AppendUint32(nil, 1<<30))
	stillServes(t, addr)

	// A truncated frame: the size promises more than arrives, then EOF.
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	conn.Write(append(binary.BigEndian.AppendUint32(nil, 100), 0, 18, 0, 3))
	conn.Close()
	stillServes(t, addr)
}

func TestUnsupportedAPIsAndVersions(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 1})
	addr := c.Addr(1)

	// ApiVersions at a version the broker lacks: KIP-511 answer in v0 shape.
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	r := bufio.NewReader(conn)
	send := func(key, version int16, corr int32, body []byte) []byte {
		frame := binary.BigEndian.AppendUint16(nil, uint16(key))
		frame = binary.BigEndian.AppendUint16(frame, uint16(version))
		frame = binary.BigEndian.AppendUint32(frame, uint32(corr))
		frame = append(frame, 0, 1, 'x')
		frame = append(frame, body...)
		if _, err := conn.Write(append(binary.BigEndian.AppendUint32(nil, uint32(len(frame))), frame...)); err != nil {
			t.Fatal(err)
		}
		resp, err := wire.ReadFrame(r, 1<<20)
		if err != nil {
			t.Fatalf("key %d v%d: %v", key, version, err)
		}
		if got := int32(binary.BigEndian.Uint32(resp)); got != corr {
			t.Fatalf("correlation id %d, want %d", got, corr)
		}
		return resp[4:]
	}
	body := send(18, 99, 1, nil)
	av := kmsg.NewPtrApiVersionsResponse()
	av.SetVersion(0)
	if err := av.ReadFrom(body); err != nil || av.ErrorCode != kerr.UnsupportedVersion.Code || len(av.ApiKeys) == 0 {
		t.Fatalf("ApiVersions v99: %v %+v", err, av)
	}
	// Unknown API key: a bare UNSUPPORTED_VERSION, connection kept.
	if body := send(999, 0, 2, nil); int16(binary.BigEndian.Uint16(body)) != kerr.UnsupportedVersion.Code {
		t.Fatalf("unknown key answered %x", body)
	}
	// A known API this broker does not serve (DescribeQuorum, KRaft's).
	if body := send(55, 0, 3, nil); int16(binary.BigEndian.Uint16(body)) != kerr.UnsupportedVersion.Code {
		t.Fatalf("DescribeQuorum answered %x", body)
	}
	// Fetch v13 (Kafka 3.1's topic ids), above the served range: the
	// answer in the request's own shape.
	fetch := kmsg.NewPtrFetchRequest()
	fetch.Topics = []kmsg.FetchRequestTopic{{TopicID: [16]byte{1}, Partitions: []kmsg.FetchRequestTopicPartition{{Partition: 0}}}}
	if resp := raw(t, addr, fetch, 13).(*kmsg.FetchResponse); resp.ErrorCode != kerr.UnsupportedVersion.Code {
		t.Fatalf("Fetch v13: %+v", resp)
	}
	stillServes(t, addr)
}

func TestIdleConnectionsAreClosed(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 1, Properties: map[string]string{"connections.max.idle.ms": "300"}})
	conn, err := net.Dial("tcp", c.Addr(1))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := conn.Read(make([]byte, 1)); err == nil {
		t.Fatal("an idle connection received data")
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("the broker kept an idle connection open past connections.max.idle.ms")
	}
	stillServes(t, c.Addr(1))
}

func TestHugePartitionCountIsRefused(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 1})
	for _, n := range []int32{1<<31 - 1, 200000} {
		if code := createTopicRaw(t, c.Addr(1), "huge", n); code != kerr.InvalidPartitions.Code {
			t.Errorf("CreateTopics with %d partitions: code %d, want INVALID_PARTITIONS", n, code)
		}
	}
	if ok, _, _ := c.ZooKeeper().Exists("/brokers/topics/huge"); ok {
		t.Error("a refused topic was written to ZooKeeper")
	}
	stillServes(t, c.Addr(1))
}

// TestAcksZeroProduce: a good acks=0 produce gets no response at all; a
// failed one closes the connection, which is how the client learns of it.
func TestAcksZeroProduce(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 1})
	addr := c.Addr(1)
	if code := createTopicRaw(t, addr, "fire-and-forget", 1); code != 0 {
		t.Fatal(kerr.ErrorForCode(code))
	}
	c.WaitForLeader("fire-and-forget", 0)
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	r := bufio.NewReader(conn)
	good := produceReq("fire-and-forget", 0, recordBatch([]byte("x")))
	good.Acks = 0
	good.SetVersion(7)
	av := kmsg.NewPtrApiVersionsRequest()
	av.SetVersion(3)
	conn.Write(wire.AppendRequest(nil, 1, "acks0", good))
	conn.Write(wire.AppendRequest(nil, 2, "acks0", av))
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	frame, err := wire.ReadFrame(r, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if corr := int32(binary.BigEndian.Uint32(frame)); corr != 2 {
		t.Fatalf("first response has correlation id %d: the acks=0 produce was answered", corr)
	}
	bad := produceReq("no-such-topic", 0, recordBatch([]byte("x")))
	bad.Acks = 0
	bad.SetVersion(7)
	conn.Write(wire.AppendRequest(nil, 3, "acks0", bad))
	if n, err := conn.Read(make([]byte, 64)); err == nil {
		t.Fatalf("a failed acks=0 produce was answered with %d bytes instead of a close", n)
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("a failed acks=0 produce left the connection open")
	}
	stillServes(t, addr)
}

// A broker asked to lead a partition it holds no replica of answers as
// Kafka's ReplicaManager.getPartitionOrError: NOT_LEADER_OR_FOLLOWER when its
// metadata knows the partition, so that clients refresh metadata and retry
// (franz-go fails records after a few UNKNOWN_TOPIC_OR_PARTITION), and
// UNKNOWN_TOPIC_OR_PARTITION only for a partition that does not exist (and
// from WriteTxnMarkers, which 2.8 answers from the local logs alone). For a
// new partition this is no cure: its leader learns it from UpdateMetadata
// only after the LeaderAndIsr that creates it.
func TestPartitionNotHostedHere(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 2})
	ctlCreateTopic(t, c, "on-one", [][]int32{{1}}, nil)
	other := c.Addr(2) // its metadata knows on-one-0 (WaitForLeader asked it)

	good := recordBatch([]byte("a"))
	if code, _ := produceCode(t, c, other, produceReq("on-one", 0, good)); code != kerr.NotLeaderForPartition.Code {
		t.Errorf("produce to a broker without a replica: %v, want NOT_LEADER_OR_FOLLOWER", kerr.ErrorForCode(code))
	}
	if code, _ := produceCode(t, c, other, produceReq("on-one", 1, good)); code != kerr.UnknownTopicOrPartition.Code {
		t.Errorf("produce to a partition the topic lacks: %v, want UNKNOWN_TOPIC_OR_PARTITION", kerr.ErrorForCode(code))
	}
	fetch := raw(t, other, fetchReq("on-one", 0, 0, 0), 11).(*kmsg.FetchResponse)
	if code := fetch.Topics[0].Partitions[0].ErrorCode; code != kerr.NotLeaderForPartition.Code {
		t.Errorf("fetch from a broker without a replica: %v, want NOT_LEADER_OR_FOLLOWER", kerr.ErrorForCode(code))
	}
	// An empty record set, as Kafka's: librdkafka cannot parse a null one
	// and would never see the error.
	if fetch.Topics[0].Partitions[0].RecordBatches == nil {
		t.Errorf("fetch from a broker without a replica: null records, want an empty record set")
	}
	lo := kmsg.NewPtrListOffsetsRequest()
	lo.ReplicaID = -1
	lo.Topics = []kmsg.ListOffsetsRequestTopic{{Topic: "on-one", Partitions: []kmsg.ListOffsetsRequestTopicPartition{{Partition: 0, CurrentLeaderEpoch: -1, Timestamp: -1}}}}
	if code := raw(t, other, lo, 5).(*kmsg.ListOffsetsResponse).Topics[0].Partitions[0].ErrorCode; code != kerr.NotLeaderForPartition.Code {
		t.Errorf("ListOffsets on a broker without a replica: %v, want NOT_LEADER_OR_FOLLOWER", kerr.ErrorForCode(code))
	}
	ofe := kmsg.NewPtrOffsetForLeaderEpochRequest()
	ofe.ReplicaID = -1
	ofe.Topics = []kmsg.OffsetForLeaderEpochRequestTopic{{Topic: "on-one", Partitions: []kmsg.OffsetForLeaderEpochRequestTopicPartition{{Partition: 0, CurrentLeaderEpoch: -1, LeaderEpoch: 0}}}}
	if code := raw(t, other, ofe, 3).(*kmsg.OffsetForLeaderEpochResponse).Topics[0].Partitions[0].ErrorCode; code != kerr.NotLeaderForPartition.Code {
		t.Errorf("OffsetForLeaderEpoch on a broker without a replica: %v, want NOT_LEADER_OR_FOLLOWER", kerr.ErrorForCode(code))
	}
	// WriteTxnMarkers looks only at the local logs, as Kafka 2.8's does.
	wtm := kmsg.NewPtrWriteTxnMarkersRequest()
	wtm.Markers = []kmsg.WriteTxnMarkersRequestMarker{{ProducerID: 1, ProducerEpoch: 0, Committed: true,
		Topics: []kmsg.WriteTxnMarkersRequestMarkerTopic{{Topic: "on-one", Partitions: []int32{0}}}}}
	if code := raw(t, other, wtm, 0).(*kmsg.WriteTxnMarkersResponse).Markers[0].Topics[0].Partitions[0].ErrorCode; code != kerr.UnknownTopicOrPartition.Code {
		t.Errorf("WriteTxnMarkers on a broker without a replica: %v, want UNKNOWN_TOPIC_OR_PARTITION", kerr.ErrorForCode(code))
	}
	if code, _ := produceCode(t, c, c.Addr(1), produceReq("on-one", 0, good)); code != 0 {
		t.Errorf("produce to the leader: %v", kerr.ErrorForCode(code))
	}
}

// CreateTopics v5+ answers every config of the new topic, overrides with
// source TOPIC_CONFIG, and never a null list (Java's admin client reads it
// whenever the topic has no error), validate-only requests included.
func TestCreateTopicsAnswersEveryConfig(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 1})
	for _, validateOnly := range []bool{false, true} {
		req := kmsg.NewPtrCreateTopicsRequest()
		req.TimeoutMillis, req.ValidateOnly = 10000, validateOnly
		for _, name := range []string{"with-override", "plain"} {
			rt := kmsg.NewCreateTopicsRequestTopic()
			rt.Topic, rt.NumPartitions, rt.ReplicationFactor = fmt.Sprintf("%s-%v", name, validateOnly), 1, 1
			if name == "with-override" {
				rt.Configs = []kmsg.CreateTopicsRequestTopicConfig{{Name: "retention.ms", Value: kmsg.StringPtr("1000")}}
			}
			req.Topics = append(req.Topics, rt)
		}
		resp := raw(t, c.Addr(1), req, 5).(*kmsg.CreateTopicsResponse)
		for _, rt := range resp.Topics {
			if rt.ErrorCode != 0 {
				t.Fatalf("%s: %v", rt.Topic, kerr.ErrorForCode(rt.ErrorCode))
			}
			if rt.Configs == nil || len(rt.Configs) != len(brokerconfig.TopicConfigs()) {
				t.Errorf("%s: %d configs (null: %v), want all %d topic configs", rt.Topic, len(rt.Configs), rt.Configs == nil, len(brokerconfig.TopicConfigs()))
			}
			for _, cfg := range rt.Configs {
				if cfg.Name != "retention.ms" {
					continue
				}
				overridden := strings.HasPrefix(rt.Topic, "with-override")
				if got := cfg.Value != nil && *cfg.Value == "1000" && cfg.Source == int8(kmsg.ConfigSourceDynamicTopicConfig); got != overridden {
					t.Errorf("%s: retention.ms = %v (source %d), overridden %v", rt.Topic, derefStr(cfg.Value), cfg.Source, overridden)
				}
			}
		}
	}
}
