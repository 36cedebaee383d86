package broker_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/internal/testcluster"
	"github.com/zkafka/zkafka/kafka"
	"github.com/zkafka/zkafka/zkpaths"
)

// Proofs of the controller's admin work on a 3-broker in-process cluster: controlled shutdown,
// topic deletion, partition addition, preferred-leader election, reassignment. Assertions are on
// ZooKeeper (znodes, their versions and zxids) and on what brokers answer.

// ctlAdmin is a kadm client on the cluster.
func ctlAdmin(c *testcluster.Cluster) *kadm.Client { return kadm.NewClient(c.Client()) }

// ctlCreateTopic creates a topic with an explicit assignment (partition p gets assignment[p])
// and waits for every partition's leader.
func ctlCreateTopic(t *testing.T, c *testcluster.Cluster, topic string, assignment [][]int32, configs map[string]*string) {
	t.Helper()
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, -1, -1
	for p, replicas := range assignment {
		a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
		a.Partition, a.Replicas = int32(p), replicas
		rt.ReplicaAssignment = append(rt.ReplicaAssignment, a)
	}
	for k, v := range configs {
		rt.Configs = append(rt.Configs, kmsg.CreateTopicsRequestTopicConfig{Name: k, Value: v})
	}
	req.Topics = append(req.Topics, rt)
	req.TimeoutMillis = 30000
	resp := raw(t, c.Addr(c.WaitForController()), req, 5).(*kmsg.CreateTopicsResponse)
	if err := kerr.ErrorForCode(resp.Topics[0].ErrorCode); err != nil {
		t.Fatalf("create %s: %v", topic, err)
	}
	for p := range assignment {
		c.WaitForLeader(topic, int32(p))
	}
}

// ctlState reads a partition state znode and its stat.
func ctlState(t *testing.T, c *testcluster.Cluster, topic string, p int32) (zkpaths.LeaderAndIsr, *zk.Stat) {
	t.Helper()
	data, stat, err := c.ZooKeeper().Get(zkpaths.PartitionStatePath(topic, p))
	if err != nil {
		t.Fatalf("read state of %s-%d: %v", topic, p, err)
	}
	s, err := zkpaths.DecodeLeaderAndIsr(data)
	if err != nil {
		t.Fatal(err)
	}
	return s, stat
}

// ctlAssignment reads /brokers/topics/<t>.
func ctlAssignment(t *testing.T, c *testcluster.Cluster, topic string) (zkpaths.TopicAssignment, bool) {
	t.Helper()
	data, _, err := c.ZooKeeper().Get(zkpaths.TopicPath(topic))
	if errors.Is(err, zk.ErrNoNode) {
		return zkpaths.TopicAssignment{}, false
	}
	if err != nil {
		t.Fatal(err)
	}
	a, err := zkpaths.DecodeTopicAssignment(data)
	if err != nil {
		t.Fatal(err)
	}
	return a, true
}

