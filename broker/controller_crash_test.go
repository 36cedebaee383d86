package broker_test

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/internal/testcluster"
	"github.com/zkafka/zkafka/internal/wait"
	"github.com/zkafka/zkafka/internal/zkclient"
	"github.com/zkafka/zkafka/internal/zktest"
	"github.com/zkafka/zkafka/wire"
	"github.com/zkafka/zkafka/zkpaths"
)

// Proofs that need brokers as processes: kill -9 of the controller, a zombie controller
// (SIGSTOP past its session timeout, then SIGCONT), and a broker kill with ISR-only elections.

// procCluster is brokers 1..n as zkafka processes on one ZooKeeper chroot.
type procCluster struct {
	t     *testing.T
	zk    *zkclient.Client
	procs map[int32]*testcluster.Process
	addrs map[int32]string
}

func startProcCluster(t *testing.T, n int32) *procCluster {
	t.Helper()
	return startProcClusterWith(t, n, nil)
}

// startProcClusterWith is startProcCluster with extra server.properties.
func startProcClusterWith(t *testing.T, n int32, extra map[string]string) *procCluster {
	t.Helper()
	connect := zktest.NewChroot(t)
	pc := &procCluster{t: t, zk: zkSession(t, connect), procs: map[int32]*testcluster.Process{}, addrs: map[int32]string{}}
	for id := int32(1); id <= n; id++ {
		port := testcluster.FreePort(t)
		pc.addrs[id] = "127.0.0.1:" + strconv.Itoa(port)
		props := map[string]string{
			"broker.id":                            strconv.Itoa(int(id)),
			"listeners":                            fmt.Sprintf("PLAINTEXT://127.0.0.1:%d", port),
			"log.dirs":                             t.TempDir(),
			"zookeeper.connect":                    connect,
			"zookeeper.session.timeout.ms":         "4000",
			"auto.leader.rebalance.enable":         "false",
			"controlled.shutdown.retry.backoff.ms": "100",
		}
		maps.Copy(props, extra)
		pc.procs[id] = testcluster.StartProcess(t, props)
	}
	pc.waitFor("every broker registered and a controller", func() bool {
		ids, _, err := pc.zk.Children(zkpaths.BrokerIDs)
		id, _ := pc.controller()
		return err == nil && len(ids) == int(n) && id > 0
	})
	return pc
}

// seeds are the brokers' addresses, in broker id order.
func (pc *procCluster) seeds() []string {
	var out []string
	for _, id := range slices.Sorted(maps.Keys(pc.addrs)) {
		out = append(out, pc.addrs[id])
	}
	return out
}

func (pc *procCluster) waitFor(what string, cond func() bool) {
	pc.t.Helper()
	wait.For(pc.t, 30*time.Second, what, cond)
}

// controller returns /controller's broker id (-1 if none) and /controller_epoch.
func (pc *procCluster) controller() (id, epoch int32) {
	id = -1
	if data, _, err := pc.zk.Get(zkpaths.Controller); err == nil {
		if reg, err := zkpaths.DecodeControllerRegistration(data); err == nil {
			id = reg.BrokerID
		}
	}
	if data, _, err := pc.zk.Get(zkpaths.ControllerEpoch); err == nil {
		epoch, _ = zkpaths.DecodeControllerEpoch(data)
	}
	return id, epoch
}

// createTopic creates a topic with an explicit assignment through the controller and waits
// until every partition has a leader in ZooKeeper.
func (pc *procCluster) createTopic(topic string, assignment [][]int32) {
	pc.t.Helper()
	id, _ := pc.controller()
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, -1, -1
	for p, replicas := range assignment {
		a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
		a.Partition, a.Replicas = int32(p), replicas
		rt.ReplicaAssignment = append(rt.ReplicaAssignment, a)
	}
	req.Topics = append(req.Topics, rt)
	req.TimeoutMillis = 20000
	resp := raw(pc.t, pc.addrs[id], req, 5).(*kmsg.CreateTopicsResponse)
	if err := kerr.ErrorForCode(resp.Topics[0].ErrorCode); err != nil {
		pc.t.Fatalf("create %s: %v", topic, err)
	}
	pc.waitFor("leaders for "+topic, func() bool {
		for p := range assignment {
			if s, _, ok := pc.state(topic, int32(p)); !ok || s.Leader < 0 {
				return false
			}
		}
		return true
	})
}

