package broker_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/zkafka/zkafka/internal/testcluster"
	"github.com/zkafka/zkafka/internal/zktest"
	"github.com/zkafka/zkafka/storage"
	"github.com/zkafka/zkafka/zkpaths"
)

const (
	checkerTopic      = "checker"
	checkerPartitions = 6
	checkerFaults     = 10
)

// processCluster is three brokers as zkafka processes, for kill -9.
type processCluster struct {
	t     *testing.T
	zk    string
	procs map[int32]*testcluster.Process
	dirs  map[int32]string
	addrs []string
}

func startProcessCluster(t *testing.T, n int32) *processCluster {
	pc := &processCluster{t: t, zk: zktest.NewChroot(t), procs: map[int32]*testcluster.Process{}, dirs: map[int32]string{}}
	for id := int32(1); id <= n; id++ {
		port := testcluster.FreePort(t)
		pc.dirs[id] = t.TempDir()
		pc.procs[id] = testcluster.StartProcess(t, map[string]string{
			"broker.id":                    strconv.Itoa(int(id)),
			"listeners":                    fmt.Sprintf("PLAINTEXT://127.0.0.1:%d", port),
			"log.dirs":                     pc.dirs[id],
			"zookeeper.connect":            pc.zk,
			"zookeeper.session.timeout.ms": "1500",
			"replica.lag.time.max.ms":      "5000",
			"replica.fetch.backoff.ms":     "200",
			"min.insync.replicas":          "2",
			"log.segment.bytes":            "1048576",
		})
		pc.addrs = append(pc.addrs, "127.0.0.1:"+strconv.Itoa(port))
	}
	zkc := zkSession(t, pc.zk)
	testcluster.WaitFor(t, 30*time.Second, "every broker registered and a controller", func() bool {
		ids, _, err := zkc.Children(zkpaths.BrokerIDs)
		ok, _, _ := zkc.Exists(zkpaths.Controller)
		return err == nil && len(ids) == int(n) && ok
	})
	return pc
}