func ctlExists(t *testing.T, c *testcluster.Cluster, path string) bool {
	t.Helper()
	ok, _, err := c.ZooKeeper().Exists(path)
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

// ctlLogDir is the directory of a partition's log on a broker.
func ctlLogDir(c *testcluster.Cluster, id int32, topic string, p int32) string {
	return filepath.Join(c.Properties(id)["log.dirs"], fmt.Sprintf("%s-%d", topic, p))
}

func dirExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// TestControlledShutdownMovesLeadershipBeforeExit stops a broker that leads partitions of an RF-3
// topic. Its controlled shutdown must move every leadership off it and take it out of every ISR
// before it deregisters: after it exits, no state znode names it, and no state znode changed
// after its /brokers/ids entry went away (every state's mzxid is below /brokers/ids' pzxid).
func TestControlledShutdownMovesLeadershipBeforeExit(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 3, Properties: map[string]string{"auto.leader.rebalance.enable": "false"}})
	ctlCreateTopic(t, c, "cs", [][]int32{{1, 2, 3}, {2, 3, 1}, {3, 1, 2}, {1, 3, 2}, {2, 1, 3}, {3, 2, 1}}, nil)
	controllerID := c.WaitForController()
	// Stop a broker that is not the controller, so the controller itself does the work.
	victim := int32(1)
	if controllerID == victim {
		victim = 2
	}
	c.StopBroker(victim)

	_, idsStat, err := c.ZooKeeper().Children(zkpaths.BrokerIDs)
	if err != nil {
		t.Fatal(err)
	}
	if ctlExists(t, c, zkpaths.BrokerPath(victim)) {
		t.Fatalf("broker %d is still registered after Shutdown returned", victim)
	}
	for p := range int32(6) {
		s, stat := ctlState(t, c, "cs", p)
		if s.Leader == victim || slices.Contains(s.ISR, victim) || s.Leader < 0 {
			t.Errorf("cs-%d: %+v still names stopped broker %d (or has no leader)", p, s, victim)
		}
		if stat.Mzxid > idsStat.Pzxid {
			t.Errorf("cs-%d changed (zxid %d) after broker %d deregistered (zxid %d): its shutdown was not controlled",
				p, stat.Mzxid, victim, idsStat.Pzxid)
		}
		if s.ControllerEpoch != 1 {
			t.Errorf("cs-%d written by controller epoch %d, want 1", p, s.ControllerEpoch)
		}
	}
}

// TestControlledShutdownAPI checks ControlledShutdown's errors: a stale broker epoch, and a
// broker that is not the controller.
func TestControlledShutdownAPI(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 2})
	controllerID := c.WaitForController()
	other := 3 - controllerID
	req := kmsg.NewPtrControlledShutdownRequest()
	req.BrokerID, req.BrokerEpoch = other, c.Broker(other).BrokerEpoch()-1
	if got := raw(t, c.Addr(controllerID), req, 3).(*kmsg.ControlledShutdownResponse); got.ErrorCode != kerr.StaleBrokerEpoch.Code {
		t.Errorf("stale broker epoch: error %d, want STALE_BROKER_EPOCH", got.ErrorCode)
	}
	req.BrokerEpoch = c.Broker(other).BrokerEpoch()
	if got := raw(t, c.Addr(other), req, 3).(*kmsg.ControlledShutdownResponse); got.ErrorCode != kerr.NotController.Code {
		t.Errorf("request to a non-controller: error %d, want NOT_CONTROLLER", got.ErrorCode)
	}
	if got := raw(t, c.Addr(controllerID), req, 1).(*kmsg.ControlledShutdownResponse); got.ErrorCode != 0 || len(got.PartitionsRemaining) != 0 {
		t.Errorf("v1 request: error %d, remaining %v", got.ErrorCode, got.PartitionsRemaining)
	}
}

// TestDeleteTopic deletes a topic through the API: its logs go from every broker, its znodes
// go, and Metadata answers UNKNOWN_TOPIC_OR_PARTITION.
func TestDeleteTopic(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 3})
	ctlCreateTopic(t, c, "doomed", [][]int32{{1, 2}, {2, 3}, {3, 1}}, map[string]*string{"retention.ms": kmsgStr("100000")})
	produceAll(t, c.Client(kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite()), "doomed", 30)
	for p, replicas := range [][]int32{{1, 2}, {2, 3}, {3, 1}} {
		for _, id := range replicas {
			if !dirExists(ctlLogDir(c, id, "doomed", int32(p))) {
				t.Fatalf("broker %d has no log for doomed-%d", id, p)
			}
		}
	}
	resps, err := ctlAdmin(c).DeleteTopics(ctxT(t, 30*time.Second), "doomed")
	if err != nil {
		t.Fatal(err)
	}
	if r := resps["doomed"]; r.Err != nil {
		t.Fatalf("delete: %v", r.Err)
	}
	c.WaitFor("the topic's znodes to go", func() bool {
		return !ctlExists(t, c, zkpaths.TopicPath("doomed")) && !ctlExists(t, c, zkpaths.TopicConfigPath("doomed")) &&
			!ctlExists(t, c, zkpaths.DeleteTopicPath("doomed"))
	})
	for id := int32(1); id <= 3; id++ {
		for p := range int32(3) {
			if dir := ctlLogDir(c, id, "doomed", p); dirExists(dir) {
				t.Errorf("broker %d still has %s", id, dir)
			}
		}
		req := kmsg.NewPtrMetadataRequest()
		mt := kmsg.NewMetadataRequestTopic()
		mt.Topic = kmsgStr("doomed")
		req.Topics = append(req.Topics, mt)
		req.AllowAutoTopicCreation = false
		resp := raw(t, c.Addr(id), req, 9).(*kmsg.MetadataResponse)
		if len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != kerr.UnknownTopicOrPartition.Code {
			t.Errorf("broker %d Metadata for the deleted topic: %+v", id, resp.Topics)
		}
	}
	// An invalid name, and deleting it again: neither exists.
	if resps, err := ctlAdmin(c).DeleteTopics(ctxT(t, 10*time.Second), "bad/name"); err != nil || !errors.Is(resps["bad/name"].Err, kerr.UnknownTopicOrPartition) {
		t.Errorf("delete an invalid name: %v %v, want UNKNOWN_TOPIC_OR_PARTITION", err, resps["bad/name"].Err)
	}
	resps, err = ctlAdmin(c).DeleteTopics(ctxT(t, 10*time.Second), "doomed")
	if err != nil || !errors.Is(resps["doomed"].Err, kerr.UnknownTopicOrPartition) {
		t.Errorf("second delete: %v %v, want UNKNOWN_TOPIC_OR_PARTITION", err, resps["doomed"].Err)
	}
}

