package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/zkafka/zkafka/internal/testcluster"
)

// TestLogDirs: kafka-log-dirs --describe prints LogDirsCommand's two lines and its JSON: each
// broker's log dir by its absolute path, no error, and the partitions in it with their sizes;
// --broker-list and --topic-list narrow it.
func TestLogDirs(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 2})
	bs := strings.Join(c.BootstrapAddrs(), ",")
	expectTool(t, "Created topic dirs.\n", "topics", "--bootstrap-server", bs, "--create", "--topic", "dirs", "--replica-assignment", "1:2")
	expectTool(t, "Created topic other.\n", "topics", "--bootstrap-server", bs, "--create", "--topic", "other", "--replica-assignment", "2")
	c.WaitForLeader("dirs", 0)
	c.WaitForLeader("other", 0)
	cl := c.Client(kgo.DefaultProduceTopic("dirs"))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, kgo.StringRecord("hello")).FirstErr(); err != nil {
		t.Fatal(err)
	}
	cl.Close()

	describe := func(extra ...string) logDirsJSON {
		t.Helper()
		code, out, errOut := runTool(append([]string{"log-dirs", "--bootstrap-server", bs, "--describe"}, extra...)...)
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if code != 0 || len(lines) != 3 || lines[0] != "Querying brokers for log directories information" ||
			!strings.HasPrefix(lines[1], "Received log directory information from brokers ") {
			t.Fatalf("log-dirs %v: exit %d\n%s%s", extra, code, out, errOut)
		}
		var got logDirsJSON
		if err := json.Unmarshal([]byte(lines[2]), &got); err != nil {
			t.Fatalf("log-dirs %v: %v in %s", extra, err, lines[2])
		}
		return got
	}
	all := describe()
	if all.Version != 1 || len(all.Brokers) != 2 || all.Brokers[0].Broker != 1 || all.Brokers[1].Broker != 2 {
		t.Fatalf("brokers %+v", all.Brokers)
	}
	for _, b := range all.Brokers {
		if len(b.LogDirs) != 1 || !filepath.IsAbs(b.LogDirs[0].LogDir) || b.LogDirs[0].Error != nil {
			t.Fatalf("broker %d's log dirs %+v: want one absolute dir without error", b.Broker, b.LogDirs)
		}
	}
	dirs0 := func(j logDirsJSON, broker int) map[string]int64 {
		out := map[string]int64{}
		for _, p := range j.Brokers[broker].LogDirs[0].Partitions {
			out[p.Partition] = p.Size
			if p.OffsetLag != 0 || p.IsFuture {
				t.Errorf("partition %s: offset lag %d, future %v; want 0 and false", p.Partition, p.OffsetLag, p.IsFuture)
			}
		}
		return out
	}
	if one := dirs0(all, 0); one["dirs-0"] <= 0 || len(one) != 1 {
		t.Errorf("broker 1's partitions %v: want dirs-0 with the record", one)
	}
	if two := dirs0(all, 1); two["dirs-0"] <= 0 || len(two) != 2 {
		t.Errorf("broker 2's partitions %v: want dirs-0 and other-0", two)
	}
	narrowed := describe("--broker-list", "2", "--topic-list", "other")
	if len(narrowed.Brokers) != 1 || narrowed.Brokers[0].Broker != 2 {
		t.Fatalf("--broker-list 2: %+v", narrowed.Brokers)
	}
	if got := dirs0(narrowed, 0); len(got) != 1 || got["other-0"] != 0 {
		t.Errorf("--topic-list other on broker 2: %v, want other-0 alone, empty", got)
	}
	expectToolError(t, "Missing required argument \"[describe]\"\n", "log-dirs", "--bootstrap-server", bs)
}
