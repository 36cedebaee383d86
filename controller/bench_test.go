package controller

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/internal/wait"
	"github.com/zkafka/zkafka/internal/workers"
	"github.com/zkafka/zkafka/internal/zkclient"
	"github.com/zkafka/zkafka/internal/zktest"
	"github.com/zkafka/zkafka/zkpaths"
)

// Benchmarks of the controller's own work on a real ZooKeeper, with brokers that are only
// /brokers/ids registrations and a Dial whose clients answer every request at once (so neither
// the network nor the brokers are measured). Run with
//
//	go test -run '^$' -bench . -benchtime 1x ./controller
//
// 3 brokers, replication factor 3, topics of 100 partitions. The benchmarks start their own
// ZooKeeper with a 2 GiB heap: zktest's shared server runs in 64 MiB, which 50,000 partitions'
// znodes fill, and the measurement would then be of the JVM's garbage collector.

const benchPartitionsPerTopic = 100

// benchBrokers answers every request at once and notes, per broker, how many partitions the
// UpdateMetadata requests of each controller epoch covered.
type benchBrokers struct {
	mu      sync.Mutex
	covered map[int32]map[int32]int // epoch -> broker -> partitions in UpdateMetadata
	changed chan struct{}
}

func (bb *benchBrokers) dial(_ context.Context, addr string) (BrokerClient, error) {
	var port int32
	if _, err := fmt.Sscanf(addr[strings.LastIndexByte(addr, ':')+1:], "%d", &port); err != nil {
		return nil, err
	}
	return &benchClient{bb: bb, to: port - brokerPort(0)}, nil
}

type benchClient struct {
	bb *benchBrokers
	to int32
}

func (c *benchClient) Request(_ context.Context, req kmsg.Request) (kmsg.Response, error) {
	if um, ok := req.(*kmsg.UpdateMetadataRequest); ok {
		n := 0
		for _, t := range um.TopicStates {
			n += len(t.PartitionStates)
		}
		c.bb.mu.Lock()
		if c.bb.covered[um.ControllerEpoch] == nil {
			c.bb.covered[um.ControllerEpoch] = map[int32]int{}
		}
		c.bb.covered[um.ControllerEpoch][c.to] += n
		c.bb.mu.Unlock()
		select {
		case c.bb.changed <- struct{}{}:
		default:
		}
	}
	resp := req.ResponseKind()
	resp.SetVersion(req.GetVersion())
	return resp, nil
}

func (c *benchClient) Close() error { return nil }

// waitCovered waits until each of brokers got UpdateMetadata for at least n partitions from
// controller epoch epoch.
func (bb *benchBrokers) waitCovered(tb testing.TB, epoch int32, brokers []int32, n int) {
	deadline := time.After(5 * time.Minute)
	for {
		bb.mu.Lock()
		done := true
		for _, id := range brokers {
			if bb.covered[epoch][id] < n {
				done = false
			}
		}
		bb.mu.Unlock()
		if done {
			return
		}
		select {
		case <-bb.changed:
		case <-time.After(10 * time.Millisecond):
		case <-deadline:
			tb.Fatalf("brokers never got metadata for %d partitions from epoch %d", n, epoch)
		}
	}
}

// benchCluster is a chroot with 3 registered brokers, n partitions brought online by a first
// controller, and that controller.
type benchCluster struct {
	tb      testing.TB
	connect string
	admin   *zkclient.Client
	brokers *benchBrokers
	active  *Controller
	session *zkclient.Client
	nextID  int32
}

func benchSession(tb testing.TB, connect string) *zkclient.Client {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	zkc, err := zkclient.Connect(ctx, zkclient.Config{Connect: connect, SessionTimeout: 10 * time.Second})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = zkc.Close() })
	return zkc
}

// startBenchZooKeeper starts a ZooKeeper with a 2 GiB heap and a production JVM for one benchmark, stopped (and its data
// removed) when the benchmark ends, and returns its address.
func startBenchZooKeeper(b *testing.B) string {
	b.Helper()
	return zktest.Start(b, zktest.Options{MaxHeap: "2g", Benchmark: true}).Addr()
}

