package broker_test

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/internal/testcluster"
	"github.com/zkafka/zkafka/zkpaths"
)

// replicationProps are settings that make replication react quickly in tests.
func replicationProps() map[string]string {
	return map[string]string{
		"replica.lag.time.max.ms":   "600",
		"replica.fetch.wait.max.ms": "100",
		"replica.fetch.backoff.ms":  "100",
	}
}

// joinProcess starts broker id as a zkafka process in c's ZooKeeper chroot and
// waits until the cluster's brokers know it. It returns the process and its
// address.
func joinProcess(t *testing.T, c *testcluster.Cluster, id int32, extra map[string]string) (*testcluster.Process, string) {
	t.Helper()
	port := testcluster.FreePort(t)
	props := map[string]string{
		"broker.id":                        strconv.Itoa(int(id)),
		"listeners":                        fmt.Sprintf("PLAINTEXT://127.0.0.1:%d", port),
		"log.dirs":                         t.TempDir(),
		"zookeeper.connect":                c.ZK,
		"zookeeper.session.timeout.ms":     "4000",
		"offsets.topic.replication.factor": "1",
	}
	maps.Copy(props, extra)
	p := testcluster.StartProcess(t, props)
	c.WaitFor(fmt.Sprintf("broker %d to join", id), func() bool {
		m := raw(t, c.BootstrapAddrs()[0], kmsg.NewPtrMetadataRequest(), 9).(*kmsg.MetadataResponse)
		return slices.ContainsFunc(m.Brokers, func(b kmsg.MetadataResponseBroker) bool { return b.NodeID == id })
	})
	return p, "127.0.0.1:" + strconv.Itoa(port)
}

// createAssigned creates a topic with an explicit assignment and configs
// through addr (the controller).
func createAssigned(t *testing.T, addr, name string, assignment [][]int32, configs map[string]string) {
	t.Helper()
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = 15000
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, -1, -1
	for p, replicas := range assignment {
		a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
		a.Partition, a.Replicas = int32(p), replicas
		rt.ReplicaAssignment = append(rt.ReplicaAssignment, a)
	}
	for k, v := range configs {
		cfg := kmsg.NewCreateTopicsRequestTopicConfig()
		cfg.Name, cfg.Value = k, kmsgStr(v)
		rt.Configs = append(rt.Configs, cfg)
	}
	req.Topics = append(req.Topics, rt)
	resp := raw(t, addr, req, 5).(*kmsg.CreateTopicsResponse)
	if code := resp.Topics[0].ErrorCode; code != 0 {
		t.Fatalf("create topic %s: %v", name, kerr.ErrorForCode(code))
	}
}

func produceAcks(t *testing.T, addr, topic string, acks int16, values ...string) (*kerr.Error, int64) {
	t.Helper()
	return produceTimeout(t, addr, topic, acks, 5000, values...)
}

func produceTimeout(t *testing.T, addr, topic string, acks int16, timeoutMillis int32, values ...string) (*kerr.Error, int64) {
	t.Helper()
	var vs [][]byte
	for _, v := range values {
		vs = append(vs, []byte(v))
	}
	req := produceReq(topic, 0, recordBatch(vs...))
	req.Acks, req.TimeoutMillis = acks, timeoutMillis
	p := raw(t, addr, req, 7).(*kmsg.ProduceResponse).Topics[0].Partitions[0]
	var ke *kerr.Error
	errors.As(kerr.ErrorForCode(p.ErrorCode), &ke)
	return ke, p.BaseOffset
}

// legacyIsrProps are replicationProps with inter.broker.protocol.version 2.6:
// leaders write their ISR changes to ZooKeeper themselves, as before AlterIsr.
func legacyIsrProps() map[string]string {
	props := replicationProps()
	props["inter.broker.protocol.version"] = "2.6"
	return props
}

