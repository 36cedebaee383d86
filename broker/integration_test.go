package broker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/internal/testcluster"
	"github.com/zkafka/zkafka/wire"
	"github.com/zkafka/zkafka/zkpaths"
)

func ctxT(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// produceAll produces n records to topic and returns them by partition in
// acknowledgement order.
func produceAll(t *testing.T, cl *kgo.Client, topic string, n int) map[int32][]*kgo.Record {
	t.Helper()
	ctx := ctxT(t, 30*time.Second)
	byPartition := map[int32][]*kgo.Record{}
	for i := range n {
		r := &kgo.Record{Topic: topic, Key: fmt.Appendf(nil, "k%d", i), Value: fmt.Appendf(nil, "value-%d", i)}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatalf("produce %d: %v", i, err)
		}
		byPartition[r.Partition] = append(byPartition[r.Partition], r)
	}
	return byPartition
}

// consumeAll reads n records from the start of topic.
func consumeAll(t *testing.T, c *testcluster.Cluster, topic string, n int) map[int32][]*kgo.Record {
	t.Helper()
	cl := c.Client(kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	ctx := ctxT(t, 30*time.Second)
	got := map[int32][]*kgo.Record{}
	for count := 0; count < n; {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consumed %d of %d records: %v", count, n, err)
		}
		fs.EachError(func(topic string, p int32, err error) { t.Logf("fetch %s-%d: %v", topic, p, err) })
		fs.EachRecord(func(r *kgo.Record) {
			got[r.Partition] = append(got[r.Partition], r)
			count++
		})
	}
	return got
}

func TestProduceConsumeWithKgo(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 3})
	adm := kadm.NewClient(c.Client())
	ctx := ctxT(t, 30*time.Second)
	resp, err := adm.CreateTopic(ctx, 3, 1, nil, "orders")
	if err != nil || resp.Err != nil {
		t.Fatalf("create topic: %v %v", err, resp.Err)
	}
	for p := range int32(3) {
		c.WaitForLeader("orders", p)
	}
	producer := c.Client(kgo.DisableIdempotentWrite(), kgo.DefaultProduceTopic("orders"))
	sent := produceAll(t, producer, "orders", 300)
	got := consumeAll(t, c, "orders", 300)
	if len(sent) != 3 {
		t.Errorf("records landed in %d partitions, want 3", len(sent))
	}
	for p, recs := range sent {
		if len(got[p]) != len(recs) {
			t.Fatalf("partition %d: consumed %d records, produced %d", p, len(got[p]), len(recs))
		}
		for i, r := range recs {
			g := got[p][i]
			if g.Offset != r.Offset || string(g.Value) != string(r.Value) || string(g.Key) != string(r.Key) {
				t.Fatalf("partition %d record %d: got offset %d %q, want offset %d %q", p, i, g.Offset, g.Value, r.Offset, r.Value)
			}
		}
	}
}

func TestDefaultKgoProducerAndAutoCreate(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 1})
	// kgo's defaults: acks=all, idempotent (it falls back to producer id -1
	// when the broker does not advertise InitProducerId), snappy, 10 ms linger.
	cl := c.Client(kgo.AllowAutoTopicCreation())
	sent := produceAll(t, cl, "auto-created", 20)
	if len(sent[0]) != 20 {
		t.Fatalf("produced %v", sent)
	}
	if _, _, err := c.ZooKeeper().Get(zkpaths.TopicPath("auto-created")); err != nil {
		t.Fatalf("auto-created topic has no znode: %v", err)
	}
	consumeAll(t, c, "auto-created", 20)
}

