package broker_test

// KIP-101's two motivating failures, reproduced deterministically. The test
// plays the controller: it holds /controller itself (so no broker becomes
// controller) and sends LeaderAndIsr requests, which fixes every leadership
// change and its order. With replica.truncation.mode=hw (the pre-0.11 rule:
// a new follower cuts its log at its own high watermark) the acknowledged
// record is lost, or the replicas diverge; with the default (epoch) they do
// not.

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"
	"go.uber.org/zap/zaptest/observer"

	"github.com/zkafka/zkafka/broker"
	"github.com/zkafka/zkafka/brokerconfig"
	"github.com/zkafka/zkafka/internal/testcluster"
	"github.com/zkafka/zkafka/internal/wait"
	"github.com/zkafka/zkafka/internal/zkclient"
	"github.com/zkafka/zkafka/internal/zktest"
	"github.com/zkafka/zkafka/zkpaths"
)

const fakeControllerEpoch = 1

// fakeController is the test in the controller's seat.
type fakeController struct {
	t       *testing.T
	connect string
	zk      *zkclient.Client
	mode    string
	ibp     string // inter.broker.protocol.version, Kafka 2.8's default when empty
	dirs    map[int32]string
	servers map[int32]*broker.Server
	logs    *observer.ObservedLogs // every broker's INFO lines and above
	tee     zap.Option
}

