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

// TestIsrShrinkAndExpandInZooKeeper pauses a follower (SIGSTOP: alive for
// ZooKeeper, silent for the leader). An acks=all produce with a short timeout
// gets REQUEST_TIMED_OUT; one with a long timeout waits until the leader
// removes the follower from the ISR in the partition-state znode (keeping the
// leader epoch: the leader wrote it, not the controller) and then gets
// NOT_ENOUGH_REPLICAS_AFTER_APPEND under min.insync.replicas=2; later acks=all
// produces fail at once with NOT_ENOUGH_REPLICAS while acks=1 works. Resumed,
// the follower catches up and the leader adds it back; an
// /isr_change_notification znode announces the changes.
func TestIsrShrinkAndExpandInZooKeeper(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 1, Properties: replicationProps()})
	follower, _ := joinProcess(t, c, 2, replicationProps())
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
