package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/zkafka/zkafka/internal/testcluster"
	"github.com/zkafka/zkafka/internal/zktest"
	"github.com/zkafka/zkafka/zkpaths"
)

func TestConsoleConsumerArguments(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"console-consumer"}, "USAGE: zkafka console-consumer"},
		{[]string{"console-consumer", "--topic", "t"}, "USAGE: zkafka console-consumer"},
		{[]string{"console-consumer", "--topic", "t", "--zookeeper", "h:2181", "--bootstrap-server", "h:9092"}, "USAGE"},
		{[]string{"console-consumer", "--topic", "t", "--bootstrap-server", "h:9092", "--rebalance-protocol", "lazy"}, `"lazy" is not eager or cooperative`},
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
// offsets in /consumers) and with --bootstrap-server.
func TestConsoleConsumerBothModes(t *testing.T) {
	zk := zktest.Start(t, zktest.Options{})
	c := testcluster.Start(t, testcluster.Options{
		ZooKeeper:  zk.Connect + "/console",
		Properties: map[string]string{"group.initial.rebalance.delay.ms": "0"},
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
	for _, mode := range [][]string{{"--zookeeper", c.ZK}, {"--bootstrap-server", strings.Join(c.BootstrapAddrs(), ",")}} {
		var stdout, stderr bytes.Buffer
		args := append([]string{"console-consumer", "--topic", "lines", "--group", "cli", "--from-beginning", "--max-messages", "5",
			"--consumer-property", "rebalance.backoff.ms=200"}, mode...)
		if code := run(args, &stdout, &stderr); code != 0 || stdout.String() != want {
			t.Errorf("zkafka %v: exit %d, stdout %q, stderr tail %q", args, code, stdout.String(), tail(stderr.String()))
		}
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