// TestIsrShrinkAndExpandInZooKeeper, with inter.broker.protocol.version 2.6,
// pauses a follower (SIGSTOP: alive for ZooKeeper, silent for the leader). An acks=all produce with a short timeout
// gets REQUEST_TIMED_OUT; one with a long timeout waits until the leader
// removes the follower from the ISR in the partition-state znode (keeping the
// leader epoch: the leader wrote it, not the controller) and then gets
// NOT_ENOUGH_REPLICAS_AFTER_APPEND under min.insync.replicas=2; later acks=all
// produces fail at once with NOT_ENOUGH_REPLICAS while acks=1 works. Resumed,
// the follower catches up and the leader adds it back; an
// /isr_change_notification znode announces the changes.
func TestIsrShrinkAndExpandInZooKeeper(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 1, Properties: legacyIsrProps()})
	follower, _ := joinProcess(t, c, 2, legacyIsrProps())
	addr := c.Addr(1)
	createAssigned(t, addr, "isr", [][]int32{{1, 2}}, map[string]string{"min.insync.replicas": "2"})
	c.WaitForLeader("isr", 0)
	isr := func() (zkpaths.LeaderAndIsr, []int32) {
		s, _ := c.PartitionState("isr", 0)
		return s, slices.Sorted(slices.Values(s.ISR))
	}
	c.WaitFor("ISR [1 2]", func() bool { _, got := isr(); return slices.Equal(got, []int32{1, 2}) })
	start, _ := isr()
	if err, _ := produceAcks(t, addr, "isr", -1, "committed"); err != nil {
		t.Fatalf("acks=all with the full ISR: %v", err)
	}
	_, _, notified, err := c.ZooKeeper().ChildrenW(zkpaths.IsrChangeNotification)
	if err != nil {
		t.Fatal(err)
	}

	follower.Pause()
	if err, _ := produceTimeout(t, addr, "isr", -1, 300, "timed-out"); !errors.Is(err, kerr.RequestTimedOut) {
		t.Errorf("acks=all while the follower is stuck in the ISR: %v, want REQUEST_TIMED_OUT", err)
	}
	if err, _ := produceTimeout(t, addr, "isr", -1, 10000, "after-append"); !errors.Is(err, kerr.NotEnoughReplicasAfterAppend) {
		t.Errorf("acks=all across the ISR shrink: %v, want NOT_ENOUGH_REPLICAS_AFTER_APPEND", err)
	}
	c.WaitFor("the leader to shrink the ISR to [1]", func() bool { _, got := isr(); return slices.Equal(got, []int32{1}) })
	shrunk, _ := isr()
	if shrunk.LeaderEpoch != start.LeaderEpoch || shrunk.Leader != 1 {
		t.Errorf("shrunk state %+v: want leader 1 and the unchanged leader epoch %d", shrunk, start.LeaderEpoch)
	}
	if err, _ := produceAcks(t, addr, "isr", -1, "refused"); !errors.Is(err, kerr.NotEnoughReplicas) {
		t.Errorf("acks=all with ISR [1] and min.insync.replicas=2: %v, want NOT_ENOUGH_REPLICAS", err)
	}
	if err, off := produceAcks(t, addr, "isr", 1, "leader-only"); err != nil || off != 3 {
		t.Errorf("acks=1 with ISR [1]: %v at %d, want offset 3", err, off)
	}
	follower.Resume()

	c.WaitFor("the leader to expand the ISR to [1 2]", func() bool { _, got := isr(); return slices.Equal(got, []int32{1, 2}) })
	expanded, _ := isr()
	if expanded.LeaderEpoch != start.LeaderEpoch {
		t.Errorf("expanded state %+v: leader epoch changed from %d", expanded, start.LeaderEpoch)
	}
	if err, off := produceAcks(t, addr, "isr", -1, "committed-again"); err != nil || off != 4 {
		t.Errorf("acks=all after the expansion: %v at offset %d, want offset 4", err, off)
	}
	select {
	case <-notified:
	case <-time.After(15 * time.Second):
		t.Error("no /isr_change_notification child was created")
	}
}

