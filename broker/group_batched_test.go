package broker_test

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/internal/testcluster"
)

// batchedProps give a 3-broker cluster one unreplicated __consumer_offsets
// partition per broker, so groups land on different coordinators and a
// stopped broker takes its groups' coordinator away.
func batchedProps() map[string]string {
	props := maps.Clone(groupProps)
	props["offsets.topic.num.partitions"] = "6"
	props["offsets.topic.replication.factor"] = "1"
	props["auto.leader.rebalance.enable"] = "false"
	props["zkafka.batched.coordinator.apis.enable"] = "true"
	return props
}

// findCoordinators asks addr for the coordinators of keys in one
// FindCoordinator v4 request and returns the answers by key, after checking
// that every key is answered once, in order.
func findCoordinators(t *testing.T, addr string, keyType int8, keys []string) map[string]kmsg.FindCoordinatorResponseCoordinator {
	t.Helper()
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.CoordinatorType, req.CoordinatorKeys = keyType, keys
	resp := raw(t, addr, req, 4).(*kmsg.FindCoordinatorResponse)
	if len(resp.Coordinators) != len(keys) {
		t.Fatalf("FindCoordinator v4 for %d keys: %d answers", len(keys), len(resp.Coordinators))
	}
	byKey := map[string]kmsg.FindCoordinatorResponseCoordinator{}
	for i, c := range resp.Coordinators {
		if c.Key != keys[i] {
			t.Fatalf("answer %d is for key %q, want %q", i, c.Key, keys[i])
		}
		byKey[c.Key] = c
	}
	return byKey
}

// allAnswered reports whether every key has a coordinator.
func allAnswered(cs map[string]kmsg.FindCoordinatorResponseCoordinator) bool {
	for _, c := range cs {
		if c.ErrorCode != 0 {
			return false
		}
	}
	return true
}

// candidateGroups are group ids that spread over six offsets partitions
// (their Java hash codes differ in the last character).
func candidateGroups() []string {
	var groups []string
	for i := range 12 {
		groups = append(groups, "batched-"+strconv.Itoa(i))
	}
	return groups
}

// One FindCoordinator v4 request answers many groups with their different
// coordinators — the same answers a v3 request per group gets — including
// the empty group id, which Kafka accepts as a key. Once a broker is gone
// (its unreplicated offsets partitions have no leader), its groups' keys get
// COORDINATOR_NOT_AVAILABLE while the other keys of the same request are
// still answered.
func TestFindCoordinatorBatchedKeys(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 3, Properties: batchedProps()})
	keys := append(candidateGroups(), "")
	var got map[string]kmsg.FindCoordinatorResponseCoordinator
	c.WaitFor("every key to have a coordinator", func() bool {
		got = findCoordinators(t, c.Addr(1), 0, keys)
		return allAnswered(got)
	})
	nodes := map[int32]bool{}
	for _, key := range keys {
		a := got[key]
		nodes[a.NodeID] = true
		if addr := a.Host + ":" + strconv.Itoa(int(a.Port)); addr != c.Addr(a.NodeID) {
			t.Errorf("key %q: coordinator %d at %s, want %s", key, a.NodeID, addr, c.Addr(a.NodeID))
		}
		if a.ErrorMessage != nil {
			t.Errorf("key %q: error message %q without an error", key, *a.ErrorMessage)
		}
		if single := findCoordinator(t, c.Addr(2), key); single != a.NodeID {
			t.Errorf("key %q: v4 says coordinator %d, v3 says %d", key, a.NodeID, single)
		}
	}
	if len(nodes) != 3 {
		t.Fatalf("the groups' coordinators are %v, want all three brokers", slices.Collect(maps.Keys(nodes)))
	}
	if none := findCoordinators(t, c.Addr(1), 0, []string{}); len(none) != 0 {
		t.Errorf("no keys: %d answers", len(none))
	}

	const gone = 3
	c.StopBroker(gone)
	c.WaitFor("the stopped broker's groups to lose their coordinator", func() bool {
		after := findCoordinators(t, c.Addr(1), 0, keys)
		for _, key := range keys {
			if got[key].NodeID == gone && after[key].ErrorCode == 0 {
				return false
			}
		}
		got = after
		return true
	})
	for _, key := range keys {
		a := got[key]
		if a.ErrorCode == 0 {
			if a.NodeID == gone || a.NodeID < 1 {
				t.Errorf("key %q: coordinator %d after broker %d stopped", key, a.NodeID, gone)
			}
			continue
		}
		wantErr(t, fmt.Sprintf("key %q", key), a.ErrorCode, kerr.CoordinatorNotAvailable)
		if a.NodeID != -1 || a.Host != "" || a.Port != -1 {
			t.Errorf("key %q: failed key names node %d at %s:%d", key, a.NodeID, a.Host, a.Port)
		}
		if a.ErrorMessage == nil || *a.ErrorMessage == "" {
			t.Errorf("key %q: an error without a message", key)
		}
	}
	lost := 0
	for _, a := range got {
		if a.ErrorCode != 0 {
			lost++
		}
	}
	if lost == 0 || lost == len(keys) {
		t.Fatalf("%d of %d keys lost their coordinator, want some but not all", lost, len(keys))
	}
}

