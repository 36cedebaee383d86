package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/internal/testcluster"
)

// TestDumpLogSegments dumps the segment, index and time index files a
// broker's storage wrote, after a clean shutdown trimmed the indexes, and
// compares them with Kafka 2.8's DumpLogSegments output.
func TestDumpLogSegments(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Properties: map[string]string{
		"offsets.topic.num.partitions": "1", "log.index.interval.bytes": "1",
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	adm := kadm.NewClient(c.Client())
	if resp, err := adm.CreateTopic(ctx, 1, 1, map[string]*string{"index.interval.bytes": kmsg.StringPtr("1")}, "dump"); err != nil || resp.Err != nil {
		t.Fatalf("create topic: %v %v", err, resp.Err)
	}
	c.WaitForLeader("dump", 0)
	plain := c.Client(kgo.DisableIdempotentWrite(), kgo.ProducerBatchCompression(kgo.NoCompression()))
	base := time.UnixMilli(1614697556567)
	for i, r := range []*kgo.Record{
		{Key: []byte("k1"), Value: []byte("hello")},
		{Value: []byte("no key"), Headers: []kgo.RecordHeader{{Key: "h1", Value: []byte("v")}, {Key: "h2"}}},
		{Key: []byte("k3"), Value: []byte("third")},
	} {
		r.Topic, r.Timestamp = "dump", base.Add(time.Duration(i)*time.Second)
		if err := plain.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	gzipped := c.Client(kgo.DisableIdempotentWrite(), kgo.ProducerBatchCompression(kgo.GzipCompression()))
	if err := gzipped.ProduceSync(ctx, &kgo.Record{Topic: "dump", Value: []byte(strings.Repeat("squeezed ", 20)), Timestamp: base.Add(3 * time.Second)}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if err := adm.CommitAllOffsets(ctx, "dumpers", kadm.OffsetsFromRecords(kgo.Record{Topic: "dump", Partition: 0, Offset: 3})); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(c.Properties(1)["log.dirs"], "dump-0")
	offsetsDir := filepath.Join(c.Properties(1)["log.dirs"], "__consumer_offsets-0")
	c.StopBroker(1)
	segment := filepath.Join(dir, "00000000000000000000")

	r := runZkafka("dump-log", "--files", segment+".log")
	want := "Dumping " + segment + ".log\nStarting offset: 0\n" +
		"baseOffset: 0 lastOffset: 0 count: 1 baseSequence: 0 lastSequence: 0 producerId: -1 producerEpoch: -1 partitionLeaderEpoch: 0 " +
		"isTransactional: false isControl: false position: 0 CreateTime: 1614697556567 size: 75 magic: 2 compresscodec: NONE crc: \\d+ isvalid: true\n" +
		"baseOffset: 1 lastOffset: 1 count: 1 baseSequence: 0 lastSequence: 0 producerId: -1 producerEpoch: -1 partitionLeaderEpoch: 0 " +
		"isTransactional: false isControl: false position: 75 CreateTime: 1614697557567 size: 83 magic: 2 compresscodec: NONE crc: \\d+ isvalid: true\n" +
		"baseOffset: 2 lastOffset: 2 count: 1 baseSequence: 0 lastSequence: 0 producerId: -1 producerEpoch: -1 partitionLeaderEpoch: 0 " +
		"isTransactional: false isControl: false position: 158 CreateTime: 1614697558567 size: 75 magic: 2 compresscodec: NONE crc: \\d+ isvalid: true\n" +
		"baseOffset: 3 lastOffset: 3 count: 1 baseSequence: 0 lastSequence: 0 producerId: -1 producerEpoch: -1 partitionLeaderEpoch: 0 " +
		"isTransactional: false isControl: false position: 233 CreateTime: 1614697559567 size: \\d+ magic: 2 compresscodec: GZIP crc: \\d+ isvalid: true\n$"
	if r.code != 0 || !regexp.MustCompile("^"+want).MatchString(r.stdout) {
		t.Errorf("shallow dump: exit %d\n%s\nwant\n%s\nstderr %s", r.code, r.stdout, want, r.stderr)
	}

	gzipBatch := regexp.MustCompile(`position: 233 CreateTime: \d+ size: (\d+)`).FindStringSubmatch(r.stdout)
	if gzipBatch == nil {
		t.Fatal("the shallow dump has no batch at position 233")
	}
	gzipSize := gzipBatch[1]
	r = runZkafka("dump-log", "--files", segment+".log", "--print-data-log")
	// Kafka 2.8's record line: the record's metadata and its batch's.
	meta := func(offset int, keySize, valueSize int, position, size, codec string) string {
		return fmt.Sprintf("| offset: %d isValid: true crc: null keySize: %d valueSize: %d CreateTime: %d baseOffset: %d lastOffset: %d "+
			"baseSequence: 0 lastSequence: 0 producerEpoch: -1 partitionLeaderEpoch: 0 batchSize: %s magic: 2 compressType: %s position: %s",
			offset, keySize, valueSize, base.UnixMilli()+int64(offset)*1000, offset, offset, size, codec, position)
	}
	records := []string{
		meta(0, 2, 5, "0", "75", "NONE") + " sequence: 0 headerKeys: [] key: k1 payload: hello\n",
		meta(1, -1, 6, "75", "83", "NONE") + " sequence: 0 headerKeys: [h1,h2] payload: no key\n",
		meta(2, 2, 5, "158", "75", "NONE") + " sequence: 0 headerKeys: [] key: k3 payload: third\n",
		meta(3, -1, 180, "233", gzipSize, "GZIP") + " sequence: 0 headerKeys: [] payload: " + strings.Repeat("squeezed ", 20) + "\n",
	}
	lines := strings.SplitAfter(r.stdout, "\n")
	if r.code != 0 || len(lines) != 11 {
		t.Fatalf("data dump: exit %d\n%s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	for i, rec := range records {
		if lines[3+2*i] != rec {
			t.Errorf("record line %d: %q, want %q", i, lines[3+2*i], rec)
		}
	}
	deep := runZkafka("dump-log", "--files", segment+".log", "--deep-iteration")
	if want := meta(1, -1, 6, "75", "83", "NONE") + " sequence: 0 headerKeys: [h1,h2]\n"; !strings.Contains(deep.stdout, want) {
		t.Errorf("deep iteration without data:\n%s\nwant the line\n%s", deep.stdout, want)
	}
	skip := runZkafka("dump-log", "--files", segment+".log", "--print-data-log", "--skip-record-metadata")
	if !strings.Contains(skip.stdout, "\n| key: k1 payload: hello\n") || !strings.Contains(skip.stdout, "\n payload: no key\n") {
		t.Errorf("--skip-record-metadata: exit %d\n%s\nstderr %s", skip.code, skip.stdout, skip.stderr)
	}

	expectZkafka(t, runZkafka("dump-log", "--files", segment+".index,"+segment+".timeindex"), 0,
		"Dumping "+segment+".index\noffset: 1 position: 75\noffset: 2 position: 158\noffset: 3 position: 233\n"+
			"Dumping "+segment+".timeindex\ntimestamp: 1614697557567 offset: 1\ntimestamp: 1614697558567 offset: 2\ntimestamp: 1614697559567 offset: 3\n")
	expectZkafka(t, runZkafka("dump-log", "--files", segment+".index", "--index-sanity-check"), 0,
		"Dumping "+segment+".index\n"+segment+".index passed sanity check.\n")

	r = runZkafka("dump-log", "--files", filepath.Join(offsetsDir, "00000000000000000000.log"), "--offsets-decoder")
	if r.code != 0 || !strings.Contains(r.stdout, " key: offset::dumpers:dump:0 payload: 4\n") {
		t.Errorf("offsets decoder: exit %d\n%s\nstderr %s", r.code, r.stdout, r.stderr)
	}

	// A torn write (the first batch and 25 bytes of the second) at the end of the segment is reported, not fatal.
	torn := filepath.Join(t.TempDir(), "00000000000000000000.log")
	data, err := os.ReadFile(segment + ".log")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(torn, data[:100], 0o644); err != nil {
		t.Fatal(err)
	}
	r = runZkafka("dump-log", "--files", torn)
	if r.code != 0 || !strings.HasSuffix(r.stdout, "isvalid: true\nFound 25 invalid bytes at the end of 00000000000000000000.log\n") {
		t.Errorf("torn segment: exit %d\n%s", r.code, r.stdout)
	}
}

func TestDumpLogErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"dump-log", "--print-data-log"}, 1, "Missing required argument \"[files]\"\n"},
		{[]string{"dump-log", "--files", "x.log", "--frob"}, 1, "frob is not a recognized option\n"},
		{[]string{"dump-log", "--files", filepath.Join(dir, "00000000000000000000.log")}, 1,
			"Error dumping " + filepath.Join(dir, "00000000000000000000.log") + ": open " + filepath.Join(dir, "00000000000000000000.log") + ": no such file or directory\n"},
		{[]string{"dump-log", "--files", filepath.Join(dir, "notes.txt")}, 0, "Ignoring unknown file " + filepath.Join(dir, "notes.txt") + "\n"},
		{[]string{"dump-log", "--files", filepath.Join(dir, "abc.log")}, 1, "Error dumping " + filepath.Join(dir, "abc.log") + ": For input string: \"abc\"\n"},
	} {
		r := runZkafka(tc.args...)
		if r.code != tc.code || r.stderr != tc.stderr {
			t.Errorf("zkafka %v: exit %d, stderr %q; want %d, %q", tc.args, r.code, r.stderr, tc.code, tc.stderr)
		}
	}
}

