package broker_test

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/broker"
	"github.com/zkafka/zkafka/internal/testcluster"
	"github.com/zkafka/zkafka/internal/wait"
	"github.com/zkafka/zkafka/wire"
)

// legacyMessage encodes a v0 or v1 message with kmsg, filling its size
// and CRC.
func legacyMessage(magic int8, offset int64, attrs int8, ts int64, key, value []byte) []byte {
	var b []byte
	if magic == 0 {
		b = (&kmsg.MessageV0{Offset: offset, Magic: magic, Attributes: attrs, Key: key, Value: value}).AppendTo(nil)
	} else {
		b = (&kmsg.MessageV1{Offset: offset, Magic: magic, Attributes: attrs, Timestamp: ts, Key: key, Value: value}).AppendTo(nil)
	}
	binary.BigEndian.PutUint32(b[8:], uint32(len(b)-12))
	binary.BigEndian.PutUint32(b[12:], crc32.ChecksumIEEE(b[16:]))
	return b
}

func gzipBytes(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// fetchLegacy fetches topic-0 from offset at version v, returning the
// partition's answer.
func fetchLegacy(t *testing.T, addr, topic string, offset int64, v int16) kmsg.FetchResponseTopicPartition {
	t.Helper()
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID, req.MaxBytes = -1, 1<<20
	req.Topics = []kmsg.FetchRequestTopic{{Topic: topic, Partitions: []kmsg.FetchRequestTopicPartition{{Partition: 0, FetchOffset: offset, PartitionMaxBytes: 1 << 20, CurrentLeaderEpoch: -1, LogStartOffset: -1}}}}
	return raw(t, addr, req, v).(*kmsg.FetchResponse).Topics[0].Partitions[0]
}

// TestOldMessageFormats: Produce v0–v2 carry v0/v1 message sets, which the
// broker up-converts to v2 batches; Fetch v0–v3 get them down-converted
// to the format they read, and a modern consumer reads what old producers
// wrote. A corrupt message set is refused with CORRUPT_MESSAGE and nothing
// appended; a topic with message.downconversion.enable=false refuses old
// fetches with UNSUPPORTED_VERSION and serves new ones.
func TestOldMessageFormats(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 1})
	addr := c.Addr(1)
	createTopic(t, c, "old", 1, 1)

	produce := func(v int16, records []byte) kmsg.ProduceResponseTopicPartition {
		t.Helper()
		return raw(t, addr, produceReq("old", 0, records), v).(*kmsg.ProduceResponse).Topics[0].Partitions[0]
	}
	// 0.8's producer: two plain v0 messages.
	v0 := slices.Concat(legacyMessage(0, 0, 0, 0, []byte("a"), []byte("zero")), legacyMessage(0, 0, 0, 0, nil, []byte("one")))
	if p := produce(0, v0); p.ErrorCode != 0 || p.BaseOffset != 0 {
		t.Fatalf("Produce v0: %+v", p)
	}
	// 0.10's producer: a gzip wrapper of two v1 messages with relative offsets.
	inner := slices.Concat(legacyMessage(1, 0, 0, 1_600_000_000_000, []byte("b"), []byte("two")), legacyMessage(1, 1, 0, 1_600_000_000_005, nil, []byte("three")))
	wrapped := legacyMessage(1, 1, int8(wire.CodecGzip), 1_600_000_000_005, nil, gzipBytes(t, inner))
	if p := produce(2, wrapped); p.ErrorCode != 0 || p.BaseOffset != 2 || p.LogAppendTime != -1 {
		t.Fatalf("Produce v2: %+v", p)
	}

	// A bad CRC: refused, nothing appended.
	bad := legacyMessage(1, 0, 0, 1, nil, []byte("bad"))
	bad[len(bad)-1] ^= 0xff
	if p := produce(2, bad); p.ErrorCode != kerr.CorruptMessage.Code {
		t.Fatalf("corrupt message set: %+v", p)
	}

	values := []string{"zero", "one", "two", "three"}
	for _, tc := range []struct {
		version int16
		magic   int8
	}{{0, 0}, {1, 0}, {2, 1}, {3, 1}} {
		p := fetchLegacy(t, addr, "old", 1, tc.version)
		if p.ErrorCode != 0 || p.HighWatermark != 4 {
			t.Fatalf("Fetch v%d: %+v", tc.version, p)
		}
		set, err := wire.ReadMessageSet(p.RecordBatches)
		if err != nil || set.Magic != tc.magic {
			t.Fatalf("Fetch v%d: magic %d, %v; want magic %d", tc.version, set.Magic, err, tc.magic)
		}
		var got []string
		for _, m := range set.Messages {
			got = append(got, string(m.Value))
			if tc.magic == 1 && m.Offset == 3 && m.Timestamp != 1_600_000_000_005 {
				t.Errorf("Fetch v%d: offset 3 has timestamp %d", tc.version, m.Timestamp)
			}
		}
		// Offset 0 sat alone in an uncompressed batch: skipped; offsets 2–3
		// are one compressed wrapper, read whole.
		if want := values[1:]; !slices.Equal(got, want) {
			t.Errorf("Fetch v%d from offset 1: %q, want %q", tc.version, got, want)
		}
	}

	// What the old producers wrote, a modern consumer reads.
	cl := c.Client(kgo.ConsumeTopics("old"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	var got []string
	ctx := ctxT(t, 30*time.Second)
	for len(got) < len(values) {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			got = append(got, string(r.Value))
			if r.Offset == 2 && (string(r.Key) != "b" || r.Timestamp.UnixMilli() != 1_600_000_000_000) {
				t.Errorf("record 2: key %q at %v", r.Key, r.Timestamp)
			}
		})
	}
	if !slices.Equal(got, values) {
		t.Errorf("modern consumer read %q, want %q", got, values)
	}

	adm := kadm.NewClient(c.Client())
	if _, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Name: "message.downconversion.enable", Value: kmsg.StringPtr("false")}}, "old"); err != nil {
		t.Fatal(err)
	}
	wait.For(t, 10*time.Second, "old fetches refused", func() bool {
		return fetchLegacy(t, addr, "old", 0, 3).ErrorCode == kerr.UnsupportedVersion.Code
	})
	if p := fetchLegacy(t, addr, "old", 0, 4); p.ErrorCode != 0 || len(p.RecordBatches) == 0 {
		t.Errorf("Fetch v4 with down-conversion disabled: %+v", p)
	}
}

