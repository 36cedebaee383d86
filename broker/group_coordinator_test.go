package broker

import (
	"context"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkafka/zkafka/brokerconfig"
	"github.com/zkafka/zkafka/internal/zkclient"
	"github.com/zkafka/zkafka/internal/zktest"
	"github.com/zkafka/zkafka/zkpaths"
)

// A broker that has not had the controller's first UpdateMetadata (just started, or restarted while
// no controller acts) knows no live broker. A FindCoordinator it answers then must not create
// __consumer_offsets with fewer replicas than the brokers ZooKeeper lists: found by `zkafka chaos`
// as "fewer live brokers than offsets.topic.replication.factor … live-brokers: 0" on restarted
// brokers; on a new cluster it would have left the offsets topic with one replica for good.
func TestOffsetsTopicReplicasCountRegisteredBrokersNotTheMetadataCache(t *testing.T) {
	connect := zktest.NewChroot(t)
	cfg, err := brokerconfig.New(map[string]string{
		"broker.id": "1", "zookeeper.connect": connect, "log.dirs": t.TempDir(),
		"offsets.topic.replication.factor": "3", "offsets.topic.num.partitions": "4",
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	zkc, err := zkclient.Connect(ctx, zkclient.Config{Connect: connect})
	if err != nil {
		t.Fatal(err)
	}
	defer zkc.Close()
	for _, p := range zkpaths.PersistentPaths {
		if err := zkc.CreateIfMissing(p, nil); err != nil {
			t.Fatal(err)
		}
	}
	for id := int32(1); id <= 3; id++ {
		reg := zkpaths.BrokerRegistration{ID: id, JmxPort: -1, Endpoints: []zkpaths.Endpoint{{ListenerName: "PLAINTEXT", SecurityProtocol: "PLAINTEXT", Host: "localhost", Port: 9091 + id}}}
		if _, err := zkc.Create(zkpaths.BrokerPath(id), reg.Encode(), zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
	}
	s := NewServer(cfg, nil)
	s.zk = zkc
	s.configs = newConfigManager(s)
	if len(s.metadata.AliveBrokers()) != 0 {
		t.Fatal("the metadata cache of a broker without UpdateMetadata lists brokers")
	}
	if s.ensureInternalTopic(s.offsetsTopicSpec()) {
		t.Fatal("the offsets topic is known to a cache that knows nothing")
	}
	data, _, err := zkc.Get(zkpaths.TopicPath(offsetsTopic))
	if err != nil {
		t.Fatalf("the offsets topic was not created: %v", err)
	}
	a, err := zkpaths.DecodeTopicAssignment(data)
	if err != nil {
		t.Fatal(err)
	}
	for p, replicas := range a.Partitions {
		if len(replicas) != 3 {
			t.Errorf("__consumer_offsets-%d has replicas %v, want 3 (three brokers are registered)", p, replicas)
		}
	}
}