// TestOffsetsDecoderGroupMetadata checks the rendering of a group record as
// Kafka's OffsetsMessageParser prints it.
func TestOffsetsDecoderGroupMetadata(t *testing.T) {
	assignment := kmsg.ConsumerMemberAssignment{Topics: []kmsg.ConsumerMemberAssignmentTopic{{Topic: "t", Partitions: []int32{0, 1}}}}
	v := kmsg.GroupMetadataValue{Version: 3, ProtocolType: "consumer", Generation: 4, Protocol: kmsg.StringPtr("range"),
		Members: []kmsg.GroupMetadataValueMember{{MemberID: "m-1", Assignment: assignment.AppendTo(nil)}}}
	key, value, err := groupMetadataJSON(kmsg.GroupMetadataKey{Version: 2, Group: "g"}, v)
	if err != nil || key != `{"metadata":"g"}` ||
		value != `{"protocolType":"consumer","protocol":"range","generationId":4,"assignment":"{m-1=[t-0, t-1]}"}` {
		t.Errorf("key %s value %s err %v", key, value, err)
	}
	v = kmsg.GroupMetadataValue{ProtocolType: "connect", Members: []kmsg.GroupMetadataValueMember{{MemberID: "w", Assignment: []byte{0, 0x0a, 0xff}}}}
	if _, value, _ := groupMetadataJSON(kmsg.GroupMetadataKey{Group: "c"}, v); value != `{"protocolType":"connect","protocol":null,"generationId":0,"assignment":"{w=AFF}"}` {
		t.Errorf("non-consumer group: %s", value)
	}
}

