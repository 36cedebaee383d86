package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/zkafka/zkafka/consumer"
	"github.com/zkafka/zkafka/internal/testcluster"
	"github.com/zkafka/zkafka/internal/zktest"
	"github.com/zkafka/zkafka/zkpaths"
)

func TestConsoleConsumerArguments(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"console-consumer", "--whitelist", "t.*", "--bootstrap-server", "h:9092"}, "--whitelist needs --zookeeper"},
		{[]string{"console-consumer", "--topic", "t", "--bootstrap-server", "h:9092", "--partition", "-1"}, "-1 is not a partition id"},
		{[]string{"console-consumer", "--topic", "t", "--bootstrap-server", "h:9092", "--rebalance-protocol", "lazy"}, `"lazy" is not eager, cooperative or consumer`},
		{[]string{"console-consumer", "--topic", "t", "--bootstrap-server", "h:9092", "--consumer-property", "group.protocol=consumer",
			"--rebalance-protocol", "cooperative"}, "--rebalance-protocol cooperative is a classic protocol"},
		{[]string{"console-consumer", "--topic", "t", "--bootstrap-server", "h:9092", "--rebalance-protocol", "consumer",
			"--partition-assignment-strategy", "range"}, "partition.assignment.strategy cannot be set when group.protocol=consumer"},
		{[]string{"console-consumer", "--topic", "t", "--zookeeper", "h:2181", "--group-instance-id", "i"}, "needs --bootstrap-server"},
		{[]string{"console-consumer", "--topic", "t", "--zookeeper", "h:2181", "--partition-assignment-strategy", "sticky"}, "invalid consumer config"},
		{[]string{"console-consumer", "--topic", "t", "--zookeeper", "h:2181", "--consumer-property", "fetch.frobs=1"}, `unknown property "fetch.frobs"`},
		{[]string{"console-consumer", "--topic", "t", "--zookeeper", "h:2181", "--consumer-property", "novalue"}, "not key=value"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(tc.args, &stdout, &stderr); code != 2 {
			t.Errorf("zkafka %v: exit %d, want 2 (stderr %q)", tc.args, code, stderr.String())
		}
		if !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("zkafka %v: stderr %q, want it to mention %q", tc.args, stderr.String(), tc.want)
		}
	}
}