// TestIsrShrinkAndExpandThroughAlterIsr: with Kafka 2.8's default
// inter.broker.protocol.version (2.8-IV1) the leader sends its ISR changes to
// the controller (AlterIsr), which writes the state znode and tells the
// brokers at once. A paused follower leaves the ISR and rejoins it after
// SIGCONT; the brokers' metadata shows each change while
// /isr_change_notification's child version never moves: no notification was
// ever written, so what told the metadata was the controller's own write.
func TestIsrShrinkAndExpandThroughAlterIsr(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 1, Properties: replicationProps()})
	follower, _ := joinProcess(t, c, 2, replicationProps())
	addr := c.Addr(1)
	createAssigned(t, addr, "alter-isr", [][]int32{{1, 2}}, map[string]string{"min.insync.replicas": "2"})
	c.WaitForLeader("alter-isr", 0)
	isrNow := func() (znode, metadata []int32) {
		s, _ := c.PartitionState("alter-isr", 0)
		if md := rawMetadata(t, addr); md != nil {
			for _, tm := range md.Topics {
				if tm.Topic != nil && *tm.Topic == "alter-isr" && len(tm.Partitions) == 1 {
					metadata = slices.Sorted(slices.Values(tm.Partitions[0].ISR))
				}
			}
		}
		return slices.Sorted(slices.Values(s.ISR)), metadata
	}
	both := func(want ...int32) func() bool {
		return func() bool { z, m := isrNow(); return slices.Equal(z, want) && slices.Equal(m, want) }
	}
	c.WaitFor("ISR [1 2] in the znode and the metadata", both(1, 2))
	_, before, err := c.ZooKeeper().Get(zkpaths.IsrChangeNotification)
	if err != nil {
		t.Fatal(err)
	}
	start, _ := c.PartitionState("alter-isr", 0)

	follower.Pause()
	// A follower at the leader's log end stays in sync however long it is silent (Kafka's
	// isCaughtUp): a record makes the paused one fall behind.
	if err, _ := produceAcks(t, addr, "alter-isr", 1, "leader-only"); err != nil {
		t.Fatalf("acks=1 while the follower is paused: %v", err)
	}
	c.WaitFor("ISR [1] in the znode and the metadata", both(1))
	shrunk, _ := c.PartitionState("alter-isr", 0)
	if shrunk.Leader != 1 || shrunk.LeaderEpoch != start.LeaderEpoch {
		t.Errorf("shrunk state %+v: want leader 1 and the unchanged leader epoch %d", shrunk, start.LeaderEpoch)
	}
	if err, _ := produceAcks(t, addr, "alter-isr", -1, "refused"); !errors.Is(err, kerr.NotEnoughReplicas) {
		t.Errorf("acks=all with ISR [1] and min.insync.replicas=2: %v, want NOT_ENOUGH_REPLICAS", err)
	}
	follower.Resume()
	c.WaitFor("ISR [1 2] again in the znode and the metadata", both(1, 2))
	if err, _ := produceAcks(t, addr, "alter-isr", -1, "committed"); err != nil {
		t.Errorf("acks=all after the expansion: %v", err)
	}
	_, after, err := c.ZooKeeper().Get(zkpaths.IsrChangeNotification)
	if err != nil {
		t.Fatal(err)
	}
	if after.Cversion != before.Cversion {
		t.Errorf("/isr_change_notification's children changed (cversion %d to %d): a leader wrote a notification", before.Cversion, after.Cversion)
	}
}