// TestDeleteTopicWaitsForStoppedReplica deletes a topic while one of its replicas' brokers is
// down: the live replicas are deleted, the znodes stay; when the broker returns its replica is
// deleted too and the znodes go.
func TestDeleteTopicWaitsForStoppedReplica(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 3})
	controllerID := c.WaitForController()
	down := int32(1)
	if down == controllerID {
		down = 2
	}
	up := 6 - controllerID - down // the third broker
	ctlCreateTopic(t, c, "waits", [][]int32{{down, up}}, nil)
	produceAll(t, c.Client(kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite()), "waits", 5)
	c.StopBroker(down)
	if _, err := c.ZooKeeper().Create(zkpaths.DeleteTopicPath("waits"), nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	c.WaitFor("the live replica's log to go", func() bool { return !dirExists(ctlLogDir(c, up, "waits", 0)) })
	if !ctlExists(t, c, zkpaths.TopicPath("waits")) || !ctlExists(t, c, zkpaths.DeleteTopicPath("waits")) {
		t.Fatal("the deletion completed while a replica's broker was down")
	}
	if !dirExists(ctlLogDir(c, down, "waits", 0)) {
		t.Fatal("the stopped broker's log is gone")
	}
	c.StartBroker(down)
	c.WaitFor("the deletion to complete", func() bool {
		return !ctlExists(t, c, zkpaths.TopicPath("waits")) && !ctlExists(t, c, zkpaths.DeleteTopicPath("waits"))
	})
	c.WaitFor("the returned broker's log to go", func() bool { return !dirExists(ctlLogDir(c, down, "waits", 0)) })
}