// TestConsoleConsumerBothModes consumes a topic with --zookeeper (leaving
// offsets in /consumers) and with --bootstrap-server, in the classic group
// protocol and in KIP-848's.
func TestConsoleConsumerBothModes(t *testing.T) {
	zk := zktest.Start(t, zktest.Options{})
	c := testcluster.Start(t, testcluster.Options{
		ZooKeeper:  zk.Connect + "/console",
		Properties: map[string]string{"group.initial.rebalance.delay.ms": "0", "group.coordinator.rebalance.protocols": "classic,consumer"},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cl := c.Client()
	if resp, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 1, nil, "lines"); err != nil || resp.Err != nil {
		t.Fatalf("create topic: %v %v", err, resp.Err)
	}
	c.WaitForLeader("lines", 0)
	for i := range 5 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "lines", Value: fmt.Appendf(nil, "line %d", i)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	want := "line 0\nline 1\nline 2\nline 3\nline 4\n"
	bootstrap := strings.Join(c.BootstrapAddrs(), ",")
	for _, mode := range [][]string{{"--zookeeper", c.ZK}, {"--bootstrap-server", bootstrap},
		{"--bootstrap-server", bootstrap, "--rebalance-protocol", "consumer", "--group", "cli-kip848"}} {
		var stdout, stderr bytes.Buffer
		args := append([]string{"console-consumer", "--topic", "lines", "--group", "cli", "--from-beginning", "--max-messages", "5",
			"--consumer-property", "rebalance.backoff.ms=200", "--print-events"}, mode...)
		if code := run(args, &stdout, &stderr); code != 0 || stdout.String() != want {
			t.Errorf("zkafka %v: exit %d, stdout %q, stderr tail %q", args, code, stdout.String(), tail(stderr.String()))
		}
		// --print-events: the member's first rebalance, and its counters.
		first := "] registered consumer-id="
		if mode[0] == "--bootstrap-server" {
			first = "] joined generation=1 member-id="
		}
		for _, line := range []string{first, "] partitions-assigned lines[0]\n", "] partitions-revoked lines[0]\n", "[stats] rebalances=1 "} {
			if !strings.Contains(stderr.String(), line) {
				t.Errorf("zkafka %v --print-events: stderr lacks %q:\n%s", args, line, stderr.String())
			}
		}
	}
	// A group member formats with the same properties, and --timeout-ms
	// ends the run once the topic is drained.
	args := []string{"console-consumer", "--bootstrap-server", strings.Join(c.BootstrapAddrs(), ","), "--topic", "lines",
		"--group", "timed", "--from-beginning", "--timeout-ms", "3000", "--property", "print.offset=true", "--property", "print.key=true"}
	code, stdout, stderr := runTool(args...)
	wantOut := "Offset:0\tnull\tline 0\nOffset:1\tnull\tline 1\nOffset:2\tnull\tline 2\nOffset:3\tnull\tline 3\nOffset:4\tnull\tline 4\n"
	if code != 0 || stdout != wantOut || !strings.HasSuffix(stderr, "Processed a total of 5 messages\n") {
		t.Errorf("zkafka %v: exit %d, stdout %q, stderr tail %q", args, code, stdout, tail(stderr))
	}
	data, _, err := c.ZooKeeper().Get(zkpaths.ConsumerOffsetPath("cli", "lines", 0))
	if err != nil || string(data) != "5" {
		t.Errorf("legacy offset znode: %q %v", data, err)
	}
}

func tail(s string) string {
	if len(s) > 500 {
		return s[len(s)-500:]
	}
	return s
}

// TestConsoleConsumerParseErrors: console-consumer parses its options as
// Kafka's tools do (joptsimple's messages, the 0.8.2 tool's rule for
// --topic, --whitelist and --blacklist with --zookeeper, 2.8's without),
// printing the message and exiting 1.
func TestConsoleConsumerParseErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-frob"}, "frob is not a recognized option\n"},
		{[]string{"--topic"}, "Option topic requires an argument\n"},
		{[]string{"--from-beginning=yes"}, "Option from-beginning does not take an argument\n"},
		{[]string{"--pr"}, "pr is not a recognized option\n"},
		{[]string{"--bootstrap", "x:9092"}, "bootstrap is not a recognized option\n"},
		{[]string{"--topic", "t", "extra"}, "Found non-option argument \"extra\"\n"},
		{[]string{"--topic", "t"}, "Missing required argument \"[bootstrap-server]\"\n"},
		{[]string{"--topic", "t", "--zookeeper", "h:2181", "--bootstrap-server", "h:9092"}, "Option \"[zookeeper]\" can't be used with option \"[bootstrap-server]\"\n"},
		{[]string{"--zookeeper", "h:2181"}, "Exactly one of whitelist/blacklist/topic is required.\n"},
		{[]string{"--zookeeper", "h:2181", "--topic", "t", "--blacklist", "b"}, "Exactly one of whitelist/blacklist/topic is required.\n"},
		{[]string{"--bootstrap-server", "h:9092"}, "Exactly one of whitelist/topic is required.\n"},
		{[]string{"--bootstrap-server", "h:9092", "--topic", "t", "--whitelist", "w"}, "Exactly one of whitelist/topic is required.\n"},
		{[]string{"--bootstrap-server", "h:9092", "--blacklist", "b"}, "Option \"[blacklist]\" can't be used with option \"[bootstrap-server]\"\n"},
		{[]string{"--bootstrap-server", "h:9092", "--whitelist", "w", "--partition", "0"}, "The topic is required when partition is specified.\n"},
		{[]string{"--bootstrap-server", "h:9092", "--topic", "t", "--partition", "one"}, "Cannot parse argument 'one' of option partition\n"},
		{[]string{"--bootstrap-server", "h:9092", "--topic", "t", "--max-messages", "many"}, "Cannot parse argument 'many' of option max-messages\n"},
	} {
		expectToolError(t, tc.want, append([]string{"console-consumer"}, tc.args...)...)
	}
}

