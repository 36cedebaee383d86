package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/zkafka/zkafka/internal/testcluster"
)

// withStdin runs fn with the console producer reading input.
func withStdin(input string, fn func()) {
	old := consoleProducerStdin
	consoleProducerStdin = strings.NewReader(input)
	defer func() { consoleProducerStdin = old }()
	fn()
}

func TestConsoleProducer(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if resp, err := kadm.NewClient(c.Client()).CreateTopic(ctx, 3, 1, nil, "lines"); err != nil || resp.Err != nil {
		t.Fatalf("create topic: %v %v", err, resp.Err)
	}
	for p := range int32(3) {
		c.WaitForLeader("lines", p)
	}
	bs := strings.Join(c.BootstrapAddrs(), ",")
	withStdin("plain one\nplain two\n", func() {
		expectTool(t, "", "console-producer", "--bootstrap-server", bs, "--topic", "lines", "--timeout", "10")
	})
	withStdin("k1:v1\nk2:v:2\nk1:v3\n", func() {
		expectTool(t, "", "console-producer", "--broker-list", bs, "--topic", "lines", "--sync",
			"--property", "parse.key=true", "--property", "key.separator=:", "--request-required-acks", "all")
	})
	withStdin("k3:ok\nno separator\n", func() {
		expectToolError(t, "No key found on line 2: no separator\n", "console-producer", "--bootstrap-server", bs, "--topic", "lines",
			"--property", "parse.key=true", "--property", "key.separator=:", "--timeout", "10")
	})

	withStdin("no separator, kept\n", func() {
		expectTool(t, "", "console-producer", "--bootstrap-server", bs, "--topic", "lines", "--timeout", "10",
			"--property", "parse.key=true", "--property", "ignore.error=true")
	})

	cl := c.Client(kgo.ConsumeTopics("lines"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	got := map[string]string{}
	partitionOf := map[string]int32{}
	for len(got) < 7 && ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
			got[string(r.Value)] = string(r.Key)
			if r.Key != nil {
				if p, ok := partitionOf[string(r.Key)]; ok && p != r.Partition {
					t.Errorf("key %s in partitions %d and %d", r.Key, p, r.Partition)
				}
				partitionOf[string(r.Key)] = r.Partition
			}
		})
	}
	want := map[string]string{"plain one": "", "plain two": "", "v1": "k1", "v:2": "k2", "v3": "k1", "ok": "k3", "no separator, kept": ""}
	for v, k := range want {
		if gk, ok := got[v]; !ok || gk != k {
			t.Errorf("record %q: key %q (present %v), want key %q; all: %v", v, gk, ok, k, got)
		}
	}
}

func TestConsoleProducerBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--bootstrap-server", "h:9092"}, "Missing required argument \"[topic]\"\n"},
		{[]string{"--topic", "t"}, "Missing required argument \"[broker-list]\"\n"},
		{[]string{"--topic", "t", "--bootstrap-server", "h:9092", "--request-required-acks", "2"}, "Invalid value 2 for configuration acks: String must be one of: all, -1, 0, 1\n"},
		{[]string{"--topic", "t", "--bootstrap-server", "h:9092", "--producer-property", "frobs=1"}, "unsupported producer property \"frobs\"\n"},
		{[]string{"--topic", "t", "--bootstrap-server", "h:9092", "--nope"}, "nope is not a recognized option\n"},
	} {
		expectToolError(t, tc.want, append([]string{"console-producer"}, tc.args...)...)
	}
}

// TestConsoleProducerAutoCreatesTopic: a produce to a missing topic creates
// it through Metadata, as the Java producer asks the broker to.
func TestConsoleProducerAutoCreatesTopic(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	bs := strings.Join(c.BootstrapAddrs(), ",")
	withStdin("created on demand\n", func() {
		expectTool(t, "", "console-producer", "--bootstrap-server", bs, "--topic", "auto-created")
	})
	topics, err := kadm.NewClient(c.Client()).ListTopics(ctx, "auto-created")
	if err != nil || !topics.Has("auto-created") {
		t.Fatalf("auto-created topic: %v %v", topics, err)
	}
}

// delivery.timeout.ms, when given, is the records' timeout whatever the
// order the properties come in; max.block.ms (always set, 60 s by default)
// is it only otherwise.
func TestConsoleProducerDeliveryTimeout(t *testing.T) {
	for range 20 { // the properties are a map: its order changes between runs
		for _, tc := range []struct {
			props map[string]string
			want  time.Duration
		}{
			{map[string]string{"max.block.ms": "60000", "delivery.timeout.ms": "5000"}, 5 * time.Second},
			{map[string]string{"max.block.ms": "7000"}, 7 * time.Second},
		} {
			opts, err := producerOpts("127.0.0.1:1", tc.props)
			if err != nil {
				t.Fatal(err)
			}
			cl, err := kgo.NewClient(opts...)
			if err != nil {
				t.Fatal(err)
			}
			got := cl.OptValue(kgo.RecordDeliveryTimeout)
			cl.Close()
			if got != tc.want {
				t.Fatalf("properties %v: record timeout %v, want %v", tc.props, got, tc.want)
			}
		}
	}
}