// TestOldClientsWithKafkaPython: kafka-python pinned to api_version 0.9
// (Produce v1, Fetch v1: magic 0, uncompressed and LZ4) and 0.10 (Produce
// v2, Fetch v2: magic 1, gzip) writes and reads back through the up- and
// down-conversion, or on a topic that stores its format through the
// conversion to it.
func TestOldClientsWithKafkaPython(t *testing.T) {
	py := python3With(t, "kafka", "python3-kafka")
	c := testcluster.Start(t, testcluster.Options{Brokers: 1})
	// kafka-python writes a 0.9 LZ4 frame with the 0.8 clients' header
	// checksum and reads it back only in that form.
	// The last two topics store the client's format (message.format.version).
	for _, tc := range []struct{ version, codec, format string }{
		{"0.9", "", ""}, {"0.9", "lz4", ""}, {"0.10", "gzip", ""}, {"0.9", "lz4", "0.9.0"}, {"0.10", "gzip", "0.10.2"},
	} {
		topic := "kafka-python-" + strings.ReplaceAll(tc.version, ".", "-") + tc.codec
		if tc.format == "" {
			createTopic(t, c, topic, 1, 1)
		} else {
			topic += "-stored"
			createTopicWithConfigs(t, c, topic, 1, map[string]*string{"message.format.version": kmsg.StringPtr(tc.format)})
		}
		args := []string{"testdata/kafka_python_old.py", c.Addr(1), topic, tc.version}
		if tc.codec != "" {
			args = append(args, tc.codec)
		}
		out, err := exec.CommandContext(ctxT(t, 60*time.Second), py, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("kafka-python %s: %v\n%s", tc.version, err, out)
		}
		if got, want := string(out), "k1=hello@0\nk2=world@1\n"; got != want {
			t.Errorf("kafka-python %s read:\n%s\nwant:\n%s", tc.version, got, want)
		}
	}
}