// TestConsoleConsumerKafkaRules checks Kafka's own argument rules for
// --partition, --offset and --group: its message on stderr and exit 1.
func TestConsoleConsumerKafkaRules(t *testing.T) {
	base := []string{"console-consumer", "--bootstrap-server", "h:9092", "--topic", "t"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--offset", "earliest"}, "The partition is required when offset is specified.\n"},
		{[]string{"--offset", "3", "--group", "g"}, "The partition is required when offset is specified.\n"},
		{[]string{"--partition", "0", "--group", "g"}, "Options group and partition cannot be specified together.\n"},
		{[]string{"--partition", "0", "--offset", "earliest", "--from-beginning"}, "Options from-beginning and offset cannot be specified together.\n"},
		{[]string{"--partition", "0", "--offset", "-1"}, "The provided offset value '-1' is incorrect. Valid values are 'earliest', 'latest', or a non-negative long.\n"},
		{[]string{"--partition", "0", "--offset", "first"}, "The provided offset value 'first' is incorrect. Valid values are 'earliest', 'latest', or a non-negative long.\n"},
	} {
		expectToolError(t, tc.want, append(append([]string{}, base...), tc.args...)...)
	}
	code, _, stderr := runTool("console-consumer", "--zookeeper", "h:2181", "--topic", "t", "--partition", "0")
	if code != 2 || !strings.Contains(stderr, "--partition needs --bootstrap-server") {
		t.Errorf("--zookeeper --partition: exit %d, stderr %q", code, stderr)
	}
}

// TestMessageFormatter covers the DefaultMessageFormatter cases a broker
// does not readily produce: no timestamp type, LogAppendTime, null fields.
func TestMessageFormatter(t *testing.T) {
	rec := consoleRecord{Record: consumer.Record{Partition: 2, Offset: 7, Timestamp: time.UnixMilli(1600000000123),
		Headers: []consumer.Header{{Key: "h", Value: nil}, {Key: "i", Value: []byte("x")}}}, timestampType: 1}
	for _, tc := range []struct {
		props map[string]string
		rec   consoleRecord
		want  string
	}{
		{map[string]string{"print.timestamp": "TRUE ", "print.key": "true"}, rec, "LogAppendTime:1600000000123\tnull\tnull\n"},
		{map[string]string{"print.timestamp": "true", "print.value": "false"}, consoleRecord{timestampType: -1}, "NO_TIMESTAMP\n"},
		{map[string]string{"print.headers": "true", "null.literal": "-", "headers.separator": "|", "key.separator": " "}, rec, "h:-|i:x -\n"},
		{map[string]string{"print.headers": "true", "print.value": "false", "line.separator": ";"}, consoleRecord{}, "NO_HEADERS;"},
		{map[string]string{"print.partition": "yes", "print.offset": "true", "print.value": "false"}, rec, "Offset:7\n"},
	} {
		var b bytes.Buffer
		w := bufio.NewWriter(&b)
		newMessageFormatter(tc.props, false).writeTo(w, tc.rec)
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if b.String() != tc.want {
			t.Errorf("properties %v: %q, want %q", tc.props, b.String(), tc.want)
		}
	}
}