func (pc *procCluster) state(topic string, p int32) (zkpaths.LeaderAndIsr, *zk.Stat, bool) {
	data, stat, err := pc.zk.Get(zkpaths.PartitionStatePath(topic, p))
	if err != nil {
		return zkpaths.LeaderAndIsr{}, nil, false
	}
	s, err := zkpaths.DecodeLeaderAndIsr(data)
	return s, stat, err == nil
}

func (pc *procCluster) registered(id int32) (bool, int64) {
	ok, stat, err := pc.zk.Exists(zkpaths.BrokerPath(id))
	if err != nil || !ok {
		return false, 0
	}
	return true, stat.Czxid
}

// TestKillControllerElectsNewOne kill -9s the controller: another broker wins with epoch + 1,
// and every partition keeps or gets a leader among the live brokers, chosen from its ISR.
func TestKillControllerElectsNewOne(t *testing.T) {
	pc := startProcCluster(t, 3)
	assignment := [][]int32{{1, 2, 3}, {2, 3, 1}, {3, 1, 2}, {1, 2, 3}, {2, 3, 1}, {3, 1, 2}}
	pc.createTopic("k", assignment)
	first, epoch := pc.controller()
	before := map[int32]zkpaths.LeaderAndIsr{}
	for p := range int32(len(assignment)) {
		before[p], _, _ = pc.state("k", p)
	}
	pc.procs[first].Kill()

	var second int32
	pc.waitFor("a new controller with epoch + 1", func() bool {
		id, e := pc.controller()
		second = id
		return id > 0 && id != first && e == epoch+1
	})
	pc.waitFor("every partition led by a live ISR member, the dead broker out of every ISR", func() bool {
		for p := range int32(len(assignment)) {
			s, _, ok := pc.state("k", p)
			if !ok || s.Leader < 0 || s.Leader == first || slices.Contains(s.ISR, first) {
				return false
			}
		}
		return true
	})
	for p := range int32(len(assignment)) {
		s, _, _ := pc.state("k", p)
		if !slices.Contains(before[p].ISR, s.Leader) {
			t.Errorf("k-%d: new leader %d was not in the ISR %v", p, s.Leader, before[p].ISR)
		}
		if before[p].Leader != first && s.Leader != before[p].Leader {
			t.Errorf("k-%d: leader moved from %d to %d though its broker lives", p, before[p].Leader, s.Leader)
		}
		if s.ControllerEpoch > epoch+1 {
			t.Errorf("k-%d: controller epoch %d, want at most %d", p, s.ControllerEpoch, epoch+1)
		}
	}
	pc.waitFor("the survivors' metadata naming the new controller", func() bool {
		for id, addr := range pc.addrs {
			if id == first {
				continue
			}
			if resp := rawMetadata(t, addr); resp == nil || resp.ControllerID != second {
				return false
			}
		}
		return true
	})
}