// TestOldClientsWithKcat: librdkafka told the broker is 0.8.2 (no
// ApiVersions, Produce and Fetch v0, message format v0) or 0.10.0
// (Produce and Fetch v2, format v1, gzip) produces and consumes, on a
// topic in 2.8's format and on one that stores the client's.
func TestOldClientsWithKcat(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 1})
	bootstrap := strings.Join(c.BootstrapAddrs(), ",")
	for _, tc := range []struct {
		fallback string
		extra    []string
		format   string // the topic's message.format.version; "" for 2.8's default
	}{
		{"0.8.2", nil, ""},
		{"0.10.0", []string{"-z", "gzip"}, ""},
		{"0.8.2", nil, "0.8.2"},
		{"0.10.0", []string{"-z", "gzip"}, "0.10.0"},
	} {
		topic := "kcat-" + strings.ReplaceAll(tc.fallback, ".", "-")
		if tc.format == "" {
			createTopic(t, c, topic, 1, 1)
		} else {
			topic += "-stored"
			createTopicWithConfigs(t, c, topic, 1, map[string]*string{"message.format.version": kmsg.StringPtr(tc.format)})
		}
		old := []string{"-b", bootstrap, "-X", "api.version.request=false", "-X", "broker.version.fallback=" + tc.fallback, "-t", topic}
		kcat(t, "k1:hello\nk2:world\n", append(slices.Concat(old, []string{"-P", "-K:"}), tc.extra...)...)
		got := kcat(t, "", slices.Concat(old, []string{"-C", "-o", "beginning", "-e", "-f", "%k=%s@%o\n"})...)
		if want := "k1=hello@0\nk2=world@1\n"; !strings.Contains(got, want) {
			t.Errorf("broker.version.fallback=%s read:\n%s\nwant:\n%s", tc.fallback, got, want)
		}
		// And the other way round: a modern kcat reads what the old one wrote.
		if got := kcat(t, "", "-b", bootstrap, "-t", topic, "-C", "-o", "beginning", "-e", "-f", "%k=%s@%o\n"); !strings.Contains(got, "k1=hello@0\nk2=world@1\n") {
			t.Errorf("modern kcat read what the %s one wrote:\n%s", tc.fallback, got)
		}
	}
}