// TestConsoleConsumerPartitionOffset is the golden output of assign mode
// (--partition/--offset, no group) with each formatter property.
func TestConsoleConsumerPartitionOffset(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cl := c.Client(kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if resp, err := kadm.NewClient(cl).CreateTopic(ctx, 2, 1, nil, "assigned"); err != nil || resp.Err != nil {
		t.Fatalf("create topic: %v %v", err, resp.Err)
	}
	c.WaitForLeader("assigned", 0)
	c.WaitForLeader("assigned", 1)
	records := []*kgo.Record{
		{Partition: 1, Key: []byte("k0"), Value: []byte("v0"), Timestamp: time.UnixMilli(1600000000000)},
		{Partition: 1, Key: []byte("k1"), Value: []byte("v1"), Timestamp: time.UnixMilli(1600000000001),
			Headers: []kgo.RecordHeader{{Key: "h1", Value: []byte("a")}, {Key: "h2", Value: []byte("b")}}},
		{Partition: 1, Value: []byte("v2"), Timestamp: time.UnixMilli(1600000000002)},
		{Partition: 0, Key: []byte("other"), Value: []byte("elsewhere"), Timestamp: time.UnixMilli(1600000000003)},
	}
	for _, r := range records {
		r.Topic = "assigned"
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	base := []string{"console-consumer", "--bootstrap-server", strings.Join(c.BootstrapAddrs(), ","), "--topic", "assigned", "--partition", "1"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--offset", "earliest", "--max-messages", "3"}, "v0\nv1\nv2\n"},
		{[]string{"--from-beginning", "--max-messages", "3", "--print-key"}, "k0\tv0\nk1\tv1\nnull\tv2\n"},
		{[]string{"--offset", "1", "--max-messages", "2", "--property", "print.timestamp=true", "--property", "print.partition=true",
			"--property", "print.offset=true", "--property", "print.headers=true", "--property", "print.key=true"},
			"CreateTime:1600000000001\tPartition:1\tOffset:1\th1:a,h2:b\tk1\tv1\n" +
				"CreateTime:1600000000002\tPartition:1\tOffset:2\tNO_HEADERS\tnull\tv2\n"},
		{[]string{"--offset", "0", "--max-messages", "2", "--property", "print.key=true", "--property", "key.separator=:",
			"--property", "line.separator=|"}, "k0:v0|k1:v1|"},
		{[]string{"--offset", "EARLIEST", "--max-messages", "2", "--property", "print.headers=true", "--property", "headers.separator=;",
			"--property", "print.value=false"}, "NO_HEADERS\nh1:a;h2:b\n"},
		{[]string{"--offset", "2", "--max-messages", "1", "--property", "print.timestamp=true"}, "CreateTime:1600000000002\tv2\n"},
	} {
		args := append(append([]string{}, base...), tc.args...)
		code, stdout, stderr := runTool(args...)
		if code != 0 || stdout != tc.want {
			t.Errorf("zkafka %v: exit %d\nstdout %q\nwant   %q\nstderr tail %q", args, code, stdout, tc.want, tail(stderr))
		}
		n, _ := strconv.Atoi(args[slices.Index(args, "--max-messages")+1])
		wantCount := fmt.Sprintf("Processed a total of %d messages\n", n)
		if !strings.HasSuffix(stderr, wantCount) {
			t.Errorf("zkafka %v: stderr does not end with %q: %q", args, wantCount, tail(stderr))
		}
	}

	// --timeout-ms ends a run that reads everything there is: from the
	// start, all three; from the end, none. Both exit 0, as in Kafka.
	for _, tc := range []struct {
		offset, want, count string
	}{
		{"earliest", "v0\nv1\nv2\n", "Processed a total of 3 messages\n"},
		{"latest", "", "Processed a total of 0 messages\n"},
	} {
		args := append(append([]string{}, base...), "--offset", tc.offset, "--timeout-ms", "1500")
		code, stdout, stderr := runTool(args...)
		if code != 0 || stdout != tc.want || !strings.HasSuffix(stderr, tc.count) {
			t.Errorf("zkafka %v: exit %d, stdout %q, stderr tail %q; want stdout %q and %q", args, code, stdout, tail(stderr), tc.want, tc.count)
		}
	}
}

// TestConsoleConsumerDefaults: Kafka 2.8's random group console-consumer-<0..99999>, the Java
// consumer's client id consumer-<group>-<n> counting up, and the 0.8 consumer's client id, its
// group.
func TestConsoleConsumerDefaults(t *testing.T) {
	var cfg consumer.Config
	consoleConsumerDefaults(&cfg)
	n, err := strconv.Atoi(strings.TrimPrefix(cfg.GroupID, "console-consumer-"))
	if err != nil || n < 0 || n > 99999 {
		t.Errorf("random group %q, want console-consumer-<0..99999>", cfg.GroupID)
	}
	first := consumer.Config{GroupID: "g"}
	second := consumer.Config{GroupID: "g"}
	consoleConsumerDefaults(&first)
	consoleConsumerDefaults(&second)
	var a, b int
	if _, err := fmt.Sscanf(first.ClientID, "consumer-g-%d", &a); err != nil {
		t.Fatalf("client id %q, want consumer-g-<n>", first.ClientID)
	}
	if _, err := fmt.Sscanf(second.ClientID, "consumer-g-%d", &b); err != nil || b != a+1 {
		t.Errorf("client ids %q then %q, want consumer-g-%d then consumer-g-%d", first.ClientID, second.ClientID, a, a+1)
	}
	old := consumer.Config{GroupID: "g", ZooKeeperConnect: "h:2181"}
	consoleConsumerDefaults(&old)
	set := consumer.Config{GroupID: "g", ClientID: "mine"}
	consoleConsumerDefaults(&set)
	if old.ClientID != "g" || set.ClientID != "mine" {
		t.Errorf("0.8 consumer's client id %q, want the group g; a client id given: %q, want mine", old.ClientID, set.ClientID)
	}
}
