package broker_test

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
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

// TestOldClientsWithKcat: librdkafka told the broker is 0.8.2 (no
// ApiVersions, Produce and Fetch v0, message format v0) or 0.10.0
// (Produce and Fetch v2, format v1, gzip) produces and consumes.
// TestOldClientsWithKafkaPython: kafka-python pinned to api_version 0.9
// (Produce v1, Fetch v1: magic 0, uncompressed and LZ4) and 0.10 (Produce
// v2, Fetch v2: magic 1, gzip) writes and reads back through the up- and
// down-conversion.
func TestOldClientsWithKafkaPython(t *testing.T) {
	py := python3With(t, "kafka", "python3-kafka")
	c := testcluster.Start(t, testcluster.Options{Brokers: 1})
	// kafka-python writes a 0.9 LZ4 frame with the 0.8 clients' header
	// checksum and reads it back only in that form.
	for _, tc := range []struct{ version, codec string }{{"0.9", ""}, {"0.9", "lz4"}, {"0.10", "gzip"}} {
		topic := "kafka-python-" + strings.ReplaceAll(tc.version, ".", "-") + tc.codec
		createTopic(t, c, topic, 1, 1)
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

func TestOldClientsWithKcat(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 1})
	bootstrap := strings.Join(c.BootstrapAddrs(), ",")
	for _, tc := range []struct {
		fallback string
		extra    []string
	}{
		{"0.8.2", nil},
		{"0.10.0", []string{"-z", "gzip"}},
	} {
		topic := "kcat-" + strings.ReplaceAll(tc.fallback, ".", "-")
		createTopic(t, c, topic, 1, 1)
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