// Every key of a batch of transactional ids gets its transaction
// coordinator once __transaction_state has leaders, every key of an unknown
// key type INVALID_REQUEST, and a version past the advertised one
// UNSUPPORTED_VERSION, each in the per-key shape.
func TestFindCoordinatorBatchedKeyErrors(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Properties: batchedProps()})
	keys := []string{"txn-a", "txn-b"}
	for key, a := range findCoordinators(t, c.Addr(1), 7, keys) {
		wantErr(t, fmt.Sprintf("key type 7, key %q", key), a.ErrorCode, kerr.InvalidRequest)
		if a.NodeID != -1 || a.Port != -1 {
			t.Errorf("key type 7, key %q: failed key names node %d port %d", key, a.NodeID, a.Port)
		}
	}
	c.WaitFor("both transactional ids' coordinator", func() bool {
		found := findCoordinators(t, c.Addr(1), 1, keys)
		for _, key := range keys {
			if a := found[key]; a.ErrorCode != 0 || a.NodeID != 1 {
				return false
			}
		}
		return true
	})
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.CoordinatorKeys = keys
	resp := raw(t, c.Addr(1), req, 5).(*kmsg.FindCoordinatorResponse)
	if len(resp.Coordinators) != len(keys) {
		t.Fatalf("FindCoordinator v5: %d answers for %d keys", len(resp.Coordinators), len(keys))
	}
	for _, a := range resp.Coordinators {
		wantErr(t, "FindCoordinator v5, key "+a.Key, a.ErrorCode, kerr.UnsupportedVersion)
	}
}

