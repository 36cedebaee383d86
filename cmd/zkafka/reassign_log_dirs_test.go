package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/zkafka/zkafka/internal/testcluster"
	"github.com/zkafka/zkafka/internal/wait"
)

// TestReassignLogDirs moves a replica to the broker's other log dir with a
// reassignment JSON's log_dirs: --execute sets the replica-alter-dir
// throttle on the broker and starts the move; while the throttle holds it
// back --verify says the move is in progress (and keeps the throttle) and
// log-dirs --describe shows the future replica in the destination; once the
// throttle is lifted --verify reports it completed and clears the
// throttles. --zookeeper refuses log_dirs, as 2.8 does.
func TestReassignLogDirs(t *testing.T) {
	c, plan, _, to := startLogDirMove(t)
	bs := c.Addr(1)

	expectToolError(t, "Error: bootstrap-server needs to be provided when replica reassignments are present.\n",
		"reassign-partitions", "--zookeeper", c.ZK, "--execute", "--reassignment-json-file", plan)

	code, out, errOut := runTool("reassign-partitions", "--bootstrap-server", bs, "--execute", "--reassignment-json-file", plan,
		"--replica-alter-log-dirs-throttle", "1")
	for _, want := range []string{
		"Warning: You must run --verify periodically, until the reassignment completes, to ensure the throttle is removed.\n",
		"The replica-alter-dir throttle limit was set to 1 B/s\n",
		"Successfully started partition reassignment for jbod-0\n",
		"Successfully started log directory move for: jbod-0-1\n",
	} {
		if code != 0 || !strings.Contains(out, want) {
			t.Fatalf("--execute: exit %d, no %q in\n%s%s", code, want, out, errOut)
		}
	}

	verify := func() string {
		t.Helper()
		code, out, errOut := runTool("reassign-partitions", "--bootstrap-server", bs, "--verify", "--reassignment-json-file", plan)
		if code != 0 {
			t.Fatalf("--verify: exit %d\n%s%s", code, out, errOut)
		}
		return out
	}
	if out := verify(); !strings.Contains(out, "Status of partition reassignment:\nReassignment of partition jbod-0 is complete.\n"+
		"Reassignment of replica jbod-0-1 is still in progress.\n") || strings.Contains(out, "Clearing") {
		t.Fatalf("--verify during the move:\n%s", out)
	}
	code, out, errOut = runTool("log-dirs", "--bootstrap-server", bs, "--describe", "--topic-list", "jbod")
	var described logDirsJSON
	if lines := strings.Split(strings.TrimSpace(out), "\n"); code != 0 || json.Unmarshal([]byte(lines[len(lines)-1]), &described) != nil {
		t.Fatalf("log-dirs: exit %d\n%s%s", code, out, errOut)
	}
	future := false
	for _, d := range described.Brokers[0].LogDirs {
		for _, p := range d.Partitions {
			future = future || (d.LogDir == to && p.Partition == "jbod-0" && p.IsFuture && p.OffsetLag > 0)
		}
	}
	if !future {
		t.Fatalf("log-dirs --describe shows no future replica of jbod-0 in %s: %s", to, out)
	}

	expectTool(t, "Completed updating config for broker 1.\n", "configs", "--bootstrap-server", bs, "--alter",
		"--entity-type", "brokers", "--entity-name", "1", "--delete-config", "replica.alter.log.dirs.io.max.bytes.per.second")
	wait.For(t, 30*time.Second, "the move to complete", func() bool {
		return strings.Contains(verify(), "Reassignment of replica jbod-0-1 completed successfully.\n")
	})
	if out := verify(); !strings.Contains(out, "Clearing broker-level throttles on broker 1\n") {
		t.Errorf("--verify after the move does not clear the throttles:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(to, "jbod-0")); err != nil {
		t.Errorf("jbod-0 is not in %s: %v", to, err)
	}
}

// startLogDirMove starts a one-broker cluster with two log dirs and a
// 128 KiB partition jbod-0, and returns it with a reassignment plan moving
// the replica to the other dir, the dir it is in and the other one.
func startLogDirMove(t *testing.T) (c *testcluster.Cluster, plan, from, to string) {
	t.Helper()
	root := t.TempDir()
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	c = testcluster.Start(t, testcluster.Options{Brokers: 1, Properties: map[string]string{
		"log.dirs": a + "," + b, "replica.fetch.max.bytes": "16384", "replica.fetch.backoff.ms": "100",
	}})
	bs := c.Addr(1)
	expectTool(t, "Created topic jbod.\n", "topics", "--bootstrap-server", bs, "--create", "--topic", "jbod", "--replica-assignment", "1")
	c.WaitForLeader("jbod", 0)
	// Uncompressed 4 KiB batches, 128 KiB: many reads of 16 KiB, throttled
	// after the first.
	cl := c.Client(kgo.DefaultProduceTopic("jbod"), kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerBatchMaxBytes(4096))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var records []*kgo.Record
	for i := range 128 {
		records = append(records, kgo.StringRecord(fmt.Sprintf("%04d-%s", i, strings.Repeat("x", 1000))))
	}
	if err := cl.ProduceSync(ctx, records...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	from, to = a, b
	if _, err := os.Stat(filepath.Join(b, "jbod-0")); err == nil {
		from, to = b, a
	}
	plan = writeTempFile(t, "plan.json", fmt.Sprintf(`{"version":1,"partitions":[{"topic":"jbod","partition":0,"replicas":[1],"log_dirs":[%q]}]}`, to))
	return c, plan, from, to
}

// TestReassignCancelsLogDirMove: --cancel asks a replica being moved back
// to its current log dir, which drops the future log (Kafka's
// cancelAssignment), and clears the throttles.
func TestReassignCancelsLogDirMove(t *testing.T) {
	c, plan, from, to := startLogDirMove(t)
	bs := c.Addr(1)
	if code, out, errOut := runTool("reassign-partitions", "--bootstrap-server", bs, "--execute", "--reassignment-json-file", plan,
		"--replica-alter-log-dirs-throttle", "1"); code != 0 || !strings.Contains(out, "Successfully started log directory move for: jbod-0-1\n") {
		t.Fatalf("--execute: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut := runTool("reassign-partitions", "--bootstrap-server", bs, "--cancel", "--reassignment-json-file", plan)
	if want := "None of the specified partition reassignments are active.\nSuccessfully started log directory move for: jbod-0-1\n"; code != 0 || !strings.HasPrefix(out, want) {
		t.Fatalf("--cancel: exit %d\n%s%s\nwant it to begin with\n%s", code, out, errOut, want)
	}
	wait.For(t, 30*time.Second, "the future log to go", func() bool {
		entries, _ := os.ReadDir(to)
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), "jbod-0") {
				return false
			}
		}
		return true
	})
	if _, err := os.Stat(filepath.Join(from, "jbod-0")); err != nil {
		t.Errorf("jbod-0 left %s: %v", from, err)
	}
	if code, out, _ := runTool("reassign-partitions", "--bootstrap-server", bs, "--cancel", "--reassignment-json-file", plan); code != 0 ||
		!strings.Contains(out, "None of the specified partition moves are active.\n") {
		t.Errorf("--cancel with nothing moving: exit %d\n%s", code, out)
	}
}
