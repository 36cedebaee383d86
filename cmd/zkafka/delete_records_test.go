package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/zkafka/zkafka/internal/testcluster"
)

// TestDeleteRecordsTool: kafka-delete-records.sh's output for a partition
// trimmed and one asked past its end, and its input errors.
func TestDeleteRecordsTool(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{})
	createTopicWithAssignment(t, c, "trim", []int32{1}, []int32{1})
	cl := c.Client(kgo.RecordPartitioner(kgo.ManualPartitioner()))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := range 10 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "trim", Partition: int32(i % 2), Value: []byte("v")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	bootstrap := strings.Join(c.BootstrapAddrs(), ",")
	plan := writeTempFile(t, "offsets.json", `{"partitions":[{"topic":"trim","partition":0,"offset":4},{"topic":"trim","partition":1,"offset":9}],"version":1}`)
	expectZkafka(t, runZkafka("delete-records", "--bootstrap-server", bootstrap, "--offset-json-file", plan), 0,
		"Executing records delete operation\n"+
			"Records delete operation completed:\n"+
			"partition: trim-0\tlow_watermark: 4\n"+
			"partition: trim-1\terror: org.apache.kafka.common.errors.OffsetOutOfRangeException: The requested offset is not within the range of offsets maintained by the server.\n")
	all := writeTempFile(t, "all.json", `{"partitions":[{"topic":"trim","partition":1,"offset":-1}]}`)
	expectZkafka(t, runZkafka("delete-records", "--bootstrap-server", bootstrap, "--offset-json-file", all), 0,
		"Executing records delete operation\nRecords delete operation completed:\npartition: trim-1\tlow_watermark: 5\n")

	for _, tc := range []struct {
		name, json, want string
	}{
		{"duplicates", `{"partitions":[{"topic":"trim","partition":0,"offset":1},{"topic":"trim","partition":0,"offset":2}],"version":1}`,
			"Offset json file contains duplicate topic partitions: trim-0"},
		{"version", `{"partitions":[],"version":2}`, "Not supported version field value 2"},
		{"no partitions", `{"version":1}`, "Missing partitions field"},
		{"no offset", `{"partitions":[{"topic":"trim","partition":0}]}`, "No such field exists: `offset`"},
		{"not json", `{"partitions":`, "The input string is not a valid JSON"},
	} {
		r := runZkafka("delete-records", "--bootstrap-server", bootstrap, "--offset-json-file", writeTempFile(t, "bad.json", tc.json))
		if r.code != 1 || r.stdout != "" || strings.TrimSpace(r.stderr) != tc.want {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want 1 and %q", tc.name, r.code, r.stdout, r.stderr, tc.want)
		}
	}
	if r := runZkafka("delete-records", "--offset-json-file", plan); r.code != 1 || strings.TrimSpace(r.stderr) != `Missing required argument "[bootstrap-server]"` {
		t.Errorf("no --bootstrap-server: exit %d, stderr %q", r.code, r.stderr)
	}
}