// commitSimple commits offsets for a group outside group management
// (generation -1, as kafka-consumer-groups --reset-offsets does) on its
// coordinator.
func commitSimple(t *testing.T, addr, group, topic string, offsets map[int32]int64) {
	t.Helper()
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Group, req.Generation = group, -1
	rt := kmsg.NewOffsetCommitRequestTopic()
	rt.Topic = topic
	for p, o := range offsets {
		rp := kmsg.NewOffsetCommitRequestTopicPartition()
		rp.Partition, rp.Offset, rp.LeaderEpoch = p, o, 4
		rp.Metadata = kmsg.StringPtr(group + "-meta")
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	resp := raw(t, addr, req, 8).(*kmsg.OffsetCommitResponse)
	for _, t2 := range resp.Topics {
		for _, p := range t2.Partitions {
			if p.ErrorCode != 0 {
				t.Fatalf("commit %s %s-%d: %v", group, t2.Topic, p.Partition, kerr.ErrorForCode(p.ErrorCode))
			}
		}
	}
}

// fetchOffsetsV8 sends one OffsetFetch v8 request and returns the groups'
// answers by group, after checking that every group is answered once, in
// order.
func fetchOffsetsV8(t *testing.T, addr string, groups []kmsg.OffsetFetchRequestGroup) map[string]kmsg.OffsetFetchResponseGroup {
	t.Helper()
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Groups, req.RequireStable = groups, true
	resp := raw(t, addr, req, 8).(*kmsg.OffsetFetchResponse)
	if len(resp.Groups) != len(groups) {
		t.Fatalf("OffsetFetch v8 for %d groups: %d answers", len(groups), len(resp.Groups))
	}
	byGroup := map[string]kmsg.OffsetFetchResponseGroup{}
	for i, g := range resp.Groups {
		if g.Group != groups[i].Group {
			t.Fatalf("answer %d is for group %q, want %q", i, g.Group, groups[i].Group)
		}
		byGroup[g.Group] = g
	}
	return byGroup
}

func fetchGroup(group string, topics map[string][]int32) kmsg.OffsetFetchRequestGroup {
	g := kmsg.NewOffsetFetchRequestGroup()
	g.Group = group
	if topics != nil {
		g.Topics = []kmsg.OffsetFetchRequestGroupTopic{}
	}
	for topic, partitions := range topics {
		t := kmsg.NewOffsetFetchRequestGroupTopic()
		t.Topic, t.Partitions = topic, partitions
		g.Topics = append(g.Topics, t)
	}
	return g
}

// fetchedOffset is one partition of an OffsetFetch v8 answer.
type fetchedOffset struct {
	offset      int64
	leaderEpoch int32
	metadata    string
	errorCode   int16
}

func fetchedOffsets(g kmsg.OffsetFetchResponseGroup) map[string]fetchedOffset {
	m := map[string]fetchedOffset{}
	for _, t := range g.Topics {
		for _, p := range t.Partitions {
			meta := "<null>"
			if p.Metadata != nil {
				meta = *p.Metadata
			}
			m[fmt.Sprintf("%s-%d", t.Topic, p.Partition)] = fetchedOffset{p.Offset, p.LeaderEpoch, meta, p.ErrorCode}
		}
	}
	return m
}

// One OffsetFetch v8 request answers several groups of one coordinator:
// named partitions (committed and not), every committed partition (null
// topics), an unknown group (offset -1, no error), an empty topic list, and a
// group another broker coordinates (NOT_COORDINATOR for that group alone).
func TestOffsetFetchMultiGroup(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 3, Properties: batchedProps()})
	candidates := candidateGroups()
	var coords map[string]kmsg.FindCoordinatorResponseCoordinator
	c.WaitFor("every group to have a coordinator", func() bool {
		coords = findCoordinators(t, c.Addr(1), 0, candidates)
		return allAnswered(coords)
	})
	// Four groups of one coordinator and one of another.
	byNode := map[int32][]string{}
	for _, g := range candidates {
		byNode[coords[g].NodeID] = append(byNode[coords[g].NodeID], g)
	}
	var home, away int32
	for id, gs := range byNode {
		if len(gs) >= 4 && home == 0 {
			home = id
		}
	}
	if home == 0 {
		t.Fatalf("no broker coordinates four of the candidate groups: %v", byNode)
	}
	for id := range byNode {
		if id != home {
			away = id
		}
	}
	committedA, committedB, unknown, emptyList := byNode[home][0], byNode[home][1], byNode[home][2], byNode[home][3]
	other := byNode[away][0]

	adm := kadm.NewClient(c.Client())
	for topic, partitions := range map[string]int32{"orders": 3, "payments": 1} {
		if _, err := adm.CreateTopic(ctxT(t, 20*time.Second), partitions, 1, nil, topic); err != nil {
			t.Fatal(err)
		}
		for p := range partitions {
			c.WaitForLeader(topic, p)
		}
	}
	commitSimple(t, c.Addr(home), committedA, "orders", map[int32]int64{0: 10, 1: 11})
	commitSimple(t, c.Addr(home), committedB, "orders", map[int32]int64{2: 20})
	commitSimple(t, c.Addr(home), committedB, "payments", map[int32]int64{0: 30})
	commitSimple(t, c.Addr(away), other, "orders", map[int32]int64{0: 40})

	got := fetchOffsetsV8(t, c.Addr(home), []kmsg.OffsetFetchRequestGroup{
		fetchGroup(committedA, map[string][]int32{"orders": {0, 1, 2}}),
		fetchGroup(committedB, nil),
		fetchGroup(unknown, map[string][]int32{"orders": {0}}),
		fetchGroup(emptyList, map[string][]int32{}),
		fetchGroup(other, map[string][]int32{"orders": {0}}),
	})
	want := map[string]map[string]fetchedOffset{
		committedA: {
			"orders-0": {10, 4, committedA + "-meta", 0},
			"orders-1": {11, 4, committedA + "-meta", 0},
			"orders-2": {-1, -1, "", 0},
		},
		committedB: {
			"orders-2":   {20, 4, committedB + "-meta", 0},
			"payments-0": {30, 4, committedB + "-meta", 0},
		},
		unknown:   {"orders-0": {-1, -1, "", 0}},
		emptyList: {},
		other:     {},
	}
	for group, partitions := range want {
		g := got[group]
		if fo := fetchedOffsets(g); !maps.Equal(fo, partitions) {
			t.Errorf("group %s: %v, want %v", group, fo, partitions)
		}
		wantCode := int16(0)
		if group == other {
			wantCode = kerr.NotCoordinator.Code
		}
		if g.ErrorCode != wantCode {
			t.Errorf("group %s: %v, want %v", group, kerr.ErrorForCode(g.ErrorCode), kerr.ErrorForCode(wantCode))
		}
	}

	// The same group fetched from its own coordinator, with null topics.
	fromAway := fetchOffsetsV8(t, c.Addr(away), []kmsg.OffsetFetchRequestGroup{fetchGroup(other, nil)})[other]
	if fo := fetchedOffsets(fromAway); fromAway.ErrorCode != 0 || !maps.Equal(fo, map[string]fetchedOffset{"orders-0": {40, 4, other + "-meta", 0}}) {
		t.Errorf("group %s from its coordinator: %v, %v", other, kerr.ErrorForCode(fromAway.ErrorCode), fo)
	}

	// A v7 request for one group reads the same offsets.
	v7 := kmsg.NewPtrOffsetFetchRequest()
	v7.Group = committedB
	old := raw(t, c.Addr(home), v7, 7).(*kmsg.OffsetFetchResponse)
	oldOffsets := map[string]int64{}
	for _, tp := range old.Topics {
		for _, p := range tp.Partitions {
			oldOffsets[fmt.Sprintf("%s-%d", tp.Topic, p.Partition)] = p.Offset
		}
	}
	if !maps.Equal(oldOffsets, map[string]int64{"orders-2": 20, "payments-0": 30}) {
		t.Errorf("v7, null topics: %v", oldOffsets)
	}

	// A version past the advertised one: UNSUPPORTED_VERSION on every group.
	v9 := kmsg.NewPtrOffsetFetchRequest()
	v9.Groups = []kmsg.OffsetFetchRequestGroup{fetchGroup(committedA, nil), fetchGroup(unknown, nil)}
	resp := raw(t, c.Addr(home), v9, 9).(*kmsg.OffsetFetchResponse)
	if len(resp.Groups) != 2 {
		t.Fatalf("OffsetFetch v9: %d answers for 2 groups", len(resp.Groups))
	}
	for _, g := range resp.Groups {
		wantErr(t, "OffsetFetch v9, group "+g.Group, g.ErrorCode, kerr.UnsupportedVersion)
	}
}