// TestCheckerKillNineLosesNoAcknowledgedRecord is the checker: an
// idempotent kgo producer with acks=all writes numbered records to a
// 6-partition topic with replication factor 3 and min.insync.replicas=2,
// while the test kill -9s and restarts a random broker (partition leaders and
// the controller among them) at least 10 times, each time once every ISR is
// whole again; then it kill -9s all three at once and restarts them. A
// consumer then reads everything: every acknowledged record is present exactly
// once, and within a partition the records are in the order they were
// produced.
func TestCheckerKillNineLosesNoAcknowledgedRecord(t *testing.T) {
	pc := startProcessCluster(t, 3)
	zkc := zkSession(t, pc.zk)
	admCl, err := kgo.NewClient(kgo.SeedBrokers(pc.addrs...))
	if err != nil {
		t.Fatal(err)
	}
	defer admCl.Close()
	ctx := ctxT(t, 120*time.Second)
	testcluster.WaitFor(t, 30*time.Second, "the topic to be created", func() bool {
		resp, err := kadm.NewClient(admCl).CreateTopic(ctx, checkerPartitions, 3, nil, checkerTopic)
		return err == nil && (resp.Err == nil || strings.Contains(resp.Err.Error(), "TOPIC_ALREADY_EXISTS"))
	})
	isrWhole := func() bool {
		for p := range int32(checkerPartitions) {
			data, _, err := zkc.Get(zkpaths.PartitionStatePath(checkerTopic, p))
			if err != nil {
				return false
			}
			s, err := zkpaths.DecodeLeaderAndIsr(data)
			if err != nil || s.Leader < 0 || len(s.ISR) != 3 {
				return false
			}
		}
		return true
	}
	testcluster.WaitFor(t, 30*time.Second, "every partition's ISR to hold all 3 brokers", isrWhole)

	producer, err := kgo.NewClient(kgo.SeedBrokers(pc.addrs...), kgo.DefaultProduceTopic(checkerTopic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.MetadataMinAge(100*time.Millisecond), kgo.MetadataMaxAge(time.Second), kgo.MaxBufferedRecords(2000))
	if err != nil {
		t.Fatal(err)
	}
	defer producer.Close()

	var (
		mu        sync.Mutex
		acked     = map[string]int32{} // value → partition
		failures  = map[string]int{}
		produced  int
		stopProd  = make(chan struct{})
		producing sync.WaitGroup
	)
	producing.Add(1)
	go func() {
		defer producing.Done()
		for i := 0; ; i++ {
			select {
			case <-stopProd:
				return
			default:
			}
			r := &kgo.Record{Partition: int32(i % checkerPartitions), Value: fmt.Appendf(nil, "r%09d", i)}
			mu.Lock()
			produced++
			mu.Unlock()
			producer.Produce(ctx, r, func(r *kgo.Record, err error) {
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					failures[err.Error()]++
					return
				}
				acked[string(r.Value)] = r.Partition
			})
		}
	}()

	ackedCount := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(acked)
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 4))
	faults := 0
	for faults < checkerFaults {
		before := ackedCount()
		testcluster.WaitFor(t, 30*time.Second, "records acknowledged since the last fault", func() bool { return ackedCount() > before+200 })
		victim := int32(rng.IntN(3) + 1)
		pc.procs[victim].Kill()
		faults++
		// Produce a little while the broker is down, then bring it back.
		mid := ackedCount()
		testcluster.WaitFor(t, 30*time.Second, "records acknowledged with a broker down", func() bool { return ackedCount() > mid+100 })
		pc.procs[victim].Restart()
		testcluster.WaitFor(t, 45*time.Second, "every ISR whole again", isrWhole)
	}

	// All at once: every broker dies and comes back; high watermarks and
	// logs are recovered from disk.
	for _, p := range pc.procs {
		p.Kill()
	}
	faults += len(pc.procs)
	for id, dir := range pc.dirs {
		hws, err := storage.ReadOffsetCheckpoint(filepath.Join(dir, storage.ReplicationOffsetCheckpointFile))
		if err != nil {
			t.Fatal(err)
		}
		var parts []string
		for p := range int32(checkerPartitions) {
			parts = append(parts, strconv.FormatInt(hws[storage.TopicPartition{Topic: checkerTopic, Partition: p}], 10))
		}
		t.Logf("broker %d replication-offset-checkpoint at the kill: %s", id, strings.Join(parts, " "))
	}
	for _, p := range pc.procs {
		p.Restart()
	}
	testcluster.WaitFor(t, 45*time.Second, "every ISR whole after the full restart", isrWhole)
	close(stopProd)
	producing.Wait()
	flushCtx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := producer.Flush(flushCtx); err != nil {
		t.Fatalf("flush: %v", err)
	}

	mu.Lock()
	ackedTotal, producedTotal := len(acked), produced
	failed := maps2str(failures)
	mu.Unlock()

	// Read every partition to its end.
	consumer, err := kgo.NewClient(kgo.SeedBrokers(pc.addrs...), kgo.ConsumeTopics(checkerTopic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.MetadataMinAge(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer consumer.Close()
	var ends kadm.ListedOffsets
	testcluster.WaitFor(t, 30*time.Second, "end offsets", func() bool {
		ends, err = kadm.NewClient(consumer).ListEndOffsets(ctx, checkerTopic)
		return err == nil && ends.Error() == nil && len(ends[checkerTopic]) == checkerPartitions
	})
	var total int64
	for _, o := range ends[checkerTopic] {
		total += o.Offset
	}
	seen := map[string]int{}
	last := map[int32]string{}
	for consumed := int64(0); consumed < total; {
		fs := consumer.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d of %d records", consumed, total)
		}
		fs.EachRecord(func(r *kgo.Record) {
			consumed++
			v := string(r.Value)
			seen[v]++
			if prev, ok := last[r.Partition]; ok && v <= prev {
				t.Errorf("partition %d: %s at offset %d follows %s", r.Partition, v, r.Offset, prev)
			}
			last[r.Partition] = v
		})
	}
	missing, duplicated := 0, 0
	for v, p := range acked {
		switch seen[v] {
		case 0:
			missing++
			if missing <= 5 {
				t.Errorf("acknowledged record %s (partition %d) is missing", v, p)
			}
		case 1:
		default:
			duplicated++
		}
	}
	for v, n := range seen {
		if n > 1 {
			duplicated++
			if duplicated <= 5 {
				t.Errorf("record %s appears %d times", v, n)
			}
		}
	}
	t.Logf("produced %d records, %d acknowledged, %d in the log; %d kill -9 faults (%d single, then all %d at once); failed sends: %s",
		producedTotal, ackedTotal, total, faults, checkerFaults, len(pc.procs), failed)
	if missing > 0 || duplicated > 0 {
		t.Fatalf("%d acknowledged records missing, %d duplicated", missing, duplicated)
	}
}

func maps2str(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	var parts []string
	for k, v := range m {
		parts = append(parts, fmt.Sprintf("%d×%q", v, k))
	}
	return strings.Join(parts, ", ")
}