// TestCreatePartitions adds partitions: Kafka's placement continues the topic's round-robin, the
// new partitions come online, and a count that does not grow is INVALID_PARTITIONS.
func TestCreatePartitions(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 3})
	ctlCreateTopic(t, c, "grow", [][]int32{{1, 2}, {2, 3}}, nil)
	adm := ctlAdmin(c)
	resps, err := adm.CreatePartitions(ctxT(t, 30*time.Second), 3, "grow")
	if err != nil || resps["grow"].Err != nil {
		t.Fatalf("add 3 partitions: %v %v", err, resps["grow"].Err)
	}
	a, _ := ctlAssignment(t, c, "grow")
	if len(a.Partitions) != 5 {
		t.Fatalf("assignment %v, want 5 partitions", a.Partitions)
	}
	// Partition 0's preferred replica is broker 1 (index 0), so start index and shift are 0:
	// partitions 2, 3, 4 get [3,1], [1,3], [2,1] (the shift grows at partition 3).
	want := map[int32][]int32{0: {1, 2}, 1: {2, 3}, 2: {3, 1}, 3: {1, 3}, 4: {2, 1}}
	for p, r := range want {
		if !slices.Equal(a.Partitions[p], r) {
			t.Errorf("partition %d: replicas %v, want %v", p, a.Partitions[p], r)
		}
	}
	for p := range int32(5) {
		if leader := c.WaitForLeader("grow", p); leader != want[p][0] {
			t.Errorf("partition %d led by %d, want %d", p, leader, want[p][0])
		}
	}
	resps, err = adm.CreatePartitions(ctxT(t, 10*time.Second), 0, "grow")
	if err != nil || !errors.Is(resps["grow"].Err, kerr.InvalidPartitions) {
		t.Errorf("no growth: %v %v, want INVALID_PARTITIONS", err, resps["grow"].Err)
	}
	resps, err = adm.CreatePartitions(ctxT(t, 10*time.Second), 1, "bad/name")
	if err != nil || !errors.Is(resps["bad/name"].Err, kerr.UnknownTopicOrPartition) {
		t.Errorf("invalid topic name: %v %v, want UNKNOWN_TOPIC_OR_PARTITION", err, resps["bad/name"].Err)
	}
	resps, err = adm.CreatePartitions(ctxT(t, 10*time.Second), 1, "missing")
	if err != nil || !errors.Is(resps["missing"].Err, kerr.UnknownTopicOrPartition) {
		t.Errorf("unknown topic: %v %v, want UNKNOWN_TOPIC_OR_PARTITION", err, resps["missing"].Err)
	}
}

// TestPreferredLeaderElection moves leaders off their preferred replica (a broker restart) and
// back: through ElectLeaders, then through /admin/preferred_replica_election.
func TestPreferredLeaderElection(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 3, Properties: map[string]string{"auto.leader.rebalance.enable": "false"}})
	controllerID := c.WaitForController()
	preferred := int32(1)
	if preferred == controllerID {
		preferred = 2
	}
	other := 6 - controllerID - preferred
	ctlCreateTopic(t, c, "pref", [][]int32{{preferred, other}, {preferred, controllerID}}, nil)
	c.StopBroker(preferred)
	c.StartBroker(preferred)
	for p := range int32(2) {
		if leader := c.WaitForLeader("pref", p); leader == preferred {
			t.Fatalf("pref-%d still led by its preferred replica after a restart", p)
		}
	}
	// The restarted replica rejoins the ISR once its fetcher catches up.
	c.WaitFor("the preferred replica back in the ISRs", func() bool {
		s0, _ := c.PartitionState("pref", 0)
		s1, _ := c.PartitionState("pref", 1)
		return slices.Contains(s0.ISR, preferred) && slices.Contains(s1.ISR, preferred)
	})

	adm := ctlAdmin(c)
	set := kadm.TopicsSet{"pref": {0: {}}}
	results, err := adm.ElectLeaders(ctxT(t, 30*time.Second), kadm.ElectPreferredReplica, set)
	if err != nil {
		t.Fatal(err)
	}
	if r := results["pref"][0]; r.Err != nil {
		t.Fatalf("elect pref-0: %v", r.Err)
	}
	if leader := c.WaitForLeader("pref", 0); leader != preferred {
		t.Errorf("pref-0 led by %d after ElectLeaders, want %d", leader, preferred)
	}
	results, err = adm.ElectLeaders(ctxT(t, 30*time.Second), kadm.ElectPreferredReplica, set)
	if err != nil || !errors.Is(results["pref"][0].Err, kerr.ElectionNotNeeded) {
		t.Errorf("second election: %v %v, want ELECTION_NOT_NEEDED", err, results["pref"][0].Err)
	}

	req := zkpaths.PreferredReplicaElectionData{Partitions: []kafka.TopicPartition{{Topic: "pref", Partition: 1}}}
	if _, err := c.ZooKeeper().Create(zkpaths.PreferredReplicaElection, req.Encode(), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	c.WaitFor("pref-1 back on its preferred replica and the request removed", func() bool {
		s, ok := c.PartitionState("pref", 1)
		return ok && s.Leader == preferred && !ctlExists(t, c, zkpaths.PreferredReplicaElection)
	})
}