// With zkafka.batched.coordinator.apis.enable, ApiVersions advertises
// FindCoordinator up to v4 and OffsetFetch up to v8, one version past Kafka
// 2.8 each (by default they stop at 2.8's; TestAPIVersionsMatchKafka28).
func TestBatchedGroupAPIVersions(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Properties: map[string]string{"zkafka.batched.coordinator.apis.enable": "true"}})
	resp := raw(t, c.Addr(1), kmsg.NewPtrApiVersionsRequest(), 3).(*kmsg.ApiVersionsResponse)
	want := map[int16]int16{9: 8, 10: 4}
	for _, k := range resp.ApiKeys {
		if v, ok := want[k.ApiKey]; ok {
			if k.MinVersion != 0 || k.MaxVersion != v {
				t.Errorf("%s: v%d–v%d, want v0–v%d", kmsg.NameForKey(k.ApiKey), k.MinVersion, k.MaxVersion, v)
			}
			delete(want, k.ApiKey)
		}
	}
	if len(want) != 0 {
		t.Errorf("not advertised: %v", want)
	}
}

// writtenRequests records the requests kgo writes ("wrote OffsetFetch v8"),
// from its debug log.
type writtenRequests struct {
	mu    sync.Mutex
	wrote map[string]bool
}

func (w *writtenRequests) Level() kgo.LogLevel { return kgo.LogLevelDebug }

func (w *writtenRequests) Log(_ kgo.LogLevel, msg string, _ ...any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.wrote[msg] = true
}

func (w *writtenRequests) has(msg string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.wrote[msg]
}

// kgo negotiates FindCoordinator v4 and OffsetFetch v8 with this broker and
// reads the offsets of many groups, spread over three coordinators, with them.
func TestKgoBatchedGroupAPIs(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Brokers: 3, Properties: batchedProps()})
	log := &writtenRequests{wrote: map[string]bool{}}
	adm := kadm.NewClient(c.Client(kgo.WithLogger(log)))
	if _, err := adm.CreateTopic(ctxT(t, 20*time.Second), 2, 1, nil, "batched"); err != nil {
		t.Fatal(err)
	}
	c.WaitForLeader("batched", 0)
	c.WaitForLeader("batched", 1)
	groups := candidateGroups()
	for i, g := range groups {
		var os kadm.Offsets
		os.Add(kadm.Offset{Topic: "batched", Partition: int32(i % 2), At: int64(100 + i), LeaderEpoch: -1})
		var resp kadm.OffsetResponses
		c.WaitFor("the commit of "+g, func() bool {
			var err error
			resp, err = adm.CommitOffsets(ctxT(t, 10*time.Second), g, os)
			return err == nil && resp.Error() == nil
		})
	}
	fetched := adm.FetchManyOffsets(ctxT(t, 10*time.Second), groups...)
	if err := fetched.Error(); err != nil {
		t.Fatal(err)
	}
	for i, g := range groups {
		o, ok := fetched[g].Fetched.Lookup("batched", int32(i%2))
		if !ok || o.Err != nil || o.At != int64(100+i) {
			t.Errorf("group %s: %+v (found %v), want offset %d", g, o, ok, 100+i)
		}
		if n := len(fetched[g].CommittedPartitions()["batched"]); n != 1 {
			t.Errorf("group %s: %d committed partitions, want 1", g, n)
		}
	}
	for _, msg := range []string{"wrote FindCoordinator v4", "wrote OffsetFetch v8"} {
		if !log.has(msg) {
			t.Errorf("kgo never logged %q", msg)
		}
	}
}