func newBenchCluster(tb testing.TB, server string, partitions int) *benchCluster {
	tb.Helper()
	bc := &benchCluster{tb: tb, connect: server + "/bench-" + zkpaths.NewTopicID(), brokers: &benchBrokers{covered: map[int32]map[int32]int{}, changed: make(chan struct{}, 1)}, nextID: 1}
	bc.admin = benchSession(tb, bc.connect)
	for _, p := range zkpaths.PersistentPaths {
		if err := bc.admin.CreateIfMissing(p, nil); err != nil {
			tb.Fatal(err)
		}
	}
	for id := int32(1); id <= 3; id++ {
		zkc := benchSession(tb, bc.connect)
		reg := zkpaths.BrokerRegistration{ID: id, Endpoints: []zkpaths.Endpoint{{
			ListenerName: "PLAINTEXT", SecurityProtocol: zkpaths.SecurityProtocolPlaintext, Host: "127.0.0.1", Port: brokerPort(id),
		}}, JmxPort: -1, Timestamp: time.Now().UnixMilli()}
		if _, err := zkc.Create(zkpaths.BrokerPath(id), reg.Encode(), zk.FlagEphemeral, nil); err != nil {
			tb.Fatal(err)
		}
	}
	bc.active, bc.session = bc.startController()
	wait.For(tb, waitTimeout, "the first controller", bc.active.IsActive)
	topics := partitions / benchPartitionsPerTopic
	workers.ForEach(zkPipelineDepth, topics, func(i int) {
		a := zkpaths.TopicAssignment{TopicID: zkpaths.NewTopicID(), Partitions: map[int32][]int32{}}
		for p := range int32(benchPartitionsPerTopic) {
			first := (int32(i) + p) % 3
			a.Partitions[p] = []int32{first + 1, (first+1)%3 + 1, (first+2)%3 + 1}
		}
		if _, err := bc.admin.Create(zkpaths.TopicPath(fmt.Sprintf("bench-%05d", i)), a.Encode(), 0, nil); err != nil {
			tb.Error(err)
		}
	})
	bc.brokers.waitCovered(tb, bc.active.Epoch(), []int32{1, 2, 3}, partitions)
	return bc
}

func (bc *benchCluster) startController() (*Controller, *zkclient.Client) {
	zkc := benchSession(bc.tb, bc.connect)
	ctl := New(Config{BrokerID: bc.nextID, Logger: zap.NewNop(), Dial: bc.brokers.dial}, zkc)
	bc.nextID = bc.nextID%3 + 1
	ctl.Start(context.Background())
	bc.tb.Cleanup(ctl.Stop)
	return ctl, zkc
}

// failover resigns the active controller (closing its session deletes /controller at once) and
// returns how long the standby took to send every broker the metadata of every partition.
func (bc *benchCluster) failover(partitions int) time.Duration {
	standby, standbySession := bc.startController()
	wait.For(bc.tb, waitTimeout, "the standby to see the active controller", func() bool {
		return standby.ActiveControllerID() == bc.active.cfg.BrokerID
	})
	next := bc.active.Epoch() + 1
	start := time.Now()
	bc.active.Stop()
	_ = bc.session.Close()
	bc.brokers.waitCovered(bc.tb, next, []int32{1, 2, 3}, partitions)
	elapsed := time.Since(start)
	bc.active, bc.session = standby, standbySession
	return elapsed
}

var benchPartitions = flag.String("bench-partitions", "1000,10000,50000", "comma-separated partition counts the controller benchmarks run at")

// benchSizes are -bench-partitions' counts.
func benchSizes(b *testing.B) []int {
	var sizes []int
	for f := range strings.SplitSeq(*benchPartitions, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < benchPartitionsPerTopic || n%benchPartitionsPerTopic != 0 {
			b.Fatalf("-bench-partitions: %q is not a positive multiple of %d", f, benchPartitionsPerTopic)
		}
		sizes = append(sizes, n)
	}
	return sizes
}

// BenchmarkFailover: from the active controller's resignation to the new controller having
// sent UpdateMetadata for every partition to every broker.
func BenchmarkFailover(b *testing.B) {
	server := startBenchZooKeeper(b)
	for _, n := range benchSizes(b) {
		b.Run(fmt.Sprintf("partitions=%d", n), func(b *testing.B) {
			bc := newBenchCluster(b, server, n)
			b.ResetTimer()
			var total time.Duration
			for range b.N {
				total += bc.failover(n)
			}
			b.ReportMetric(total.Seconds()/float64(b.N), "s/failover")
		})
	}
}

// BenchmarkControlledShutdown: the controller's handling of ControlledShutdown for broker 1,
// which leads a third of the partitions and follows the rest: new leaders for the first, ISR
// removals for the others, all written to ZooKeeper before the answer.
func BenchmarkControlledShutdown(b *testing.B) {
	server := startBenchZooKeeper(b)
	for _, n := range benchSizes(b) {
		b.Run(fmt.Sprintf("partitions=%d", n), func(b *testing.B) {
			var total time.Duration
			for range b.N {
				b.StopTimer()
				bc := newBenchCluster(b, server, n)
				_, stat, err := bc.admin.Get(zkpaths.BrokerPath(1))
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				start := time.Now()
				remaining, err := bc.active.ControlledShutdown(context.Background(), 1, stat.Czxid)
				total += time.Since(start)
				if err != nil || len(remaining) != 0 {
					b.Fatalf("controlled shutdown: %v, %d partitions remaining", err, len(remaining))
				}
			}
			b.ReportMetric(total.Seconds()/float64(b.N), "s/shutdown")
		})
	}
}