// TestReassignPartition moves a single-replica partition from one broker to another through
// AlterPartitionReassignments: the new replica catches up and joins the ISR, leadership moves,
// the old replica's log is deleted, and the topic znode ends with the target alone. The records
// are then consumed from the new replica only.
func TestReassignPartition(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 3})
	controllerID := c.WaitForController()
	from := int32(1)
	if from == controllerID {
		from = 2
	}
	to := 6 - controllerID - from
	ctlCreateTopic(t, c, "moving", [][]int32{{from}}, nil)
	produced := produceAll(t, c.Client(kgo.RequiredAcks(kgo.AllISRAcks()), kgo.DisableIdempotentWrite()), "moving", 50)

	adm := ctlAdmin(c)
	req := kadm.AlterPartitionAssignmentsReq{}
	req.Assign("moving", 0, []int32{to})
	resps, err := adm.AlterPartitionAssignments(ctxT(t, 30*time.Second), req)
	if err != nil {
		t.Fatal(err)
	}
	if r := resps["moving"][0]; r.Err != nil {
		t.Fatalf("reassign: %v", r.Err)
	}
	c.WaitFor("the reassignment to complete", func() bool {
		a, _ := ctlAssignment(t, c, "moving")
		s, ok := c.PartitionState("moving", 0)
		return slices.Equal(a.Partitions[0], []int32{to}) && len(a.AddingReplicas) == 0 && len(a.RemovingReplicas) == 0 &&
			ok && s.Leader == to && slices.Equal(s.ISR, []int32{to})
	})
	listed, err := adm.ListPartitionReassignments(ctxT(t, 10*time.Second), nil)
	if err != nil || len(listed) != 0 {
		t.Errorf("reassignments still listed: %v %v", listed, err)
	}
	c.WaitFor("the old replica's log to go", func() bool { return !dirExists(ctlLogDir(c, from, "moving", 0)) })
	c.WaitForLeader("moving", 0)

	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Addr(to)), kgo.ConsumeTopics("moving"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx := ctxT(t, 30*time.Second)
	var got []string
	for len(got) < len(produced[0]) && ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	for i, r := range produced[0] {
		if i >= len(got) || got[i] != string(r.Value) {
			t.Fatalf("record %d on the new replica: got %d records %v", i, len(got), got)
		}
	}

	// A reassignment to a broker that does not exist is refused.
	bad := kadm.AlterPartitionAssignmentsReq{}
	bad.Assign("moving", 0, []int32{42})
	resps, err = adm.AlterPartitionAssignments(ctxT(t, 10*time.Second), bad)
	if err != nil || !errors.Is(resps["moving"][0].Err, kerr.InvalidReplicaAssignment) {
		t.Errorf("reassignment to broker 42: %v %v, want INVALID_REPLICA_ASSIGNMENT", err, resps["moving"][0].Err)
	}
}