// TestAcksAllSurvivesTheControllerShrinkingTheIsr pauses a follower past its
// ZooKeeper session timeout while an acks=all produce waits for it. The
// controller drops it from the ISR with a new leader epoch (as Kafka 2.8
// does); the leader keeps leading, its remaining ISR has the record, so the
// produce succeeds, and a client that retries on errors (no idempotence)
// leaves the record in the log once.
func TestAcksAllSurvivesTheControllerShrinkingTheIsr(t *testing.T) {
	// replica.lag.time.max.ms stays at 30 s: the controller, not the leader,
	// removes the paused follower.
	props := map[string]string{"replica.fetch.wait.max.ms": "100", "replica.fetch.backoff.ms": "100"}
	c := testcluster.Start(t, testcluster.Options{Brokers: 2, Properties: props})
	follower, _ := joinProcess(t, c, 3, props)
	createAssigned(t, c.Addr(1), "acks-all", [][]int32{{1, 2, 3}}, map[string]string{"min.insync.replicas": "2"})
	c.WaitFor("ISR [1 2 3] under leader 1", func() bool {
		s, ok := c.PartitionState("acks-all", 0)
		return ok && s.Leader == 1 && slices.Equal(slices.Sorted(slices.Values(s.ISR)), []int32{1, 2, 3})
	})
	if err, _ := produceAcks(t, c.Addr(1), "acks-all", -1, "before"); err != nil {
		t.Fatalf("acks=all with the full ISR: %v", err)
	}
	start, _ := c.PartitionState("acks-all", 0)

	follower.Pause()
	t.Cleanup(follower.Resume)
	producer := c.Client(kgo.DisableIdempotentWrite(), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.ProduceRequestTimeout(60*time.Second), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err := producer.ProduceSync(ctxT(t, 90*time.Second), &kgo.Record{Topic: "acks-all", Partition: 0, Value: []byte("once")}).FirstErr(); err != nil {
		t.Fatalf("acks=all across the controller's ISR shrink: %v", err)
	}
	shrunk, _ := c.PartitionState("acks-all", 0)
	if shrunk.Leader != 1 || shrunk.LeaderEpoch <= start.LeaderEpoch || slices.Contains(shrunk.ISR, 3) {
		t.Fatalf("state %+v: want leader 1, the paused follower out of the ISR and a leader epoch above %d (the controller's shrink)",
			shrunk, start.LeaderEpoch)
	}
	p, ok := c.Broker(1).ReplicaManager().Partition("acks-all", 0)
	if !ok {
		t.Fatal("broker 1 has no acks-all-0")
	}
	if got := recordValues(t, p.Log()); !slices.Equal(got, []string{"before", "once"}) {
		t.Errorf("leader's log holds %v, want [before once]", got)
	}
}

// TestAlterIsrErrors sends AlterIsr requests of every kind a controller must
// refuse, as Kafka 2.8's KafkaController.processAlterIsr does: to a broker that
// is not the controller (NOT_CONTROLLER), from an unknown broker or with
// another broker epoch (STALE_BROKER_EPOCH), and per partition an unknown one
// (UNKNOWN_TOPIC_OR_PARTITION), an older leader epoch (FENCED_LEADER_EPOCH) and
// a zkVersion that is not the state's (INVALID_UPDATE_VERSION); the state
// already stored is answered as it is, and a valid change is written.
func TestAlterIsrErrors(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 2})
	ctrl := c.WaitForController()
	other := int32(3) - ctrl
	createAssigned(t, c.Addr(1), "alter-isr-errors", [][]int32{{1, 2}}, nil)
	c.WaitFor("ISR [1 2]", func() bool {
		s, ok := c.PartitionState("alter-isr-errors", 0)
		return ok && len(s.ISR) == 2
	})
	state, _ := c.PartitionState("alter-isr-errors", 0)
	_, stat, err := c.ZooKeeper().Get(zkpaths.PartitionStatePath("alter-isr-errors", 0))
	if err != nil {
		t.Fatal(err)
	}
	_, reg, err := c.ZooKeeper().Get(zkpaths.BrokerPath(state.Leader))
	if err != nil {
		t.Fatal(err)
	}
	send := func(to, broker int32, epoch int64, topic string, leaderEpoch int32, isr []int32, version int32) *kmsg.AlterPartitionResponse {
		req := kmsg.NewPtrAlterPartitionRequest()
		req.BrokerID, req.BrokerEpoch = broker, epoch
		req.Topics = []kmsg.AlterPartitionRequestTopic{{Topic: topic, Partitions: []kmsg.AlterPartitionRequestTopicPartition{{
			Partition: 0, LeaderEpoch: leaderEpoch, NewISR: isr, PartitionEpoch: version,
		}}}}
		return raw(t, c.Addr(to), req, 0).(*kmsg.AlterPartitionResponse)
	}
	codeOf := func(e *kerr.Error) int16 {
		if e == nil {
			return 0
		}
		return e.Code
	}
	top := func(what string, resp *kmsg.AlterPartitionResponse, want *kerr.Error) {
		if resp.ErrorCode != codeOf(want) {
			t.Errorf("%s: %v, want %v", what, kerr.ErrorForCode(resp.ErrorCode), want)
		}
	}
	partition := func(what string, resp *kmsg.AlterPartitionResponse, want *kerr.Error) kmsg.AlterPartitionResponseTopicPartition {
		if resp.ErrorCode != 0 || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
			t.Fatalf("%s: %+v, want one partition's answer", what, resp)
		}
		p := resp.Topics[0].Partitions[0]
		if p.ErrorCode != codeOf(want) {
			t.Errorf("%s: %v, want %v", what, kerr.ErrorForCode(p.ErrorCode), want)
		}
		return p
	}
	leader, epoch, isr := state.Leader, reg.Czxid, state.ISR
	top("to a broker that is not the controller", send(other, leader, epoch, "alter-isr-errors", state.LeaderEpoch, []int32{leader}, stat.Version), kerr.NotController)
	top("from an unknown broker", send(ctrl, 9, epoch, "alter-isr-errors", state.LeaderEpoch, []int32{leader}, stat.Version), kerr.StaleBrokerEpoch)
	top("with another broker epoch", send(ctrl, leader, epoch-1, "alter-isr-errors", state.LeaderEpoch, []int32{leader}, stat.Version), kerr.StaleBrokerEpoch)
	partition("an unknown topic", send(ctrl, leader, epoch, "no-such-topic", 0, []int32{leader}, 0), kerr.UnknownTopicOrPartition)
	partition("an older leader epoch", send(ctrl, leader, epoch, "alter-isr-errors", state.LeaderEpoch-1, []int32{leader}, stat.Version), kerr.FencedLeaderEpoch)
	partition("another zkVersion", send(ctrl, leader, epoch, "alter-isr-errors", state.LeaderEpoch, []int32{leader}, stat.Version+5), kerr.InvalidUpdateVersion)
	if p := partition("the stored state", send(ctrl, leader, epoch, "alter-isr-errors", state.LeaderEpoch, isr, stat.Version+5), nil); p.PartitionEpoch != stat.Version || !slices.Equal(p.ISR, isr) {
		t.Errorf("the stored state answered as %+v, want ISR %v at zkVersion %d", p, isr, stat.Version)
	}
	p := partition("a valid change", send(ctrl, leader, epoch, "alter-isr-errors", state.LeaderEpoch, []int32{leader}, stat.Version), nil)
	now, _ := c.PartitionState("alter-isr-errors", 0)
	_, nowStat, _ := c.ZooKeeper().Get(zkpaths.PartitionStatePath("alter-isr-errors", 0))
	if p.PartitionEpoch != stat.Version+1 || !slices.Equal(now.ISR, []int32{leader}) || nowStat.Version != p.PartitionEpoch {
		t.Errorf("after a valid change: answer %+v, znode %+v at zkVersion %d; want ISR [%d] at zkVersion %d", p, now, nowStat.Version, leader, stat.Version+1)
	}
}