// TestDumpLogLegacySegments dumps the segments of topics whose
// message.format.version stores v1 (0.10.2) and v0 (0.9.0) messages, in
// Kafka 2.8's layout for them: a line per message (a compressed wrapper's
// offset is its last record's) and, per record, its own CRC.
func TestDumpLogLegacySegments(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	adm := kadm.NewClient(c.Client())
	ts := time.UnixMilli(1614697556567)
	for _, v := range []string{"0.10.2", "0.9.0"} {
		topic := "dump-" + strings.ReplaceAll(v, ".", "-")
		if resp, err := adm.CreateTopic(ctx, 1, 1, map[string]*string{"message.format.version": kmsg.StringPtr(v)}, topic); err != nil || resp.Err != nil {
			t.Fatalf("create topic: %v %v", err, resp.Err)
		}
		c.WaitForLeader(topic, 0)
		plain := c.Client(kgo.DisableIdempotentWrite(), kgo.ProducerBatchCompression(kgo.NoCompression()))
		if err := plain.ProduceSync(ctx, &kgo.Record{Topic: topic, Key: []byte("k1"), Value: []byte("hello"), Timestamp: ts}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		gzipped := c.Client(kgo.DisableIdempotentWrite(), kgo.ProducerBatchCompression(kgo.GzipCompression()))
		if err := gzipped.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte(strings.Repeat("squeezed ", 20)), Timestamp: ts.Add(time.Second)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	logDirs := c.Properties(1)["log.dirs"]
	c.StopBroker(1)
	for _, tc := range []struct {
		topic, magic, plainSize string
		ts0, ts1                string
	}{
		{"dump-0-10-2", "1", "41", "CreateTime: 1614697556567", "CreateTime: 1614697557567"},
		{"dump-0-9-0", "0", "33", "NoTimestampType: -1", "NoTimestampType: -1"},
	} {
		segment := filepath.Join(logDirs, tc.topic+"-0", "00000000000000000000.log")
		r := runZkafka("dump-log", "--files", segment, "--print-data-log")
		rec := func(offset, size, codec, position, key, rest string) string {
			return `\| offset: ` + offset + ` isValid: true crc: (\d+) keySize: ` + key + ` ` + tc.ts0[:strings.Index(tc.ts0, ":")] + `: -?\d+ baseOffset: ` + offset +
				` lastOffset: ` + offset + ` baseSequence: -1 lastSequence: -1 producerEpoch: -1 partitionLeaderEpoch: -1 batchSize: ` + size +
				` magic: ` + tc.magic + ` compressType: ` + codec + ` position: ` + position + ` crc: \d+ isvalid: true ` + rest + "\n"
		}
		want := "^Dumping " + regexp.QuoteMeta(segment) + "\nStarting offset: 0\n" +
			"offset: 0 position: 0 " + tc.ts0 + " size: " + tc.plainSize + " magic: " + tc.magic + ` compresscodec: NONE crc: (\d+) isvalid: true` + "\n" +
			rec("0", tc.plainSize, "NONE", "0", "2 valueSize: 5", "key: k1 payload: hello") +
			"offset: 1 position: " + tc.plainSize + " " + tc.ts1 + ` size: \d+ magic: ` + tc.magic + ` compresscodec: GZIP crc: \d+ isvalid: true` + "\n" +
			rec("1", `\d+`, "GZIP", tc.plainSize, "-1 valueSize: 180", "payload: "+strings.Repeat("squeezed ", 20)) + "$"
		m := regexp.MustCompile(want).FindStringSubmatch(r.stdout)
		if r.code != 0 || m == nil || m[1] != m[2] {
			t.Errorf("%s: exit %d\n%s\nwant\n%s\n(the message's CRC on both lines)\nstderr %s", tc.topic, r.code, r.stdout, want, r.stderr)
		}
	}
}