func newFakeController(t *testing.T, mode string) *fakeController {
	connect := zktest.NewChroot(t)
	zkc := zkSession(t, connect)
	for _, p := range zkpaths.PersistentPaths {
		if err := zkc.CreateIfMissing(p, nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := zkc.Create(zkpaths.Controller, zkpaths.ControllerRegistration{BrokerID: 99, Timestamp: time.Now().UnixMilli()}.Encode(),
		zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	if err := zkc.CreateIfMissing(zkpaths.ControllerEpoch, zkpaths.EncodeControllerEpoch(fakeControllerEpoch)); err != nil {
		t.Fatal(err)
	}
	fc := &fakeController{t: t, connect: connect, zk: zkc, mode: mode, dirs: map[int32]string{}, servers: map[int32]*broker.Server{}}
	var core zapcore.Core
	core, fc.logs = observer.New(zap.InfoLevel)
	fc.tee = zap.WrapCore(func(c zapcore.Core) zapcore.Core { return zapcore.NewTee(c, core) })
	// The log dirs exist before the brokers' cleanup is registered, so they
	// are removed after the brokers stop.
	for _, id := range []int32{1, 2} {
		fc.dirs[id] = t.TempDir()
	}
	t.Cleanup(func() {
		for id := range fc.servers {
			fc.stop(id)
		}
	})
	return fc
}

// start starts (or restarts, on its old log dir) broker 1 or 2.
func (fc *fakeController) start(id int32) {
	fc.t.Helper()
	props := map[string]string{
		"broker.id":         strconv.Itoa(int(id)),
		"listeners":         "PLAINTEXT://127.0.0.1:0",
		"log.dirs":          fc.dirs[id],
		"zookeeper.connect": fc.connect,
		// A follower's fetch that finds nothing new waits long: it learns
		// the leader's new high watermark only with its next fetch, and no
		// refetch races the steps of the scenario.
		"replica.fetch.wait.max.ms": "30000",
		"replica.fetch.backoff.ms":  "50",
		"replica.truncation.mode":   fc.mode,
		// There is no controller to ask.
		"controlled.shutdown.enable": "false",
	}
	if fc.ibp != "" {
		props["inter.broker.protocol.version"] = fc.ibp
	}
	cfg, err := brokerconfig.New(props)
	if err != nil {
		fc.t.Fatal(err)
	}
	logger := zaptest.NewLogger(fc.t, zaptest.Level(zap.WarnLevel), zaptest.WrapOptions(fc.tee))
	s := broker.NewServer(cfg, logger.Named(fmt.Sprintf("broker-%d", id)))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.Start(ctx); err != nil {
		fc.t.Fatal(err)
	}
	fc.servers[id] = s
}

func (fc *fakeController) stop(id int32) {
	if s := fc.servers[id]; s != nil {
		s.Shutdown()
		delete(fc.servers, id)
	}
}

func (fc *fakeController) addr(id int32) string {
	a, _ := fc.servers[id].ListenerAddr("PLAINTEXT")
	return a
}

// leaderAndIsr sends one partition state of topic-0 to broker target, and
// records it in the state znode as a controller would.
func (fc *fakeController) leaderAndIsr(target int32, topic string, leader, leaderEpoch int32, isr, replicas []int32) {
	fc.t.Helper()
	state := zkpaths.LeaderAndIsr{Leader: leader, LeaderEpoch: leaderEpoch, ISR: isr, ControllerEpoch: fakeControllerEpoch}
	path := zkpaths.PartitionStatePath(topic, 0)
	if err := fc.zk.CreateIfMissing(path, state.Encode()); err != nil {
		fc.t.Fatal(err)
	}
	stat, err := fc.zk.Set(path, state.Encode(), -1)
	if err != nil {
		fc.t.Fatal(err)
	}
	req := kmsg.NewPtrLeaderAndISRRequest()
	req.ControllerID, req.ControllerEpoch = 99, fakeControllerEpoch
	ps := kmsg.NewLeaderAndISRRequestTopicPartition()
	ps.Topic, ps.Partition, ps.ControllerEpoch = topic, 0, fakeControllerEpoch
	ps.Leader, ps.LeaderEpoch, ps.ISR, ps.Replicas, ps.ZKVersion = leader, leaderEpoch, isr, replicas, stat.Version
	req.PartitionStates = append(req.PartitionStates, ps)
	if s := fc.servers[leader]; s != nil {
		host, port := splitAddr(fc.t, fc.addr(leader))
		l := kmsg.NewLeaderAndISRRequestLiveLeader()
		l.BrokerID, l.Host, l.Port = leader, host, port
		req.LiveLeaders = append(req.LiveLeaders, l)
	}
	resp := raw(fc.t, fc.addr(target), req, 1).(*kmsg.LeaderAndISRResponse)
	if resp.ErrorCode != 0 || len(resp.Partitions) != 1 || resp.Partitions[0].ErrorCode != 0 {
		fc.t.Fatalf("LeaderAndIsr to %d: %+v", target, resp)
	}
}

func splitAddr(t *testing.T, addr string) (string, int32) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		t.Fatal(err)
	}
	return host, int32(port)
}

func (fc *fakeController) produce(leader int32, topic string, acks int16, value string) int64 {
	fc.t.Helper()
	err, offset := produceAcks(fc.t, fc.addr(leader), topic, acks, value)
	if err != nil {
		fc.t.Fatalf("produce %q to %d: %v", value, leader, err)
	}
	return offset
}

func (fc *fakeController) partition(id int32, topic string) *broker.Partition {
	fc.t.Helper()
	p, ok := fc.servers[id].ReplicaManager().Partition(topic, 0)
	if !ok {
		fc.t.Fatalf("broker %d has no replica of %s-0", id, topic)
	}
	return p
}

// logValues returns the values of every record in the replica's log.
func (fc *fakeController) logValues(id int32, topic string) []string {
	fc.t.Helper()
	return recordValues(fc.t, fc.partition(id, topic).Log())
}

func recordValues(t *testing.T, l broker.PartitionLog) []string {
	t.Helper()
	data, err := l.Read(l.LogStartOffset(), 1<<20, l.LogEndOffset(), true)
	if err != nil {
		t.Fatal(err)
	}
	var values []string
	for len(data) > 0 {
		var b kmsg.RecordBatch
		if err := b.ReadFrom(data); err != nil {
			t.Fatal(err)
		}
		data = data[12+b.Length:]
		recs := b.Records
		for range b.NumRecords {
			n, used := binary.Varint(recs)
			var r kmsg.Record
			if err := r.ReadFrom(recs[:used+int(n)]); err != nil {
				t.Fatal(err)
			}
			recs = recs[used+int(n):]
			values = append(values, string(r.Value))
		}
	}
	return values
}

// TestKIP101Scenario1 — high-watermark truncation followed by an immediate
// leader change. Leader B (2) and follower A (1) both have m1, m2, and m2 is
// acknowledged (B's high watermark is 2), but A's high watermark is still 1:
// a follower learns it one fetch late. A becomes follower again under a new
// leader epoch; then B dies and A, still in the ISR, is elected. With HW
// truncation A has cut m2 at its high watermark and the acknowledged record is
// gone; with epochs A truncates only once the leader says where its epoch
// ends, so it keeps m2.
func TestKIP101Scenario1(t *testing.T) {
	for _, c := range []struct {
		mode string
		want []string
	}{
		{"hw", []string{"m1"}},
		{"epoch", []string{"m1", "m2"}},
	} {
		t.Run(c.mode, func(t *testing.T) {
			const topic = "kip101-1"
			fc := newFakeController(t, c.mode)
			fc.start(1)
			fc.start(2)
			replicas := []int32{2, 1}
			fc.leaderAndIsr(2, topic, 2, 1, replicas, replicas)
			fc.leaderAndIsr(1, topic, 2, 1, replicas, replicas)
			fc.produce(2, topic, -1, "m1")
			if off := fc.produce(2, topic, -1, "m2"); off != 1 {
				t.Fatalf("m2 at offset %d", off)
			}
			a := fc.partition(1, topic)
			if a.Log().LogEndOffset() != 2 || a.HighWatermark() != 1 || fc.partition(2, topic).HighWatermark() != 2 {
				t.Fatalf("precondition: follower LEO %d HW %d, leader HW %d; want 2, 1, 2",
					a.Log().LogEndOffset(), a.HighWatermark(), fc.partition(2, topic).HighWatermark())
			}

			fc.leaderAndIsr(1, topic, 2, 2, replicas, replicas) // A follows B again, in epoch 2
			fc.stop(2)                                          // B dies
			fc.leaderAndIsr(1, topic, 1, 3, []int32{1}, replicas)

			got := fc.logValues(1, topic)
			t.Logf("mode %s: new leader's log %v (m2 was acknowledged)", c.mode, got)
			if !slices.Equal(got, c.want) {
				t.Fatalf("mode %s: new leader holds %v, want %v", c.mode, got, c.want)
			}
		})
	}
}

// TestKIP101Scenario2 — replica divergence after both replicas restart. A (1)
// holds m1 (epoch 1) and m2 (epoch 2) with high watermark 2; B (2) holds only
// m1, as after a power loss took B's unflushed m2 (here B simply never got
// it). Both are down; B comes back first and is elected, and appends m3 at
// offset 1. A comes back as B's follower. With HW truncation A keeps
// everything below its high watermark 2, so offset 1 is m2 on A and m3 on B
// for ever; with epochs A asks B where epoch 2 ends (B answers: epoch 1 ends
// at 1), truncates m2 and fetches m3. Before inter.broker.protocol.version
// 2.7-IV1 A asks with OffsetForLeaderEpoch before it fetches; from it on A
// fetches at once, saying its last epoch is 2, and B's Fetch answer carries
// the diverging epoch instead of records.
func TestKIP101Scenario2(t *testing.T) {
	for _, c := range []struct{ mode, ibp string }{{"hw", ""}, {"epoch", "2.6"}, {"epoch", "2.8"}} {
		mode := c.mode
		t.Run(mode+c.ibp, func(t *testing.T) {
			const topic = "kip101-2"
			fc := newFakeController(t, mode)
			fc.ibp = c.ibp
			fc.start(1)
			fc.start(2)
			replicas := []int32{1, 2}
			fc.leaderAndIsr(1, topic, 1, 1, replicas, replicas)
			fc.leaderAndIsr(2, topic, 1, 1, replicas, replicas)
			fc.produce(1, topic, -1, "m1")
			fc.stop(2)
			fc.leaderAndIsr(1, topic, 1, 2, []int32{1}, replicas)
			fc.produce(1, topic, -1, "m2")
			if hw := fc.partition(1, topic).HighWatermark(); hw != 2 {
				t.Fatalf("A's high watermark %d, want 2", hw)
			}
			fc.stop(1)

			fc.start(2)
			fc.leaderAndIsr(2, topic, 2, 3, []int32{2}, replicas)
			if off := fc.produce(2, topic, 1, "m3"); off != 1 {
				t.Fatalf("m3 at offset %d, want 1", off)
			}
			fc.start(1)
			fc.leaderAndIsr(1, topic, 2, 3, []int32{2}, replicas)
			fc.produce(2, topic, 1, "m4")

			leader := fc.partition(2, topic).Log()
			follower := fc.partition(1, topic).Log()
			wait.For(t, 20*time.Second, "the follower to reach the leader's log end", func() bool {
				return follower.LogEndOffset() == leader.LogEndOffset()
			})
			a, b := fc.logValues(1, topic), fc.logValues(2, topic)
			t.Logf("mode %s: A %v, B %v", mode, a, b)
			if !slices.Equal(b, []string{"m1", "m3", "m4"}) {
				t.Fatalf("leader B holds %v", b)
			}
			if diverged := !slices.Equal(a, b); diverged != (mode == "hw") {
				t.Fatalf("mode %s: follower A holds %v, leader B %v; divergence expected only with hw", mode, a, b)
			}
			if mode == "hw" {
				return
			}
			byRoundTrip := fc.logs.FilterMessage("Truncated by leader epoch").Len()
			onFetch := fc.logs.FilterMessage("Truncated on the fetch response's diverging epoch").FilterField(zap.Int64("truncation-offset", 1)).Len()
			if want := c.ibp == "2.8"; (onFetch == 1) != want || (byRoundTrip == 1) == want {
				t.Fatalf("IBP %s: %d truncations on a fetch response to offset 1, %d after OffsetForLeaderEpoch; want one of the %s",
					c.ibp, onFetch, byRoundTrip, map[bool]string{true: "first", false: "second"}[want])
			}
		})
	}
}

// TestFollowerDropsAnEpochItLedWithoutWriting: B (2) leads epoch 2 and
// appends nothing, so its log ends with epoch 2 starting at its log end;
// then A (1), which never had epoch 2, leads epoch 3. B's fetch names epoch
// 2, A answers that its log diverged at epoch 1's end, which is B's log
// end: B cuts nothing but must drop epoch 2, or it would name it, and be
// told so, for ever instead of fetching. It fetches A's next record after
// one such answer.
func TestFollowerDropsAnEpochItLedWithoutWriting(t *testing.T) {
	const topic = "empty-epoch"
	fc := newFakeController(t, "epoch")
	fc.start(1)
	fc.start(2)
	replicas := []int32{1, 2}
	fc.leaderAndIsr(1, topic, 1, 1, replicas, replicas)
	fc.leaderAndIsr(2, topic, 1, 1, replicas, replicas)
	fc.produce(1, topic, -1, "m1")
	fc.leaderAndIsr(2, topic, 2, 2, replicas, replicas)
	fc.leaderAndIsr(1, topic, 2, 2, replicas, replicas)
	fc.leaderAndIsr(1, topic, 1, 3, replicas, replicas)
	fc.leaderAndIsr(2, topic, 1, 3, replicas, replicas)
	fc.produce(1, topic, 1, "m2")
	wait.For(t, 20*time.Second, "B to fetch m2", func() bool {
		return slices.Equal(fc.logValues(2, topic), []string{"m1", "m2"})
	})
	if n := fc.logs.FilterMessage("Truncated on the fetch response's diverging epoch").Len(); n > 1 {
		t.Fatalf("B was told %d times that its log diverged, want once", n)
	}
	if epoch, _ := fc.partition(2, topic).Log().EndOffsetForEpoch(2); epoch == 2 {
		t.Fatal("B still has epoch 2")
	}
}

// TestFollowerFetchBeyondLeaderLog covers a follower whose log is longer than
// its new leader's, kept by high-watermark truncation: A (1) has m1 m2 with
// high watermark 2, B (2) only m1 when B becomes leader. The leader answers
// A's fetch at 2 with OFFSET_OUT_OF_RANGE; A then asks B for its log end
// offset, truncates to it and follows B's log from there.
func TestFollowerFetchBeyondLeaderLog(t *testing.T) {
	const topic = "beyond"
	fc := newFakeController(t, "hw")
	fc.start(1)
	fc.start(2)
	replicas := []int32{1, 2}
	fc.leaderAndIsr(1, topic, 1, 1, replicas, replicas)
	fc.leaderAndIsr(2, topic, 1, 1, replicas, replicas)
	fc.produce(1, topic, -1, "m1")
	fc.stop(2)
	fc.leaderAndIsr(1, topic, 1, 2, []int32{1}, replicas)
	fc.produce(1, topic, -1, "m2")
	fc.start(2)
	fc.leaderAndIsr(2, topic, 2, 3, []int32{2}, replicas)

	req := fetchReq(topic, 2, 0, 1)
	req.ReplicaID = 1
	req.Topics[0].Partitions[0].CurrentLeaderEpoch = 3
	p := raw(t, fc.addr(2), req, 12).(*kmsg.FetchResponse).Topics[0].Partitions[0]
	if p.ErrorCode != kerr.OffsetOutOfRange.Code || len(p.RecordBatches) != 0 {
		t.Fatalf("follower fetch beyond the leader's log: %v with %d bytes, want OFFSET_OUT_OF_RANGE",
			kerr.ErrorForCode(p.ErrorCode), len(p.RecordBatches))
	}

	// The same fetch saying its last batch was of epoch 2 (KIP-595): B's
	// epoch 1 ends at offset 1 and B never had epoch 2, so the answer is the
	// diverging epoch, with no records.
	req.Topics[0].Partitions[0].LastFetchedEpoch = 2
	p = raw(t, fc.addr(2), req, 12).(*kmsg.FetchResponse).Topics[0].Partitions[0]
	if p.ErrorCode != 0 || p.DivergingEpoch.Epoch != 1 || p.DivergingEpoch.EndOffset != 1 || len(p.RecordBatches) != 0 {
		t.Fatalf("follower fetch with last fetched epoch 2: %v, diverging %+v, %d bytes; want epoch 1 ending at 1",
			kerr.ErrorForCode(p.ErrorCode), p.DivergingEpoch, len(p.RecordBatches))
	}

	fc.leaderAndIsr(1, topic, 2, 3, []int32{2}, replicas) // A keeps m1 m2 (its HW is 2) and fetches at 2
	a := fc.partition(1, topic).Log()
	wait.For(t, 20*time.Second, "the follower to truncate to the leader's log end", func() bool {
		return a.LogEndOffset() == 1
	})
	fc.produce(2, topic, 1, "x2")
	wait.For(t, 20*time.Second, "the follower to fetch from the leader", func() bool {
		return slices.Equal(fc.logValues(1, topic), []string{"m1", "x2"})
	})
	if got := fc.logValues(2, topic); !slices.Equal(got, []string{"m1", "x2"}) {
		t.Fatalf("leader holds %v", got)
	}
}

// TestUncleanElectionTruncatesReturningLeader runs the real controller with
// unclean.leader.election.enable: broker 1 leads alone and writes m1..m3 that
// broker 2 never saw; both stop, 2 comes back first and is elected although
// it was out of the ISR, and writes x1. When 1 returns as follower it
// truncates its unreplicated records by leader epoch and takes 2's log.
func TestUncleanElectionTruncatesReturningLeader(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 2, Properties: map[string]string{
		"unclean.leader.election.enable": "true",
		"auto.leader.rebalance.enable":   "false",
		"replica.fetch.backoff.ms":       "100",
	}})
	createAssigned(t, c.Addr(c.WaitForController()), "unclean", [][]int32{{1, 2}}, nil)
	c.WaitFor("ISR [1 2]", func() bool { s, _ := c.PartitionState("unclean", 0); return len(s.ISR) == 2 })
	if err, _ := produceAcks(t, c.Addr(c.WaitForLeader("unclean", 0)), "unclean", -1, "m0"); err != nil {
		t.Fatal(err)
	}
	c.StopBroker(2)
	c.WaitFor("ISR [1]", func() bool { s, _ := c.PartitionState("unclean", 0); return slices.Equal(s.ISR, []int32{1}) })
	for _, v := range []string{"m1", "m2", "m3"} {
		if err, _ := produceAcks(t, c.Addr(1), "unclean", 1, v); err != nil {
			t.Fatal(err)
		}
	}
	c.StopBroker(1)
	c.StartBroker(2)
	c.WaitFor("broker 2 elected uncleanly", func() bool { s, _ := c.PartitionState("unclean", 0); return s.Leader == 2 })
	c.WaitForLeader("unclean", 0)
	if err, off := produceAcks(t, c.Addr(2), "unclean", 1, "x1"); err != nil || off != 1 {
		t.Fatalf("produce to the unclean leader: %v at %d, want offset 1", err, off)
	}
	c.StartBroker(1)
	want := []string{"m0", "x1"}
	c.WaitFor("the returning leader to take the new leader's log", func() bool {
		p, ok := c.Broker(1).ReplicaManager().Partition("unclean", 0)
		return ok && slices.Equal(recordValues(t, p.Log()), want)
	})
}