// TestAlterIsrBatchWithAStaleVersion: the controller writes a request's
// changes together, in ZooKeeper transactions; one change at a stale
// zkVersion fails alone (INVALID_UPDATE_VERSION) and the others are written.
func TestAlterIsrBatchWithAStaleVersion(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 2})
	ctrl := c.WaitForController()
	const topic = "alter-isr-batch"
	createAssigned(t, c.Addr(1), topic, [][]int32{{1, 2}, {1, 2}, {1, 2}, {1, 2}}, nil)
	states := make([]zkpaths.LeaderAndIsr, 4)
	versions := make([]int32, 4)
	c.WaitFor("every ISR [1 2] led by 1", func() bool {
		for i := range states {
			s, ok := c.PartitionState(topic, int32(i))
			if !ok || len(s.ISR) != 2 || s.Leader != 1 {
				return false
			}
		}
		return true
	})
	for i := range states {
		data, stat, err := c.ZooKeeper().Get(zkpaths.PartitionStatePath(topic, int32(i)))
		if err != nil {
			t.Fatal(err)
		}
		if states[i], err = zkpaths.DecodeLeaderAndIsr(data); err != nil {
			t.Fatal(err)
		}
		versions[i] = stat.Version
	}
	_, reg, err := c.ZooKeeper().Get(zkpaths.BrokerPath(1))
	if err != nil {
		t.Fatal(err)
	}
	const stale = 2
	req := kmsg.NewPtrAlterPartitionRequest()
	req.BrokerID, req.BrokerEpoch = 1, reg.Czxid
	req.Topics = []kmsg.AlterPartitionRequestTopic{{Topic: topic}}
	for i := range states {
		v := versions[i]
		if i == stale {
			v += 5
		}
		req.Topics[0].Partitions = append(req.Topics[0].Partitions, kmsg.AlterPartitionRequestTopicPartition{
			Partition: int32(i), LeaderEpoch: states[i].LeaderEpoch, NewISR: []int32{1}, PartitionEpoch: v,
		})
	}
	resp := raw(t, c.Addr(ctrl), req, 0).(*kmsg.AlterPartitionResponse)
	if resp.ErrorCode != 0 || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != len(states) {
		t.Fatalf("answer %+v, want one per partition", resp)
	}
	for _, p := range resp.Topics[0].Partitions {
		_, stat, err := c.ZooKeeper().Get(zkpaths.PartitionStatePath(topic, p.Partition))
		if err != nil {
			t.Fatal(err)
		}
		now, _ := c.PartitionState(topic, p.Partition)
		if p.Partition == stale {
			if p.ErrorCode != kerr.InvalidUpdateVersion.Code || stat.Version != versions[stale] || len(now.ISR) != 2 {
				t.Errorf("the stale change: %v, znode at version %d with ISR %v; want INVALID_UPDATE_VERSION and the znode untouched",
					kerr.ErrorForCode(p.ErrorCode), stat.Version, now.ISR)
			}
			continue
		}
		if p.ErrorCode != 0 || p.PartitionEpoch != versions[p.Partition]+1 || stat.Version != p.PartitionEpoch || !slices.Equal(now.ISR, []int32{1}) {
			t.Errorf("partition %d: %v at zkVersion %d, znode at %d with ISR %v; want ISR [1] written once",
				p.Partition, kerr.ErrorForCode(p.ErrorCode), p.PartitionEpoch, stat.Version, now.ISR)
		}
	}
}

