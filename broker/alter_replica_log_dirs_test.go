package broker_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/adminzk"
	"github.com/zkafka/zkafka/internal/testcluster"
	"github.com/zkafka/zkafka/zkpaths"
)

const alterLogDirsRate = "replica.alter.log.dirs.io.max.bytes.per.second"

// jbodCluster starts one broker with two log dirs, a and b, copying at most
// 16 KiB per read.
func jbodCluster(t *testing.T, extra map[string]string) (c *testcluster.Cluster, a, b string) {
	t.Helper()
	root := t.TempDir()
	a, b = filepath.Join(root, "a"), filepath.Join(root, "b")
	props := replicationProps()
	props["log.dirs"] = a + "," + b
	props["replica.fetch.max.bytes"] = "16384"
	for k, v := range extra {
		props[k] = v
	}
	return testcluster.Start(t, testcluster.Options{Brokers: 1, Properties: props}), a, b
}

// setBrokerConfig sets (or with "" deletes) one of broker 1's dynamic
// configs and waits until the broker describes it so.
func setBrokerConfig(t *testing.T, c *testcluster.Cluster, key, value string) {
	t.Helper()
	err := adminzk.New(c.ZooKeeper(), zap.NewNop()).ChangeEntityConfig(zkpaths.EntityBrokers, "1", func(cfg map[string]string) (bool, error) {
		if value == "" {
			delete(cfg, key)
		} else {
			cfg[key] = value
		}
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	c.WaitFor("broker 1 to apply "+key+"="+value, func() bool {
		described := false
		for _, e := range describeRaw(t, c.Addr(1), kmsg.ConfigResourceTypeBroker, "1").Configs {
			described = described || e.Name == key
		}
		return described == (value != "")
	})
}

// alterLogDirs sends AlterReplicaLogDirs and returns each partition's error.
func alterLogDirs(t *testing.T, c *testcluster.Cluster, version int16, dirs map[string][]kmsg.AlterReplicaLogDirsRequestDirTopic) map[string]error {
	t.Helper()
	req := kmsg.NewPtrAlterReplicaLogDirsRequest()
	for _, dir := range slices.Sorted(func(yield func(string) bool) {
		for d := range dirs {
			if !yield(d) {
				return
			}
		}
	}) {
		req.Dirs = append(req.Dirs, kmsg.AlterReplicaLogDirsRequestDir{Dir: dir, Topics: dirs[dir]})
	}
	out := map[string]error{}
	for _, tr := range raw(t, c.Addr(1), req, version).(*kmsg.AlterReplicaLogDirsResponse).Topics {
		for _, p := range tr.Partitions {
			out[fmt.Sprintf("%s-%d", tr.Topic, p.Partition)] = kerr.ErrorForCode(p.ErrorCode)
		}
	}
	return out
}

func moveTo(dir, topic string, partitions ...int32) map[string][]kmsg.AlterReplicaLogDirsRequestDirTopic {
	return map[string][]kmsg.AlterReplicaLogDirsRequestDirTopic{dir: {{Topic: topic, Partitions: partitions}}}
}

// logDirReplica is one partition of DescribeLogDirs.
type logDirReplica struct {
	dir         string
	offsetLag   int64
	isFuture    bool
	sizeInBytes int64
}

// describeLogDirs returns broker 1's replicas of topic by "topic-partition",
// current and future ones apart.
func describeLogDirs(t *testing.T, c *testcluster.Cluster, topic string) (current, future map[string]logDirReplica) {
	t.Helper()
	current, future = map[string]logDirReplica{}, map[string]logDirReplica{}
	for _, d := range raw(t, c.Addr(1), kmsg.NewPtrDescribeLogDirsRequest(), 2).(*kmsg.DescribeLogDirsResponse).Dirs {
		for _, tr := range d.Topics {
			if tr.Topic != topic {
				continue
			}
			for _, p := range tr.Partitions {
				r := logDirReplica{dir: d.Dir, offsetLag: p.OffsetLag, isFuture: p.IsFuture, sizeInBytes: p.Size}
				if p.IsFuture {
					future[fmt.Sprintf("%s-%d", topic, p.Partition)] = r
				} else {
					current[fmt.Sprintf("%s-%d", topic, p.Partition)] = r
				}
			}
		}
	}
	return current, future
}

// partitionDirs lists the directories of tp in dir: its log and any future log.
func partitionDirs(t *testing.T, dir, tp string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() && strings.HasPrefix(e.Name(), tp) {
			out = append(out, e.Name())
		}
	}
	return out
}

var futureDir = func(tp string) func(string) bool {
	return func(name string) bool {
		rest, ok := strings.CutPrefix(name, tp+".")
		return ok && len(rest) == 32+len("-future") && strings.HasSuffix(rest, "-future")
	}
}

// otherDir is the log dir of a and b that does not hold tp's log.
func otherDir(t *testing.T, a, b, tp string) (from, to string) {
	t.Helper()
	if len(partitionDirs(t, a, tp)) == 1 {
		return a, b
	}
	return b, a
}

// fillPartition writes n batches of 4 KiB records to topic-0 and returns
// their values.
func fillPartition(t *testing.T, c *testcluster.Cluster, topic string, n int) int64 {
	t.Helper()
	var end int64
	for range n {
		code, base := produceCode(t, c, c.Addr(1), produceReq(topic, 0, valueBatch(4, 1024)))
		if code != 0 {
			t.Fatalf("produce to %s: error %d", topic, code)
		}
		end = base + 4
	}
	return end
}

// TestAlterReplicaLogDirsMovesUnderLoad moves a partition from one log dir
// to the other while a producer writes to it with acks=all: throttled to
// 1 KiB/s, the copy shows as a `-future` directory in the destination and
// as a future replica with a lag in DescribeLogDirs; once the throttle goes
// the future log replaces the current one (the source directory is gone,
// the destination holds the partition under its own name), and every
// acknowledged record is read back in order.
func TestAlterReplicaLogDirsMovesUnderLoad(t *testing.T) {
	c, a, b := jbodCluster(t, nil)
	createAssigned(t, c.Addr(1), "moving", [][]int32{{1}}, nil)
	c.WaitForLeader("moving", 0)
	fillPartition(t, c, "moving", 64) // 256 KiB: many reads at 16 KiB
	from, to := otherDir(t, a, b, "moving-0")
	setBrokerConfig(t, c, alterLogDirsRate, "1024")

	ctx, stop := context.WithCancel(context.Background())
	cl := c.Client(kgo.DefaultProduceTopic("moving"), kgo.RequiredAcks(kgo.AllISRAcks()), kgo.RecordRetries(0))
	var (
		mu    sync.Mutex
		acked []string
		wg    sync.WaitGroup
	)
	wg.Go(func() {
		for i := 0; ctx.Err() == nil; i++ {
			v := fmt.Sprintf("live-%06d", i)
			if err := cl.ProduceSync(ctx, kgo.StringRecord(v)).FirstErr(); err == nil {
				mu.Lock()
				acked = append(acked, v)
				mu.Unlock()
			} else if ctx.Err() == nil {
				t.Errorf("produce %s: %v", v, err)
				return
			}
		}
	})
	defer func() {
		stop()
		wg.Wait()
	}()

	if errs := alterLogDirs(t, c, 1, moveTo(to, "moving", 0)); errs["moving-0"] != nil || len(errs) != 1 {
		t.Fatalf("AlterReplicaLogDirs: %v", errs)
	}
	c.WaitFor("a future log in "+to, func() bool {
		return slices.ContainsFunc(partitionDirs(t, to, "moving-0"), futureDir("moving-0"))
	})
	current, future := describeLogDirs(t, c, "moving")
	if cur := current["moving-0"]; cur.dir != from || cur.offsetLag != 0 {
		t.Errorf("current replica %+v, want in %s without lag", cur, from)
	}
	if fut, ok := future["moving-0"]; !ok || fut.dir != to || fut.offsetLag <= 0 {
		t.Errorf("future replica %+v (%v), want in %s with a lag", fut, ok, to)
	}
	// The same destination again changes nothing.
	if errs := alterLogDirs(t, c, 2, moveTo(to, "moving", 0)); errs["moving-0"] != nil {
		t.Fatalf("AlterReplicaLogDirs again: %v", errs)
	}
	time.Sleep(500 * time.Millisecond) // produce while throttled
	if got := len(partitionDirs(t, from, "moving-0")); got != 1 {
		t.Fatalf("the source dir lost the partition while throttled")
	}

	setBrokerConfig(t, c, alterLogDirsRate, "")
	c.WaitFor("the future log to replace the current one", func() bool {
		return len(partitionDirs(t, from, "moving-0")) == 0 && slices.Equal(partitionDirs(t, to, "moving-0"), []string{"moving-0"})
	})
	time.Sleep(300 * time.Millisecond) // produce to the moved log
	stop()
	wg.Wait()
	current, future = describeLogDirs(t, c, "moving")
	if cur := current["moving-0"]; cur.dir != to || len(future) != 0 {
		t.Errorf("after the move: current %+v, future %v; want the replica in %s only", cur, future, to)
	}
	mu.Lock()
	want := slices.Clone(acked)
	mu.Unlock()
	if len(want) == 0 {
		t.Fatal("no record acknowledged during the move")
	}
	var got []string
	for _, r := range consumeAll(t, c, "moving", 64*4+len(want))[0] {
		if v := string(r.Value); strings.HasPrefix(v, "live-") {
			got = append(got, v)
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("read back %d live records, want the %d acknowledged in order", len(got), len(want))
	}
}

// TestAlterReplicaLogDirsErrors sends AlterReplicaLogDirs with every kind
// of bad input and checks Kafka 2.8's code for each, and that a partition
// not created yet is created in the dir it named.
func TestAlterReplicaLogDirsErrors(t *testing.T) {
	c, a, b := jbodCluster(t, map[string]string{"log.flush.offset.checkpoint.interval.ms": "100"})
	createAssigned(t, c.Addr(1), "here", [][]int32{{1}, {1}}, nil)
	c.WaitForLeader("here", 0)
	c.WaitForLeader("here", 1)

	long := strings.Repeat("x", 249) // a legal topic, but <topic>-0.<id>-future passes 255 bytes
	relative := strings.TrimPrefix(a, "/")
	errs := alterLogDirs(t, c, 0, map[string][]kmsg.AlterReplicaLogDirsRequestDirTopic{
		"/no/such/dir":  {{Topic: "here", Partitions: []int32{0}}},
		relative:        {{Topic: "here", Partitions: []int32{1}}}, // Kafka wants the absolute path
		filepath.Dir(a): {{Topic: "here", Partitions: []int32{5}}}, // not a log dir, though it holds them
		a:               {{Topic: long, Partitions: []int32{0}}},
	})
	for tp, want := range map[string]error{
		"here-0": kerr.LogDirNotFound, "here-1": kerr.LogDirNotFound, "here-5": kerr.LogDirNotFound,
		long + "-0": kerr.InvalidTopicException,
	} {
		if errs[tp] != want {
			t.Errorf("%.20s: %v, want %v", tp, errs[tp], want)
		}
	}
	// A replica the broker does not have gets REPLICA_NOT_AVAILABLE, but its
	// log is created in the dir named once it comes: both later-0 and
	// later-1 go to b, where the broker would have put one of them only
	// (here's two partitions are one in each dir; a new log goes to the dir
	// with the fewest, the first one on a tie).
	if len(partitionDirs(t, a, "here-")) != 1 || len(partitionDirs(t, b, "here-")) != 1 {
		t.Fatalf("here's partitions are not one in each dir")
	}
	if errs := alterLogDirs(t, c, 1, moveTo(b, "later", 0, 1)); errs["later-0"] != kerr.ReplicaNotAvailable || errs["later-1"] != kerr.ReplicaNotAvailable {
		t.Fatalf("AlterReplicaLogDirs for later: %v", errs)
	}
	createAssigned(t, c.Addr(1), "later", [][]int32{{1}, {1}}, nil)
	c.WaitForLeader("later", 1)
	if got := append(partitionDirs(t, b, "later-0"), partitionDirs(t, b, "later-1")...); !slices.Equal(got, []string{"later-0", "later-1"}) {
		t.Errorf("%s holds %v, want later-0 and later-1 there as asked", b, got)
	}
	// The dir the log is already in: nothing to do.
	from, _ := otherDir(t, a, b, "here-0")
	if errs := alterLogDirs(t, c, 2, moveTo(from, "here", 0)); errs["here-0"] != nil {
		t.Errorf("AlterReplicaLogDirs to the current dir: %v", errs["here-0"])
	}
	if len(partitionDirs(t, a, "here-0"))+len(partitionDirs(t, b, "here-0")) != 1 {
		t.Error("a future log was made in the current log's dir")
	}

	// A log dir taken offline: moves to it, and any new future log while it
	// is offline, are KAFKA_STORAGE_ERROR.
	// The broker may write a checkpoint into b while it goes: ask again until
	// the directory is gone.
	c.WaitFor("log dir "+b+" removed", func() bool { return os.RemoveAll(b) == nil })
	c.WaitFor("log dir "+b+" to go offline", func() bool {
		for _, d := range raw(t, c.Addr(1), kmsg.NewPtrDescribeLogDirsRequest(), 2).(*kmsg.DescribeLogDirsResponse).Dirs {
			if d.Dir == b {
				return d.ErrorCode == kerr.KafkaStorageError.Code
			}
		}
		return false
	})
	inA := "here-0"
	if len(partitionDirs(t, a, "here-0")) == 0 {
		inA = "here-1"
	}
	p := int32(inA[len(inA)-1] - '0')
	if errs := alterLogDirs(t, c, 1, moveTo(b, "here", p)); errs[inA] != kerr.KafkaStorageError {
		t.Errorf("move %s to the offline dir: %v, want KAFKA_STORAGE_ERROR", inA, errs[inA])
	}
	if errs := alterLogDirs(t, c, 1, moveTo(a, "later", 0)); errs["later-0"] != kerr.KafkaStorageError {
		t.Errorf("move later-0 out of the offline dir: %v, want KAFKA_STORAGE_ERROR", errs["later-0"])
	}
}

// TestAlterReplicaLogDirsResumesAfterRestart stops the broker in the middle
// of a throttled copy: the `-future` directory is loaded as the future log
// at the next start, the copy resumes from where it was, and once the
// throttle goes it replaces the current log with every record.
func TestAlterReplicaLogDirsResumesAfterRestart(t *testing.T) {
	c, a, b := jbodCluster(t, nil)
	createAssigned(t, c.Addr(1), "resumed", [][]int32{{1}}, nil)
	c.WaitForLeader("resumed", 0)
	end := fillPartition(t, c, "resumed", 64)
	from, to := otherDir(t, a, b, "resumed-0")
	setBrokerConfig(t, c, alterLogDirsRate, "1024")
	if errs := alterLogDirs(t, c, 2, moveTo(to, "resumed", 0)); errs["resumed-0"] != nil {
		t.Fatalf("AlterReplicaLogDirs: %v", errs)
	}
	var future []string
	c.WaitFor("a future log with data in "+to, func() bool {
		_, fut := describeLogDirs(t, c, "resumed")
		future = slices.DeleteFunc(partitionDirs(t, to, "resumed-0"), func(s string) bool { return !futureDir("resumed-0")(s) })
		return len(future) == 1 && fut["resumed-0"].sizeInBytes > 0
	})

	c.StopBroker(1)
	if got := partitionDirs(t, to, "resumed-0"); !slices.Equal(got, future) {
		t.Fatalf("after the stop %s holds %v, want %v", to, got, future)
	}
	c.StartBroker(1)
	c.WaitForLeader("resumed", 0)
	c.WaitFor("the future log to be described again after the restart", func() bool {
		_, fut := describeLogDirs(t, c, "resumed")
		return fut["resumed-0"].dir == to && fut["resumed-0"].sizeInBytes > 0
	})
	if got := partitionDirs(t, to, "resumed-0"); !slices.Equal(got, future) {
		t.Fatalf("after the restart %s holds %v, want the same future log %v", to, got, future)
	}
	setBrokerConfig(t, c, alterLogDirsRate, "")
	c.WaitFor("the future log to replace the current one", func() bool {
		return len(partitionDirs(t, from, "resumed-0")) == 0 && slices.Equal(partitionDirs(t, to, "resumed-0"), []string{"resumed-0"})
	})
	if got := len(consumeAll(t, c, "resumed", int(end))[0]); int64(got) != end {
		t.Fatalf("read back %d records, want %d", got, end)
	}
}