func TestZnodesAsKafkaWritesThem(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 2})
	zk := c.ZooKeeper()
	ids, _, err := zk.Children(zkpaths.BrokerIDs)
	if err != nil || len(ids) != 2 {
		t.Fatalf("/brokers/ids = %v %v", ids, err)
	}
	data, stat, err := zk.Get(zkpaths.BrokerPath(1))
	if err != nil {
		t.Fatal(err)
	}
	var reg map[string]any
	if err := json.Unmarshal(data, &reg); err != nil {
		t.Fatalf("broker JSON %s: %v", data, err)
	}
	if reg["version"] != float64(5) || reg["host"] != "127.0.0.1" || reg["jmx_port"] != float64(-1) {
		t.Errorf("broker registration %s", data)
	}
	if _, ok := reg["timestamp"].(string); !ok {
		t.Errorf("timestamp must be a JSON string: %s", data)
	}
	if stat.EphemeralOwner == 0 {
		t.Error("/brokers/ids/1 is not ephemeral")
	}
	if got := c.Broker(1).BrokerEpoch(); got != stat.Czxid {
		t.Errorf("broker epoch %d, want czxid %d", got, stat.Czxid)
	}
	epochData, _, err := zk.Get(zkpaths.ControllerEpoch)
	if err != nil || string(epochData) != "1" {
		t.Errorf("/controller_epoch = %q %v, want 1", epochData, err)
	}
	cid, _, err := zk.Get(zkpaths.ClusterID)
	if err != nil || !strings.Contains(string(cid), `"version":"1"`) {
		t.Errorf("/cluster/id = %s %v", cid, err)
	}
	for _, p := range zkpaths.PersistentPaths {
		if ok, _, err := zk.Exists(p); err != nil || !ok {
			t.Errorf("%s was not pre-created", p)
		}
	}
	meta, err := os.ReadFile(filepath.Join(c.Properties(1)["log.dirs"], "meta.properties"))
	if err != nil || !strings.Contains(string(meta), "broker.id=1") || !strings.Contains(string(meta), "cluster.id="+c.Broker(1).ClusterID()) {
		t.Errorf("meta.properties = %s %v", meta, err)
	}

	adm := kadm.NewClient(c.Client())
	if _, err := adm.CreateTopic(ctxT(t, 30*time.Second), 2, 2, map[string]*string{"retention.ms": kmsgStr("1000")}, "t"); err != nil {
		t.Fatal(err)
	}
	leader := c.WaitForLeader("t", 0)
	state, _ := c.PartitionState("t", 0)
	if state.LeaderEpoch != 0 || len(state.ISR) != 2 || state.ControllerEpoch != 1 || state.Leader != leader {
		t.Errorf("partition state %+v", state)
	}
	cfg, _, err := zk.Get(zkpaths.TopicConfigPath("t"))
	if err != nil || string(cfg) != `{"version":1,"config":{"retention.ms":"1000"}}` {
		t.Errorf("/config/topics/t = %s %v", cfg, err)
	}
	tdata, _, _ := zk.Get(zkpaths.TopicPath("t"))
	ta, err := zkpaths.DecodeTopicAssignment(tdata)
	if err != nil || len(ta.Partitions) != 2 || ta.TopicID == "" || ta.Partitions[0][0] != leader {
		t.Errorf("/brokers/topics/t = %s %v (leader %d must be the first replica)", tdata, err, leader)
	}
}

func kmsgStr(s string) *string { return &s }

func TestGeneratedBrokerID(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 1, Properties: map[string]string{"broker.id": "-1"}})
	if id := c.Broker(1).BrokerID(); id != 1001 {
		t.Fatalf("generated broker id %d, want 1001 (seqid version 1 + reserved.broker.max.id 1000)", id)
	}
	if ok, _, _ := c.ZooKeeper().Exists(zkpaths.BrokerPath(1001)); !ok {
		t.Fatal("/brokers/ids/1001 missing")
	}
}

func TestCleanShutdownDeregisters(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 2})
	c.StopBroker(2)
	if ok, _, _ := c.ZooKeeper().Exists(zkpaths.BrokerPath(2)); ok {
		t.Fatal("/brokers/ids/2 still exists after a clean shutdown")
	}
}

func TestSessionExpiryReregistersAndReelects(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 2})
	ctrl := c.WaitForController()
	b := c.Broker(ctrl)
	oldEpoch := b.BrokerEpoch()
	if err := b.ZooKeeper().ForceExpire(ctxT(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	c.WaitFor("re-registration with a new broker epoch", func() bool {
		_, stat, err := c.ZooKeeper().Get(zkpaths.BrokerPath(ctrl))
		return err == nil && stat.Czxid > oldEpoch && b.BrokerEpoch() == stat.Czxid
	})
	c.WaitFor("controller epoch 2", func() bool {
		data, _, err := c.ZooKeeper().Get(zkpaths.ControllerEpoch)
		return err == nil && string(data) == "2"
	})
	c.WaitForController()
}

// raw sends one request at an explicit version through a fresh connection.
func raw(t *testing.T, addr string, req kmsg.Request, v int16) kmsg.Response {
	t.Helper()
	ctx := ctxT(t, 10*time.Second)
	cl, err := wire.Dial(ctx, addr, "raw-test")
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	resp, err := cl.RequestVersion(ctx, req, v)
	if err != nil {
		t.Fatalf("%s v%d: %v", kmsg.NameForKey(req.Key()), v, err)
	}
	return resp
}

func TestStaleControllerEpochRejected(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 1})
	req := kmsg.NewPtrLeaderAndISRRequest()
	req.ControllerID, req.ControllerEpoch, req.BrokerEpoch = 1, 0, -1
	resp := raw(t, c.Addr(1), req, 5).(*kmsg.LeaderAndISRResponse)
	if resp.ErrorCode != kerr.StaleControllerEpoch.Code {
		t.Fatalf("LeaderAndIsr from epoch 0: error %d, want STALE_CONTROLLER_EPOCH", resp.ErrorCode)
	}
	um := kmsg.NewPtrUpdateMetadataRequest()
	um.ControllerID, um.ControllerEpoch, um.BrokerEpoch = 1, 0, -1
	if got := raw(t, c.Addr(1), um, 7).(*kmsg.UpdateMetadataResponse); got.ErrorCode != kerr.StaleControllerEpoch.Code {
		t.Fatalf("UpdateMetadata from epoch 0: error %d", got.ErrorCode)
	}
	stale := kmsg.NewPtrLeaderAndISRRequest()
	stale.ControllerID, stale.ControllerEpoch, stale.BrokerEpoch = 1, 1, c.Broker(1).BrokerEpoch()-1
	if got := raw(t, c.Addr(1), stale, 5).(*kmsg.LeaderAndISRResponse); got.ErrorCode != kerr.StaleBrokerEpoch.Code {
		t.Fatalf("LeaderAndIsr to an old broker epoch: error %d, want STALE_BROKER_EPOCH", got.ErrorCode)
	}
}

