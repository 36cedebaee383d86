package adminzk_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kerr"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/adminzk"
	"github.com/zkafka/zkafka/internal/zkclient"
	"github.com/zkafka/zkafka/internal/zktest"
	"github.com/zkafka/zkafka/kafka"
	"github.com/zkafka/zkafka/zkpaths"
)

func TestMain(m *testing.M) { zktest.Main(m) }

// session opens a ZooKeeper session in a fresh chroot.
func session(t *testing.T, connect string) *zkclient.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	zkc, err := zkclient.Connect(ctx, zkclient.Config{Connect: connect, SessionTimeout: 10 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { zkc.Close() })
	return zkc
}

func newAdmin(t *testing.T) (*adminzk.Client, *zkclient.Client, string) {
	t.Helper()
	connect := zktest.NewChroot(t)
	zkc := session(t, connect)
	return adminzk.New(zkc, zap.NewNop()), zkc, connect
}

func get(t *testing.T, zkc *zkclient.Client, path string) string {
	t.Helper()
	data, _, err := zkc.Get(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func exists(t *testing.T, zkc *zkclient.Client, path string) bool {
	t.Helper()
	ok, _, err := zkc.Exists(path)
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

// notifications returns the data of every /config/changes notification in
// sequence order.
func notifications(t *testing.T, zkc *zkclient.Client) []string {
	t.Helper()
	children, _, err := zkc.Children(zkpaths.ConfigChanges)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(children))
	for _, c := range children {
		seq, err := zkpaths.SequenceNumber(c)
		if err != nil || !strings.HasPrefix(c, "config_change_") {
			t.Fatalf("unexpected child %q of %s", c, zkpaths.ConfigChanges)
		}
		out[seq] = get(t, zkc, zkpaths.ConfigChangePath(c))
	}
	return out
}

func TestCreateTopic(t *testing.T) {
	admin, zkc, _ := newAdmin(t)
	a := map[int32][]int32{0: {1, 2}, 1: {2, 1}}
	ta, err := admin.CreateTopic("orders", a, map[string]string{"retention.ms": "1000"})
	if err != nil {
		t.Fatal(err)
	}
	if got := get(t, zkc, zkpaths.TopicConfigPath("orders")); got != `{"version":1,"config":{"retention.ms":"1000"}}` {
		t.Errorf("config znode %s", got)
	}
	want := fmt.Sprintf(`{"version":3,"topic_id":"%s","partitions":{"0":[1,2],"1":[2,1]},"adding_replicas":{},"removing_replicas":{}}`, ta.TopicID)
	if got := get(t, zkc, zkpaths.TopicPath("orders")); got != want || len(ta.TopicID) != 22 {
		t.Errorf("topic znode %s, want %s", got, want)
	}

	// As kafka-topics --zookeeper does it: no topic id, which the controller adds.
	if _, err := admin.CreateTopicWithoutID("legacy", a, nil); err != nil {
		t.Fatal(err)
	}
	if got := get(t, zkc, zkpaths.TopicPath("legacy")); got != `{"version":3,"partitions":{"0":[1,2],"1":[2,1]},"adding_replicas":{},"removing_replicas":{}}` {
		t.Errorf("topic znode without an id: %s", got)
	}

	// A config left behind by a deleted topic of the same name is replaced.
	if err := zkc.CreateIfMissing(zkpaths.TopicConfigPath("reborn"), zkpaths.EntityConfig{Config: map[string]string{"old": "1"}}.Encode()); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.CreateTopic("reborn", map[int32][]int32{0: {1}}, map[string]string{}); err != nil {
		t.Fatal(err)
	}
	if got := get(t, zkc, zkpaths.TopicConfigPath("reborn")); got != `{"version":1,"config":{}}` {
		t.Errorf("reborn config %s", got)
	}

	if err := zkc.CreateIfMissing(zkpaths.DeleteTopicPath("doomed"), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.CreateTopic("my.topic", a, nil); err != nil {
		t.Fatal(err)
	}
	big := map[int32][]int32{}
	for p := range int32(100_000) {
		big[p] = []int32{1, 2, 3}
	}
	for _, tc := range []struct {
		topic      string
		assignment map[int32][]int32
		kind       error
		code       *kerr.Error
		msg        string
	}{
		{"bad/name", a, zkpaths.ErrInvalidTopicName, kerr.InvalidTopicException, "illegal"},
		{"orders", a, adminzk.ErrTopicExists, kerr.TopicAlreadyExists, "Topic 'orders' already exists."},
		{"doomed", a, adminzk.ErrMarkedForDeletion, kerr.TopicAlreadyExists, "Topic 'doomed' is marked for deletion."},
		{"my_topic", a, adminzk.ErrTopicCollision, kerr.InvalidTopicException, "Topic 'my_topic' collides with existing topics: my.topic"},
		{"gap", map[int32][]int32{0: {1}, 2: {1}}, adminzk.ErrInvalidReplicaAssignment, kerr.InvalidReplicaAssignment, "Partitions should be consecutive and start from 0."},
		{"empty", map[int32][]int32{0: {}}, adminzk.ErrInvalidReplicaAssignment, kerr.InvalidReplicaAssignment, "Partition 0 has no replicas."},
		{"uneven", map[int32][]int32{0: {1}, 1: {1, 2}}, adminzk.ErrInvalidReplicaAssignment, kerr.InvalidReplicaAssignment, "All partitions should have the same number of replicas."},
		{"dup", map[int32][]int32{0: {1, 1}}, adminzk.ErrInvalidReplicaAssignment, kerr.InvalidReplicaAssignment, "Duplicate replica assignment found: [1 1]"},
		{"huge", big, adminzk.ErrAssignmentTooLarge, kerr.InvalidPartitions, "over ZooKeeper's"},
	} {
		_, err := admin.CreateTopic(tc.topic, tc.assignment, map[string]string{"k": "v"})
		if !errors.Is(err, tc.kind) || !errors.Is(err, tc.code) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("create %s: %v, want %v / %v with %q", tc.topic, err, tc.kind, tc.code, tc.msg)
		}
		if tc.kind != adminzk.ErrTopicExists && tc.kind != zkpaths.ErrInvalidTopicName && exists(t, zkc, zkpaths.TopicConfigPath(tc.topic)) {
			t.Errorf("create %s failed but wrote its config", tc.topic)
		}
	}
	if err := admin.ValidateTopicCreate("valid", a); err != nil {
		t.Errorf("validate: %v", err)
	}
	if exists(t, zkc, zkpaths.TopicPath("valid")) {
		t.Error("ValidateTopicCreate wrote the topic")
	}
}

func TestAddPartitions(t *testing.T) {
	admin, zkc, connect := newAdmin(t)
	ta, err := admin.CreateTopic("grow", map[int32][]int32{0: {1, 2}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	added, err := admin.AddPartitions("grow", func(cur zkpaths.TopicAssignment) (map[int32][]int32, error) {
		return map[int32][]int32{1: {2, 1}}, nil
	}, true)
	if err != nil || len(added) != 1 {
		t.Fatalf("validate only: %v %v", added, err)
	}
	if got, _ := zkpaths.DecodeTopicAssignment([]byte(get(t, zkc, zkpaths.TopicPath("grow")))); len(got.Partitions) != 1 {
		t.Fatalf("validate only wrote %v", got.Partitions)
	}

	// Another writer adds partition 1 between this writer's read and its
	// write: the write at the old version fails, and grow runs again on the
	// assignment with partition 1.
	other := adminzk.New(session(t, connect), zap.NewNop())
	raced := false
	admin.SetAfterReadHook(func(path string) {
		if raced {
			return
		}
		raced = true
		if _, err := other.AddPartitions("grow", func(zkpaths.TopicAssignment) (map[int32][]int32, error) {
			return map[int32][]int32{1: {2, 1}}, nil
		}, false); err != nil {
			t.Error(err)
		}
	})
	var seen []int
	added, err = admin.AddPartitions("grow", func(cur zkpaths.TopicAssignment) (map[int32][]int32, error) {
		n := int32(len(cur.Partitions))
		seen = append(seen, int(n))
		return map[int32][]int32{n: {1, 2}}, nil
	}, false)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(seen) != "[1 2]" || fmt.Sprint(added) != "map[2:[1 2]]" {
		t.Errorf("grow saw %v partitions and added %v, want [1 2] and partition 2", seen, added)
	}
	got, err := zkpaths.DecodeTopicAssignment([]byte(get(t, zkc, zkpaths.TopicPath("grow"))))
	if err != nil || fmt.Sprint(got.Partitions) != "map[0:[1 2] 1:[2 1] 2:[1 2]]" || got.TopicID != ta.TopicID {
		t.Errorf("assignment %+v %v", got, err)
	}

	refuse := errors.New("refused")
	if _, err := admin.AddPartitions("grow", func(zkpaths.TopicAssignment) (map[int32][]int32, error) { return nil, refuse }, false); err != refuse {
		t.Errorf("grow's error: %v", err)
	}
	if _, err := admin.AddPartitions("missing", nil, false); !errors.Is(err, adminzk.ErrUnknownTopic) || !errors.Is(err, kerr.UnknownTopicOrPartition) {
		t.Errorf("missing topic: %v", err)
	}
}

func TestChangeEntityConfig(t *testing.T) {
	admin, zkc, _ := newAdmin(t)
	set := func(k, v string) func(map[string]string) (bool, error) {
		return func(c map[string]string) (bool, error) { c[k] = v; return true, nil }
	}
	for _, e := range []struct{ typ, name string }{
		{zkpaths.EntityTopics, "orders"}, {zkpaths.EntityBrokers, "1"}, {zkpaths.EntityBrokers, zkpaths.DefaultEntity},
		{zkpaths.EntityUsers, "alice"}, {zkpaths.EntityClients, "app"},
	} {
		if err := admin.ChangeEntityConfig(e.typ, e.name, set("a", "1")); err != nil {
			t.Fatalf("%s/%s: %v", e.typ, e.name, err)
		}
		if err := admin.ChangeEntityConfig(e.typ, e.name, set("b", "2")); err != nil {
			t.Fatalf("%s/%s: %v", e.typ, e.name, err)
		}
		if got := get(t, zkc, zkpaths.EntityConfigPath(e.typ, e.name)); got != `{"version":1,"config":{"a":"1","b":"2"}}` {
			t.Errorf("%s/%s: %s", e.typ, e.name, got)
		}
	}
	want := []string{}
	for _, p := range []string{"topics/orders", "brokers/1", "brokers/<default>", "users/alice", "clients/app"} {
		n := `{"version":2,"entity_path":"` + p + `"}`
		want = append(want, n, n)
	}
	if got := notifications(t, zkc); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("notifications\n%v\nwant\n%v", got, want)
	}

	// No change: nothing written, no notification; an error is returned as is.
	before := len(notifications(t, zkc))
	if err := admin.ChangeEntityConfig(zkpaths.EntityTopics, "orders", func(map[string]string) (bool, error) { return false, nil }); err != nil {
		t.Fatal(err)
	}
	invalid := errors.New("invalid")
	if err := admin.ChangeEntityConfig(zkpaths.EntityTopics, "orders", func(map[string]string) (bool, error) { return true, invalid }); err != invalid {
		t.Errorf("update's error: %v", err)
	}
	if n := len(notifications(t, zkc)); n != before {
		t.Errorf("%d notifications after no change, want %d", n, before)
	}

	if err := admin.ReplaceEntityConfig(zkpaths.EntityTopics, "orders", map[string]string{"c": "3"}); err != nil {
		t.Fatal(err)
	}
	if got, err := admin.FetchEntityConfig(zkpaths.EntityTopics, "orders"); err != nil || fmt.Sprint(got) != "map[c:3]" {
		t.Errorf("replaced config %v %v", got, err)
	}
	if got, err := admin.FetchEntityConfig(zkpaths.EntityTopics, "none"); err != nil || got == nil || len(got) != 0 {
		t.Errorf("missing config %v %v", got, err)
	}
}

// TestChangeEntityConfigInterleaved lets a second writer change another key
// of the same entity between the first writer's read and its write, first
// when the config znode exists and then when both create it: the first
// writer's write fails on the version (or on the znode's existence), it
// re-reads, and both keys survive.
func TestChangeEntityConfigInterleaved(t *testing.T) {
	admin, zkc, connect := newAdmin(t)
	other := adminzk.New(session(t, connect), zap.NewNop())
	for _, entity := range []string{"existing", "created"} {
		if entity == "existing" {
			if err := admin.ChangeEntityConfig(zkpaths.EntityTopics, entity, func(c map[string]string) (bool, error) { c["x"] = "0"; return true, nil }); err != nil {
				t.Fatal(err)
			}
		}
		reads := 0
		admin.SetAfterReadHook(func(string) {
			if reads++; reads > 1 {
				return
			}
			if err := other.ChangeEntityConfig(zkpaths.EntityTopics, entity, func(c map[string]string) (bool, error) { c["other"] = "1"; return true, nil }); err != nil {
				t.Error(err)
			}
		})
		if err := admin.ChangeEntityConfig(zkpaths.EntityTopics, entity, func(c map[string]string) (bool, error) { c["mine"] = "2"; return true, nil }); err != nil {
			t.Fatal(err)
		}
		admin.SetAfterReadHook(nil)
		cfg, err := zkpaths.DecodeEntityConfig([]byte(get(t, zkc, zkpaths.TopicConfigPath(entity))))
		if err != nil || cfg.Config["other"] != "1" || cfg.Config["mine"] != "2" || reads != 2 {
			t.Errorf("%s: config %v after %d reads (%v), want both keys after 2 reads", entity, cfg.Config, reads, err)
		}
	}
}

// TestChangeEntityConfigConcurrent runs two writers, each on its own
// session, updating different keys of one entity config as fast as they
// can: every update of both must be in the final config.
func TestChangeEntityConfigConcurrent(t *testing.T) {
	_, zkc, connect := newAdmin(t)
	const updates = 40
	var wg sync.WaitGroup
	for _, key := range []string{"a", "b"} {
		writer := adminzk.New(session(t, connect), zap.NewNop())
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range updates {
				err := writer.ChangeEntityConfig(zkpaths.EntityBrokers, zkpaths.DefaultEntity, func(c map[string]string) (bool, error) {
					c[fmt.Sprintf("%s%02d", key, i)] = "x"
					return true, nil
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	cfg, err := zkpaths.DecodeEntityConfig([]byte(get(t, zkc, zkpaths.BrokerConfigPath(zkpaths.DefaultEntity))))
	if err != nil || len(cfg.Config) != 2*updates {
		t.Errorf("%d keys after %d updates by each of two writers (%v): %v", len(cfg.Config), updates, err, cfg.Config)
	}
	if n := len(notifications(t, zkc)); n != 2*updates {
		t.Errorf("%d notifications, want %d", n, 2*updates)
	}
}

func TestMarkTopicForDeletion(t *testing.T) {
	admin, zkc, _ := newAdmin(t)
	if _, err := admin.CreateTopic("doomed", map[int32][]int32{0: {1}}, nil); err != nil {
		t.Fatal(err)
	}
	if marked, err := admin.MarkedForDeletion("doomed"); err != nil || marked {
		t.Fatalf("marked before: %v %v", marked, err)
	}
	if err := admin.MarkTopicForDeletion("doomed"); err != nil {
		t.Fatal(err)
	}
	if marked, err := admin.MarkedForDeletion("doomed"); err != nil || !marked || !exists(t, zkc, zkpaths.DeleteTopicPath("doomed")) {
		t.Fatalf("marked after: %v %v", marked, err)
	}
	if err := admin.MarkTopicForDeletion("doomed"); !errors.Is(err, adminzk.ErrMarkedForDeletion) {
		t.Errorf("second mark: %v", err)
	}
	if err := admin.MarkTopicForDeletion("missing"); !errors.Is(err, adminzk.ErrUnknownTopic) || exists(t, zkc, zkpaths.DeleteTopicPath("missing")) {
		t.Errorf("missing topic: %v", err)
	}
}

func TestControllerRequests(t *testing.T) {
	admin, zkc, _ := newAdmin(t)
	if _, ok, err := admin.PendingReassignment(); ok || err != nil {
		t.Fatalf("pending before: %v %v", ok, err)
	}
	r := zkpaths.ReassignPartitionsData{Partitions: []zkpaths.PartitionReplicas{{Topic: "t", Partition: 0, Replicas: []int32{2, 3}}}}
	if err := admin.WriteReassignment(r); err != nil {
		t.Fatal(err)
	}
	if got := get(t, zkc, zkpaths.ReassignPartitions); got != `{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[2,3]}]}` {
		t.Errorf("reassignment znode %s", got)
	}
	if err := admin.WriteReassignment(r); !errors.Is(err, adminzk.ErrReassignmentInProgress) || !errors.Is(err, kerr.ReassignmentInProgress) {
		t.Errorf("second reassignment: %v", err)
	}
	if got, ok, err := admin.PendingReassignment(); !ok || err != nil || fmt.Sprint(got) != fmt.Sprint(r) {
		t.Errorf("pending %v %v %v", got, ok, err)
	}

	tps := []kafka.TopicPartition{{Topic: "t", Partition: 0}, {Topic: "t", Partition: 1}}
	if err := admin.WritePreferredReplicaElection(tps); err != nil {
		t.Fatal(err)
	}
	if got := get(t, zkc, zkpaths.PreferredReplicaElection); got != `{"version":1,"partitions":[{"topic":"t","partition":0},{"topic":"t","partition":1}]}` {
		t.Errorf("election znode %s", got)
	}
	if err := admin.WritePreferredReplicaElection(tps); !errors.Is(err, adminzk.ErrPreferredElectionInProgress) {
		t.Errorf("second election: %v", err)
	}
	if got, ok, err := admin.PendingPreferredReplicaElection(); !ok || err != nil || fmt.Sprint(got.Partitions) != fmt.Sprint(tps) {
		t.Errorf("pending election %v %v %v", got, ok, err)
	}
}

func TestDeleteConsumerGroup(t *testing.T) {
	admin, zkc, _ := newAdmin(t)
	for _, p := range []string{zkpaths.ConsumerOffsetPath("idle", "t", 0), zkpaths.ConsumerOwnerPath("idle", "t", 0), zkpaths.ConsumerIDPath("busy", "c1")} {
		if err := zkc.CreateIfMissing(p, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	if err := admin.DeleteConsumerGroup("idle"); err != nil {
		t.Fatal(err)
	}
	if exists(t, zkc, zkpaths.ConsumerGroupPath("idle")) {
		t.Error("idle group left behind")
	}
	if err := admin.DeleteConsumerGroup("busy"); !errors.Is(err, adminzk.ErrGroupActive) || !exists(t, zkc, zkpaths.ConsumerIDPath("busy", "c1")) {
		t.Errorf("active group: %v", err)
	}
	if err := admin.DeleteConsumerGroup("idle"); !errors.Is(err, adminzk.ErrUnknownGroup) {
		t.Errorf("missing group: %v", err)
	}
}

// TestMinAssignmentBytes: with one-digit broker ids the bound is exactly the
// partitions' JSON (the real znode less its envelope), so it refuses only
// topics that could not fit.
func TestMinAssignmentBytes(t *testing.T) {
	id := zkpaths.NewTopicID()
	envelope := int64(len(zkpaths.TopicAssignment{TopicID: id, Partitions: map[int32][]int32{}}.Encode()))
	for _, n := range []int32{1, 9, 10, 11, 99, 100, 101, 1234} {
		for _, rf := range []int16{1, 3} {
			a := zkpaths.TopicAssignment{TopicID: id, Partitions: map[int32][]int32{}}
			for p := range n {
				for r := range rf {
					a.Partitions[p] = append(a.Partitions[p], int32(r)+1)
				}
			}
			real, bound := int64(len(a.Encode())), adminzk.MinAssignmentBytes(n, rf)
			if bound+envelope != real {
				t.Errorf("%d partitions × %d: bound %d + envelope %d, real %d", n, rf, bound, envelope, real)
			}
		}
	}
	if b := adminzk.MinAssignmentBytes(200000, 1); b <= adminzk.MaxZnodeBytes {
		t.Errorf("200000 partitions: bound %d fits", b)
	}
	if b := adminzk.MinAssignmentBytes(1<<31-1, 3); b <= adminzk.MaxZnodeBytes {
		t.Errorf("2^31-1 partitions: bound %d fits", b)
	}
}
