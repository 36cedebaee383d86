package main

import (
	"context"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/zkafka/zkafka/internal/zkclient"
	"github.com/zkafka/zkafka/internal/zktest"
	"github.com/zkafka/zkafka/zkpaths"
)

// TestReassignThrottleKeepsConcurrentConfigChange is the lost update of
// issue 10: `reassign-partitions --zookeeper --execute --throttle` rewrites
// the topic's config znode to add its throttled-replica lists. When
// `configs --zookeeper --alter` changes the same topic's config between
// the reassignment tool's read and its write, both changes must survive.
// The hook lets the second writer in at exactly that point.
func TestReassignThrottleKeepsConcurrentConfigChange(t *testing.T) {
	connect := zktest.NewChroot(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	zkc, err := zkclient.Connect(ctx, zkclient.Config{Connect: connect, SessionTimeout: 10 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer zkc.Close()
	// The znodes of a cluster with two registered brokers and a topic on
	// broker 1; no broker runs, since only the tools' writes matter here.
	for _, p := range zkpaths.PersistentPaths {
		if err := zkc.CreateIfMissing(p, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []int32{1, 2} {
		reg := zkpaths.BrokerRegistration{Endpoints: []zkpaths.Endpoint{{ListenerName: "PLAINTEXT", SecurityProtocol: "PLAINTEXT", Host: "localhost", Port: 9092 + id}}}
		if err := zkc.CreateIfMissing(zkpaths.BrokerPath(id), reg.Encode()); err != nil {
			t.Fatal(err)
		}
	}
	if err := zkc.CreateIfMissing(zkpaths.TopicConfigPath("moves"), zkpaths.EntityConfig{}.Encode()); err != nil {
		t.Fatal(err)
	}
	if err := zkc.CreateIfMissing(zkpaths.TopicPath("moves"), zkpaths.TopicAssignment{Partitions: map[int32][]int32{0: {1}}}.Encode()); err != nil {
		t.Fatal(err)
	}

	interleaved := false
	zkAfterReadHook = func(path string) {
		if path != zkpaths.TopicConfigPath("moves") || interleaved {
			return
		}
		interleaved = true
		expectZkafka(t, runZkafka("configs", "--zookeeper", connect, "--alter", "--topic", "moves", "--add-config", "retention.ms=1000"), 0,
			"Warning: --zookeeper is deprecated and will be removed in a future version of Kafka.\n"+
				"Use --bootstrap-server instead to specify a broker to connect to.\n"+
				"Completed updating config for entity: topic 'moves'.\n")
	}
	t.Cleanup(func() { zkAfterReadHook = nil })

	file := writeTempFile(t, "move.json", `{"version":1,"partitions":[{"topic":"moves","partition":0,"replicas":[2]}]}`)
	r := runZkafka("reassign-partitions", "--zookeeper", connect, "--execute", "--reassignment-json-file", file, "--throttle", "1000")
	if r.code != 0 || !interleaved {
		t.Fatalf("reassign-partitions: exit %d, interleaved %t\n%s\n%s", r.code, interleaved, r.stdout, r.stderr)
	}
	data, _, err := zkc.Get(zkpaths.TopicConfigPath("moves"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := zkpaths.DecodeEntityConfig(data)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"retention.ms":                            "1000",
		"leader.replication.throttled.replicas":   "0:1",
		"follower.replication.throttled.replicas": "0:2",
	}
	for k, v := range want {
		if cfg.Config[k] != v {
			t.Errorf("%s=%q, want %q; the topic config is %s", k, cfg.Config[k], v, data)
		}
	}
}