// TestZombieControllerIsFencedAcrossProcesses pauses the controller process (SIGSTOP) past its
// session timeout while a topic is created, lets another broker win, and resumes it (SIGCONT).
// None of the old controller's ZooKeeper writes land: /controller_epoch keeps the new epoch and
// version, the new topic's state znodes were written once, by the new epoch, and no state znode
// changed since carries the old epoch. Every broker rejects requests of the old epoch with
// STALE_CONTROLLER_EPOCH.
func TestZombieControllerIsFencedAcrossProcesses(t *testing.T) {
	pc := startProcCluster(t, 3)
	pc.createTopic("z", [][]int32{{1, 2, 3}, {2, 3, 1}, {3, 1, 2}})
	zombie, oldEpoch := pc.controller()
	_, oldCzxid := pc.registered(zombie)

	pc.procs[zombie].Pause()
	// The paused controller's watch on /brokers/topics fires into its socket; it will only see
	// the event after it resumes, with a session that is gone.
	during := zkpaths.TopicAssignment{TopicID: zkpaths.NewTopicID(), Partitions: map[int32][]int32{0: {1, 2, 3}, 1: {2, 3, 1}}}
	if _, err := pc.zk.Create(zkpaths.TopicPath("during"), during.Encode(), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	newEpoch := oldEpoch + 1
	pc.waitFor("another controller with the next epoch", func() bool {
		id, e := pc.controller()
		return id > 0 && id != zombie && e == newEpoch
	})
	pc.waitFor("the new topic created by the new controller", func() bool {
		for p := range int32(2) {
			if s, _, ok := pc.state("during", p); !ok || s.Leader < 0 {
				return false
			}
		}
		return true
	})
	_, epochStat, err := pc.zk.Get(zkpaths.ControllerEpoch)
	if err != nil {
		t.Fatal(err)
	}
	type partition struct {
		topic string
		p     int32
	}
	mzxids := map[partition]int64{}
	for _, tp := range []partition{{"z", 0}, {"z", 1}, {"z", 2}, {"during", 0}, {"during", 1}} {
		_, stat, _ := pc.state(tp.topic, tp.p)
		mzxids[tp] = stat.Mzxid
	}

	pc.procs[zombie].Resume()
	pc.waitFor("the old controller back as a plain broker with a new registration", func() bool {
		ok, czxid := pc.registered(zombie)
		id, _ := pc.controller()
		return ok && czxid > oldCzxid && id != zombie
	})
	// A broker takes the epoch from the new controller's first request; until
	// that reaches the resumed broker, it rightly still knows the old one.
	newController, _ := pc.controller()
	pc.waitFor("every broker's metadata naming the new controller", func() bool {
		for _, addr := range pc.addrs {
			if resp := rawMetadata(t, addr); resp == nil || resp.ControllerID != newController {
				return false
			}
		}
		return true
	})

	data, stat, err := pc.zk.Get(zkpaths.ControllerEpoch)
	if err != nil {
		t.Fatal(err)
	}
	if e, _ := zkpaths.DecodeControllerEpoch(data); e != newEpoch || stat.Version != epochStat.Version {
		t.Errorf("/controller_epoch is %d at version %d, want %d at version %d", e, stat.Version, newEpoch, epochStat.Version)
	}
	for p := range int32(2) {
		s, stat, _ := pc.state("during", p)
		if stat.Version != 0 && s.ControllerEpoch != newEpoch {
			t.Errorf("during-%d: %+v at version %d", p, s, stat.Version)
		}
		if s.ControllerEpoch == oldEpoch {
			t.Errorf("during-%d was written by the zombie's epoch %d", p, oldEpoch)
		}
	}
	for tp, was := range mzxids {
		s, stat, _ := pc.state(tp.topic, tp.p)
		if stat.Mzxid != was && s.ControllerEpoch != newEpoch {
			t.Errorf("%s-%d changed after the zombie resumed, by controller epoch %d", tp.topic, tp.p, s.ControllerEpoch)
		}
	}
	for id, addr := range pc.addrs {
		l := kmsg.NewPtrLeaderAndISRRequest()
		l.ControllerID, l.ControllerEpoch, l.BrokerEpoch = zombie, oldEpoch, -1
		if got := raw(t, addr, l, 5).(*kmsg.LeaderAndISRResponse); got.ErrorCode != kerr.StaleControllerEpoch.Code {
			t.Errorf("broker %d took LeaderAndIsr of epoch %d: error %d", id, oldEpoch, got.ErrorCode)
		}
		u := kmsg.NewPtrUpdateMetadataRequest()
		u.ControllerID, u.ControllerEpoch, u.BrokerEpoch = zombie, oldEpoch, -1
		if got := raw(t, addr, u, 7).(*kmsg.UpdateMetadataResponse); got.ErrorCode != kerr.StaleControllerEpoch.Code {
			t.Errorf("broker %d took UpdateMetadata of epoch %d: error %d", id, oldEpoch, got.ErrorCode)
		}
		sr := kmsg.NewPtrStopReplicaRequest()
		sr.ControllerID, sr.ControllerEpoch, sr.BrokerEpoch = zombie, oldEpoch, -1
		st := kmsg.NewStopReplicaRequestTopic()
		st.Topic = "z"
		st.PartitionStates = []kmsg.StopReplicaRequestTopicPartitionState{{Partition: 0, LeaderEpoch: -2, Delete: true}}
		sr.Topics = append(sr.Topics, st)
		if got := raw(t, addr, sr, 3).(*kmsg.StopReplicaResponse); got.ErrorCode != kerr.StaleControllerEpoch.Code {
			t.Errorf("broker %d took StopReplica of epoch %d: error %d", id, oldEpoch, got.ErrorCode)
		}
	}
}

// TestBrokerKillElectsOnlyFromISR kill -9s a broker: a partition whose ISR has another member
// moves to it; partitions whose ISR held only the dead broker go offline (leader -1, the ISR
// kept) although another replica is alive, since unclean election is off; when the broker
// returns they come back under it.
func TestBrokerKillElectsOnlyFromISR(t *testing.T) {
	pc := startProcCluster(t, 3)
	controllerID, _ := pc.controller()
	victim := int32(1)
	if victim == controllerID {
		victim = 2
	}
	other := 6 - controllerID - victim
	// a: ISR [victim, other]; b: victim alone; c: replicas [victim, other] but ISR [victim].
	pc.createTopic("isr-a", [][]int32{{victim, other}})
	pc.createTopic("isr-b", [][]int32{{victim}})
	pc.createTopic("isr-c", [][]int32{{victim, other}})
	s, stat, _ := pc.state("isr-c", 0)
	shrunk := zkpaths.LeaderAndIsr{Leader: s.Leader, LeaderEpoch: s.LeaderEpoch, ISR: []int32{victim}, ControllerEpoch: s.ControllerEpoch}
	if _, err := pc.zk.Set(zkpaths.PartitionStatePath("isr-c", 0), shrunk.Encode(), stat.Version); err != nil {
		t.Fatal(err)
	}
	if a, _, _ := pc.state("isr-a", 0); !slices.Contains(a.ISR, other) {
		t.Fatalf("isr-a ISR %v lacks broker %d", a.ISR, other)
	}

	pc.procs[victim].Kill()
	pc.waitFor("isr-a to move to the other ISR member and the others to lose their leader", func() bool {
		a, _, _ := pc.state("isr-a", 0)
		b, _, _ := pc.state("isr-b", 0)
		c, _, _ := pc.state("isr-c", 0)
		return a.Leader == other && slices.Equal(a.ISR, []int32{other}) &&
			b.Leader == -1 && slices.Equal(b.ISR, []int32{victim}) &&
			c.Leader == -1 && slices.Equal(c.ISR, []int32{victim})
	})

	pc.procs[victim].Restart()
	pc.waitFor("the offline partitions back under the returning ISR member", func() bool {
		b, _, _ := pc.state("isr-b", 0)
		c, _, _ := pc.state("isr-c", 0)
		return b.Leader == victim && c.Leader == victim
	})
	if a, _, _ := pc.state("isr-a", 0); a.Leader != other {
		t.Errorf("isr-a moved back to %d on the broker's return (auto-rebalance is off)", a.Leader)
	}
}

// rawMetadata asks a broker for metadata, nil if it does not answer.
func rawMetadata(t *testing.T, addr string) *kmsg.MetadataResponse {
	t.Helper()
	ctx := ctxT(t, 5*time.Second)
	cl, err := wire.Dial(ctx, addr, "controller-test")
	if err != nil {
		return nil
	}
	defer cl.Close()
	resp, err := cl.Request(ctx, kmsg.NewPtrMetadataRequest())
	if err != nil {
		return nil
	}
	r, ok := resp.(*kmsg.MetadataResponse)
	if !ok {
		return nil
	}
	return r
}

// TestSigtermMovesLeadershipBeforeExit sends SIGTERM to a broker process leading partitions of an
// RF-3 topic: its controlled shutdown moves every leadership and ISR membership away before its
// registration goes (no state znode changed after /brokers/ids lost it).
func TestSigtermMovesLeadershipBeforeExit(t *testing.T) {
	pc := startProcCluster(t, 3)
	pc.createTopic("term", [][]int32{{1, 2, 3}, {2, 3, 1}, {3, 1, 2}})
	controllerID, _ := pc.controller()
	victim := int32(1)
	if victim == controllerID {
		victim = 2
	}
	pc.procs[victim].Terminate()
	if exited, code := pc.procs[victim].Exited(); !exited || code != 0 {
		t.Fatalf("broker %d: exited %v with code %d", victim, exited, code)
	}
	_, idsStat, err := pc.zk.Children(zkpaths.BrokerIDs)
	if err != nil {
		t.Fatal(err)
	}
	if ok, _ := pc.registered(victim); ok {
		t.Fatalf("broker %d is still registered after it exited", victim)
	}
	for p := range int32(3) {
		s, stat, _ := pc.state("term", p)
		if s.Leader == victim || slices.Contains(s.ISR, victim) || s.Leader < 0 {
			t.Errorf("term-%d: %+v still names stopped broker %d (or has no leader)", p, s, victim)
		}
		if stat.Mzxid > idsStat.Pzxid {
			t.Errorf("term-%d changed (zxid %d) after broker %d deregistered (zxid %d)", p, stat.Mzxid, victim, idsStat.Pzxid)
		}
	}
}