// TestAlterIsrRefusesIneligibleReplicas: the controller refuses an AlterIsr that adds a broker
// which is not registered or is in controlled shutdown (KIP-841's rule, with
// OPERATION_NOT_ATTEMPTED as Kafka 3.3 answers AlterIsr v0), and leaves the state znode as it
// was; otherwise a follower fetching between its controlled shutdown and its exit rejoins the ISR
// and stays named there after it is gone.
func TestAlterIsrRefusesIneligibleReplicas(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 2, Properties: map[string]string{"auto.leader.rebalance.enable": "false"}})
	ctrl := c.WaitForController()
	const topic = "alter-isr-ineligible"
	createAssigned(t, c.Addr(1), topic, [][]int32{{1, 2}}, nil)
	c.WaitFor("ISR [1 2] led by 1", func() bool {
		s, ok := c.PartitionState(topic, 0)
		return ok && s.Leader == 1 && len(s.ISR) == 2
	})
	_, reg, err := c.ZooKeeper().Get(zkpaths.BrokerPath(1))
	if err != nil {
		t.Fatal(err)
	}
	current := func() (zkpaths.LeaderAndIsr, int32) {
		t.Helper()
		data, stat, err := c.ZooKeeper().Get(zkpaths.PartitionStatePath(topic, 0))
		if err != nil {
			t.Fatal(err)
		}
		s, err := zkpaths.DecodeLeaderAndIsr(data)
		if err != nil {
			t.Fatal(err)
		}
		return s, stat.Version
	}
	propose := func(what string, isr []int32) {
		t.Helper()
		before, version := current()
		req := kmsg.NewPtrAlterPartitionRequest()
		req.BrokerID, req.BrokerEpoch = 1, reg.Czxid
		req.Topics = []kmsg.AlterPartitionRequestTopic{{Topic: topic, Partitions: []kmsg.AlterPartitionRequestTopicPartition{{
			Partition: 0, LeaderEpoch: before.LeaderEpoch, NewISR: isr, PartitionEpoch: version,
		}}}}
		resp := raw(t, c.Addr(ctrl), req, 0).(*kmsg.AlterPartitionResponse)
		if resp.ErrorCode != 0 || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
			t.Fatalf("%s: %+v, want one partition's answer", what, resp)
		}
		if code := resp.Topics[0].Partitions[0].ErrorCode; code != kerr.OperationNotAttempted.Code {
			t.Errorf("%s: %v, want OPERATION_NOT_ATTEMPTED", what, kerr.ErrorForCode(code))
		}
		if after, v := current(); v != version || !slices.Equal(after.ISR, before.ISR) {
			t.Errorf("%s: the state went from %+v (zkVersion %d) to %+v (zkVersion %d), want it untouched", what, before, version, after, v)
		}
	}
	propose("ISR [1 2 9], 9 not registered", []int32{1, 2, 9})

	cs := kmsg.NewPtrControlledShutdownRequest()
	cs.BrokerID, cs.BrokerEpoch = 2, c.Broker(2).BrokerEpoch()
	if got := raw(t, c.Addr(ctrl), cs, 3).(*kmsg.ControlledShutdownResponse); got.ErrorCode != 0 || len(got.PartitionsRemaining) != 0 {
		t.Fatalf("controlled shutdown of broker 2: error %d, remaining %v", got.ErrorCode, got.PartitionsRemaining)
	}
	if s, _ := current(); !slices.Equal(s.ISR, []int32{1}) {
		t.Fatalf("after broker 2's controlled shutdown the state is %+v, want ISR [1]", s)
	}
	propose("ISR [1 2], 2 shutting down", []int32{1, 2})
}