// TestLegacyMessageFormatTopics: a topic whose message.format.version is
// 0.10.2 stores v1 messages and one at 0.9.0 v0 messages, as Kafka 2.8
// does, on the leader and its follower alike, with no leader-epoch cache. A
// modern producer's records are converted (offsets, keys and v1 timestamps
// kept) and a modern consumer reads them back; old fetches of the format
// the topic stores get the stored bytes, with down-conversion disabled too.
// What the older formats cannot hold is refused: idempotent and
// transactional produces and record headers with
// UNSUPPORTED_FOR_MESSAGE_FORMAT, and ListOffsets by time on v0 messages.
// A Produce v3 carrying a message set is INVALID_RECORD.
func TestLegacyMessageFormatTopics(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 2})
	ctx := ctxT(t, 60*time.Second)
	for _, tc := range []struct {
		version string
		magic   int8
	}{{"0.10.2", 1}, {"0.9.0", 0}} {
		topic := "format-" + strings.ReplaceAll(tc.version, ".", "-")
		createTopicWithConfigs(t, c, topic, 2, map[string]*string{
			"message.format.version":        kmsg.StringPtr(tc.version),
			"message.downconversion.enable": kmsg.StringPtr("false"),
		})
		leader := c.WaitForLeader(topic, 0)
		addr := c.Addr(leader)

		p := c.Client(kgo.DisableIdempotentWrite(), kgo.DefaultProduceTopic(topic), kgo.ProducerBatchCompression(kgo.GzipCompression()))
		start := time.UnixMilli(1_700_000_000_000)
		var sent []*kgo.Record
		for i := range 6 {
			value := strings.Repeat(fmt.Sprint("v", i), 40) // compressible, so that kgo compresses
			sent = append(sent, &kgo.Record{Key: []byte(fmt.Sprint("k", i)), Value: []byte(value), Timestamp: start.Add(time.Duration(i) * time.Second)})
		}
		if err := p.ProduceSync(ctx, sent[:3]...).FirstErr(); err != nil {
			t.Fatalf("%s: gzip produce: %v", topic, err)
		}
		plain := c.Client(kgo.DisableIdempotentWrite(), kgo.DefaultProduceTopic(topic), kgo.ProducerBatchCompression(kgo.NoCompression()))
		if err := plain.ProduceSync(ctx, sent[3:]...).FirstErr(); err != nil {
			t.Fatalf("%s: plain produce: %v", topic, err)
		}

		// Both replicas hold the same messages in the topic's format.
		c.WaitFor(topic+" replicated", func() bool {
			for id := int32(1); id <= 2; id++ {
				if l, ok := broker.LocalLog(c.Broker(id), topic, 0); !ok || l.LogEndOffset() != 6 {
					return false
				}
			}
			return true
		})
		var stored [][]byte
		for id := int32(1); id <= 2; id++ {
			l, _ := broker.LocalLog(c.Broker(id), topic, 0)
			data, err := l.Read(0, 1<<20, 6, true)
			if err != nil {
				t.Fatal(err)
			}
			var magics []int8
			for b, err := range wire.Batches(data) {
				if err != nil {
					t.Fatal(err)
				}
				magics = append(magics, b.Magic)
			}
			if want := slices.Repeat([]int8{tc.magic}, 4); !slices.Equal(magics, want) {
				t.Fatalf("%s on broker %d: stored magics %v, want a wrapper and three messages of magic %d", topic, id, magics, tc.magic)
			}
			if _, ok := l.LatestEpoch(); ok {
				t.Fatalf("%s on broker %d: leader epochs %v in a v%d log", topic, id, l.LeaderEpochs(), tc.magic)
			}
			stored = append(stored, data)
		}
		if !bytes.Equal(stored[0], stored[1]) {
			t.Fatalf("%s: the follower's log differs from the leader's", topic)
		}

		cl := c.Client(kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
		var got []string
		for len(got) < len(sent) {
			fs := cl.PollFetches(ctx)
			if err := fs.Err0(); err != nil {
				t.Fatal(err)
			}
			fs.EachRecord(func(r *kgo.Record) {
				ts := r.Timestamp.UnixMilli()
				if tc.magic == 0 && r.Timestamp.IsZero() {
					ts = 0 // v0 has none: kgo leaves the time zero
				}
				got = append(got, fmt.Sprintf("%d:%s=%s@%d", r.Offset, r.Key, r.Value, ts))
			})
		}
		var want []string
		for i, r := range sent {
			ts := r.Timestamp.UnixMilli()
			if tc.magic == 0 {
				ts = 0
			}
			want = append(want, fmt.Sprintf("%d:%s=%s@%d", i, r.Key, r.Value, ts))
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: consumed %q, want %q", topic, got, want)
		}

		// An old fetch of the stored format, or of a newer one, gets the bytes as stored, though
		// down-conversion is disabled; an older one would need it and is refused.
		oldFetch := int16(2)
		if tc.magic == 0 {
			oldFetch = 0
		}
		if fp := fetchLegacy(t, addr, topic, 0, oldFetch); fp.ErrorCode != 0 || !bytes.Equal(fp.RecordBatches, stored[0]) {
			t.Errorf("%s: Fetch v%d: error %d, %d bytes; want the %d stored", topic, oldFetch, fp.ErrorCode, len(fp.RecordBatches), len(stored[0]))
		}
		if tc.magic == 1 {
			if fp := fetchLegacy(t, addr, topic, 0, 0); fp.ErrorCode != kerr.UnsupportedVersion.Code {
				t.Errorf("%s: Fetch v0 with down-conversion disabled: error %d, want UNSUPPORTED_VERSION", topic, fp.ErrorCode)
			}
		}

		// What the format cannot hold.
		idem := c.Client(kgo.DefaultProduceTopic(topic), kgo.RecordRetries(1))
		if err := idem.ProduceSync(ctx, kgo.StringRecord("idempotent")).FirstErr(); !errors.Is(err, kerr.UnsupportedForMessageFormat) {
			t.Errorf("%s: idempotent produce: %v, want UNSUPPORTED_FOR_MESSAGE_FORMAT", topic, err)
		}
		withHeader := &kgo.Record{Value: []byte("h"), Headers: []kgo.RecordHeader{{Key: "trace", Value: []byte("1")}}}
		if err := plain.ProduceSync(ctx, withHeader).FirstErr(); !errors.Is(err, kerr.UnsupportedForMessageFormat) {
			t.Errorf("%s: a record with headers: %v, want UNSUPPORTED_FOR_MESSAGE_FORMAT", topic, err)
		}
		lo := kmsg.NewPtrListOffsetsRequest()
		lo.ReplicaID = -1
		lo.Topics = []kmsg.ListOffsetsRequestTopic{{Topic: topic, Partitions: []kmsg.ListOffsetsRequestTopicPartition{{Partition: 0, Timestamp: start.UnixMilli() + 1500, CurrentLeaderEpoch: -1}}}}
		lp := raw(t, addr, lo, 5).(*kmsg.ListOffsetsResponse).Topics[0].Partitions[0]
		switch {
		case tc.magic == 0 && lp.ErrorCode != kerr.UnsupportedForMessageFormat.Code:
			t.Errorf("%s: ListOffsets by time: %+v, want UNSUPPORTED_FOR_MESSAGE_FORMAT", topic, lp)
		case tc.magic == 1 && (lp.ErrorCode != 0 || lp.Offset != 2 || lp.Timestamp != start.UnixMilli()+2000):
			t.Errorf("%s: ListOffsets by time: %+v, want offset 2", topic, lp)
		}
		if l, _ := broker.LocalLog(c.Broker(leader), topic, 0); l.LogEndOffset() != 6 {
			t.Errorf("%s: LEO %d after refused produces, want 6", topic, l.LogEndOffset())
		}
	}

	v3 := raw(t, c.Addr(1), produceReq("format-0-10-2", 0, legacyMessage(1, 0, 0, 1, nil, []byte("x"))), 3).(*kmsg.ProduceResponse)
	if p := v3.Topics[0].Partitions[0]; p.ErrorCode != kerr.InvalidRecord.Code {
		t.Errorf("Produce v3 with a v1 message set: %+v, want INVALID_RECORD", p)
	}
}