// TestControlledShutdownUnderProducer stops a leader broker while a kgo producer (acks=all)
// writes to an RF-3 topic: the producer carries on, every acknowledged record is then read back
// at its offset from the remaining brokers, and any error the client reported is retriable.
func TestControlledShutdownUnderProducer(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 3, Properties: map[string]string{"auto.leader.rebalance.enable": "false"}})
	ctlCreateTopic(t, c, "busy", [][]int32{{1, 2, 3}, {2, 3, 1}, {3, 1, 2}}, nil)
	c.WaitFor("full ISRs", func() bool {
		for p := range int32(3) {
			if s, ok := c.PartitionState("busy", p); !ok || len(s.ISR) != 3 {
				return false
			}
		}
		return true
	})
	controllerID := c.WaitForController()
	victim := int32(1)
	if victim == controllerID {
		victim = 2
	}

	type position struct {
		partition int32
		offset    int64
	}
	var (
		mu    sync.Mutex
		acked = map[string]position{}
		errs  []error
	)
	cl := c.Client(kgo.DefaultProduceTopic("busy"), kgo.RequiredAcks(kgo.AllISRAcks()), kgo.DisableIdempotentWrite())
	ctx := ctxT(t, 60*time.Second)
	produceCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; produceCtx.Err() == nil; i++ {
			r := &kgo.Record{Value: fmt.Appendf(nil, "record-%d", i)}
			cl.Produce(produceCtx, r, func(r *kgo.Record, err error) {
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					if !errors.Is(err, context.Canceled) {
						errs = append(errs, err)
					}
					return
				}
				acked[string(r.Value)] = position{r.Partition, r.Offset}
			})
		}
	}()
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(acked)
	}
	c.WaitFor("records acknowledged before the shutdown", func() bool { return count() >= 300 })
	c.StopBroker(victim)
	before := count()
	c.WaitFor("records acknowledged after the shutdown", func() bool { return count() >= before+300 })
	stop()
	wg.Wait()
	cl.Flush(ctx)

	mu.Lock()
	defer mu.Unlock()
	for _, err := range errs {
		if !kerr.IsRetriable(err) {
			t.Errorf("the producer saw a non-retriable error: %v", err)
		}
	}
	// Retries without idempotence may write a record twice; the acknowledged copy must be where
	// the acknowledgement said.
	consumer := c.Client(kgo.ConsumeTopics("busy"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	found := map[string]position{}
	for len(found) < len(acked) && ctx.Err() == nil {
		consumer.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
			if want, ok := acked[string(r.Value)]; ok && want == (position{r.Partition, r.Offset}) {
				found[string(r.Value)] = want
			}
		})
	}
	if len(found) != len(acked) {
		t.Errorf("%d of %d acknowledged records were read back at their offsets", len(found), len(acked))
	}
}

// TestAdminAPIsAnswerNotControllerElsewhere sends the controller's admin APIs to a broker that is
// not the controller: each answers NOT_CONTROLLER, as Kafka's ZooKeeper-mode brokers do.
func TestAdminAPIsAnswerNotControllerElsewhere(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 2})
	other := 3 - c.WaitForController()
	addr := c.Addr(other)

	dt := kmsg.NewPtrDeleteTopicsRequest()
	dt.TopicNames, dt.TimeoutMillis = []string{"t"}, 1000
	if got := raw(t, addr, dt, 5).(*kmsg.DeleteTopicsResponse); got.Topics[0].ErrorCode != kerr.NotController.Code {
		t.Errorf("DeleteTopics: error %d", got.Topics[0].ErrorCode)
	}
	// NOT_CONTROLLER comes before the duplicate check, without a message,
	// as Kafka 2.8 answers it.
	cp := kmsg.NewPtrCreatePartitionsRequest()
	cp.Topics, cp.TimeoutMillis = []kmsg.CreatePartitionsRequestTopic{{Topic: "t", Count: 2}, {Topic: "t", Count: 3}}, 1000
	for _, rt := range raw(t, addr, cp, 3).(*kmsg.CreatePartitionsResponse).Topics {
		if rt.ErrorCode != kerr.NotController.Code || rt.ErrorMessage != nil {
			t.Errorf("CreatePartitions: error %d, message %v", rt.ErrorCode, rt.ErrorMessage)
		}
	}
	ct := kmsg.NewPtrCreateTopicsRequest()
	ct.TimeoutMillis = 1000
	ct.Topics = []kmsg.CreateTopicsRequestTopic{{Topic: "t", NumPartitions: 1, ReplicationFactor: 1}, {Topic: "t", NumPartitions: 1, ReplicationFactor: 1}}
	for _, rt := range raw(t, addr, ct, 6).(*kmsg.CreateTopicsResponse).Topics {
		if rt.ErrorCode != kerr.NotController.Code || rt.ErrorMessage != nil {
			t.Errorf("CreateTopics: error %d, message %v", rt.ErrorCode, rt.ErrorMessage)
		}
	}
	// On the controller the duplicates get 2.8's INVALID_REQUEST.
	for _, rt := range raw(t, c.Addr(3-other), ct, 6).(*kmsg.CreateTopicsResponse).Topics {
		if rt.ErrorCode != kerr.InvalidRequest.Code || rt.ErrorMessage == nil || *rt.ErrorMessage != "Found multiple entries for this topic." {
			t.Errorf("CreateTopics with a topic twice: error %d, message %v", rt.ErrorCode, rt.ErrorMessage)
		}
	}
	el := kmsg.NewPtrElectLeadersRequest()
	el.Topics, el.TimeoutMillis = []kmsg.ElectLeadersRequestTopic{{Topic: "t", Partitions: []int32{0}}}, 1000
	if got := raw(t, addr, el, 2).(*kmsg.ElectLeadersResponse); got.ErrorCode != kerr.NotController.Code {
		t.Errorf("ElectLeaders: error %d", got.ErrorCode)
	}
	ap := kmsg.NewPtrAlterPartitionAssignmentsRequest()
	ap.TimeoutMillis = 1000
	ap.Topics = []kmsg.AlterPartitionAssignmentsRequestTopic{{Topic: "t", Partitions: []kmsg.AlterPartitionAssignmentsRequestTopicPartition{{Partition: 0, Replicas: []int32{1}}}}}
	if got := raw(t, addr, ap, 0).(*kmsg.AlterPartitionAssignmentsResponse); got.ErrorCode != kerr.NotController.Code {
		t.Errorf("AlterPartitionReassignments: error %d", got.ErrorCode)
	}
	lp := kmsg.NewPtrListPartitionReassignmentsRequest()
	lp.TimeoutMillis = 1000
	if got := raw(t, addr, lp, 0).(*kmsg.ListPartitionReassignmentsResponse); got.ErrorCode != kerr.NotController.Code {
		t.Errorf("ListPartitionReassignments: error %d", got.ErrorCode)
	}
}