// TestForgedControllerEpochRejected: control requests from a client claiming
// a controller epoch far above /controller_epoch are refused, the broker keeps
// the real controller's epoch, and the real controller's next requests (a
// new topic's LeaderAndIsr and UpdateMetadata) still work.
func TestForgedControllerEpochRejected(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 1})
	c.WaitForController()
	real := c.Broker(1).ReplicaManager().ControllerEpoch()
	const forged = 2_000_000_000
	um := kmsg.NewPtrUpdateMetadataRequest()
	um.ControllerID, um.ControllerEpoch, um.BrokerEpoch = 1, forged, -1
	if got := raw(t, c.Addr(1), um, 7).(*kmsg.UpdateMetadataResponse); got.ErrorCode != kerr.StaleControllerEpoch.Code {
		t.Errorf("forged UpdateMetadata: error %v, want STALE_CONTROLLER_EPOCH", kerr.ErrorForCode(got.ErrorCode))
	}
	lis := kmsg.NewPtrLeaderAndISRRequest()
	lis.ControllerID, lis.ControllerEpoch, lis.BrokerEpoch = 1, forged, -1
	if got := raw(t, c.Addr(1), lis, 5).(*kmsg.LeaderAndISRResponse); got.ErrorCode != kerr.StaleControllerEpoch.Code {
		t.Errorf("forged LeaderAndIsr: error %v, want STALE_CONTROLLER_EPOCH", kerr.ErrorForCode(got.ErrorCode))
	}
	sr := kmsg.NewPtrStopReplicaRequest()
	sr.ControllerID, sr.ControllerEpoch, sr.BrokerEpoch = 1, forged, -1
	if got := raw(t, c.Addr(1), sr, 3).(*kmsg.StopReplicaResponse); got.ErrorCode != kerr.StaleControllerEpoch.Code {
		t.Errorf("forged StopReplica: error %v, want STALE_CONTROLLER_EPOCH", kerr.ErrorForCode(got.ErrorCode))
	}
	if got := c.Broker(1).ReplicaManager().ControllerEpoch(); got != real {
		t.Errorf("controller epoch %d after the forgeries, want %d", got, real)
	}

	createAssigned(t, c.Addr(1), "after-forgery", [][]int32{{1}}, nil)
	c.WaitForLeader("after-forgery", 0)
	c.WaitFor("the metadata cache to know after-forgery's leader", func() bool {
		m := rawMetadata(t, c.Addr(1))
		if m == nil {
			return false
		}
		for _, tp := range m.Topics {
			if tp.Topic != nil && *tp.Topic == "after-forgery" {
				return len(tp.Partitions) == 1 && tp.Partitions[0].Leader == 1
			}
		}
		return false
	})
	if err, off := produceAcks(t, c.Addr(1), "after-forgery", -1, "written"); err != nil || off != 0 {
		t.Errorf("produce to a topic created after the forgeries: %v at offset %d", err, off)
	}
}

func TestControllerFailoverThenCreateTopic(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 3})
	first := c.WaitForController()
	c.StopBroker(first)
	second := c.WaitForController()
	if second == first {
		t.Fatalf("broker %d is still controller after it stopped", first)
	}
	epoch, _, err := c.ZooKeeper().Get(zkpaths.ControllerEpoch)
	if err != nil || string(epoch) != "2" {
		t.Fatalf("/controller_epoch = %q %v, want 2", epoch, err)
	}
	adm := kadm.NewClient(c.Client())
	resp, err := adm.CreateTopic(ctxT(t, 30*time.Second), 4, 2, nil, "after-failover")
	if err != nil || resp.Err != nil {
		t.Fatalf("create topic on the new controller: %v %v", err, resp.Err)
	}
	for p := range int32(4) {
		leader := c.WaitForLeader("after-failover", p)
		state, _ := c.PartitionState("after-failover", p)
		if leader == first || state.ControllerEpoch != 2 {
			t.Errorf("partition %d: leader %d, state %+v", p, leader, state)
		}
	}
}