// TestDeleteTopicsByID deletes a topic by its id with DeleteTopics v6
// (KIP-516): an unknown id gets UNKNOWN_TOPIC_ID, and a topic named by both
// name and id makes the whole request INVALID_REQUEST, as in 2.8.
func TestDeleteTopicsByID(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{})
	ctlCreateTopic(t, c, "by-id", [][]int32{{1}}, nil)
	topicID := func() (id [16]byte, ok bool) {
		for _, mt := range raw(t, c.Addr(1), kmsg.NewPtrMetadataRequest(), 10).(*kmsg.MetadataResponse).Topics {
			if mt.Topic != nil && *mt.Topic == "by-id" {
				return mt.TopicID, true
			}
		}
		return id, false
	}
	id, _ := topicID()
	if id == ([16]byte{}) {
		t.Fatal("no topic id in Metadata")
	}
	unknown := [16]byte{1}

	both := kmsg.NewPtrDeleteTopicsRequest()
	both.TimeoutMillis = 10000
	both.Topics = []kmsg.DeleteTopicsRequestTopic{{TopicID: unknown}, {Topic: kmsgStr("by-id"), TopicID: id}}
	for _, rt := range raw(t, c.Addr(1), both, 6).(*kmsg.DeleteTopicsResponse).Topics {
		wantErr(t, "name and id", rt.ErrorCode, kerr.InvalidRequest)
	}

	req := kmsg.NewPtrDeleteTopicsRequest()
	req.TimeoutMillis = 10000
	req.Topics = []kmsg.DeleteTopicsRequestTopic{{TopicID: unknown}, {TopicID: id}}
	resp := raw(t, c.Addr(1), req, 6).(*kmsg.DeleteTopicsResponse)
	if len(resp.Topics) != 2 {
		t.Fatalf("%d answers for 2 topics", len(resp.Topics))
	}
	if u := resp.Topics[0]; u.ErrorCode != kerr.UnknownTopicID.Code || u.Topic != nil || u.TopicID != unknown {
		t.Errorf("unknown id: %+v, want UNKNOWN_TOPIC_ID, no name", u)
	}
	if d := resp.Topics[1]; d.ErrorCode != 0 || d.Topic == nil || *d.Topic != "by-id" || d.TopicID != id {
		t.Errorf("known id: %+v, want by-id deleted", d)
	}
	if _, ok := topicID(); ok {
		t.Error("Metadata still lists the topic")
	}
}
