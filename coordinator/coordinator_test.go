package coordinator

import (
	"context"
	"regexp"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/internal/clocktest"
	"github.com/zkafka/zkafka/internal/wait"
	"github.com/zkafka/zkafka/kafka"
)

// The expected values come from Java (JDK 17): s.hashCode(), then Kafka's
// Utils.abs (Integer.MIN_VALUE → 0) modulo 50.
func TestPartitionForMatchesKafka(t *testing.T) {
	for _, tc := range []struct {
		group     string
		hash      int32
		partition int32
	}{
		{"", 0, 0},
		{"my-group", -1906497762, 12},
		{"test-group", 627841412, 12},
		{"console-consumer-12345", 158455506, 6},
		{"g", 103, 3},
		{"group-0", 293427298, 48},
		{"Aa", 2112, 12},
		{"BB", 2112, 12},
		{"polygenelubricants", -2147483648, 0},
		{"grüße", 98768023, 23},
		{"日本語グループ", -305235731, 31},
		{"emoji-😀", 1164511306, 6},
		{"consumer-group-with-a-rather-long-name-1", -1773752239, 39},
	} {
		if got := PartitionFor(tc.group, 50); got != tc.partition {
			t.Errorf("PartitionFor(%q) = %d, want %d (Java hashCode %d)", tc.group, got, tc.partition, tc.hash)
		}
	}
}

const testGroup = "g" // partition 103 % 4 = 3

func joinReq(memberID, instanceID string, version int16, protocols ...string) *kmsg.JoinGroupRequest {
	req := kmsg.NewPtrJoinGroupRequest()
	req.Version = version
	req.Group, req.MemberID = testGroup, memberID
	if instanceID != "" {
		req.InstanceID = kmsg.StringPtr(instanceID)
	}
	req.SessionTimeoutMillis, req.RebalanceTimeoutMillis = 10000, 20000
	req.ProtocolType = "consumer"
	for _, p := range protocols {
		jp := kmsg.NewJoinGroupRequestProtocol()
		jp.Name, jp.Metadata = p, []byte("meta-"+p)
		req.Protocols = append(req.Protocols, jp)
	}
	return req
}

func joinAsync(c *Coordinator, req *kmsg.JoinGroupRequest) <-chan *kmsg.JoinGroupResponse {
	ch := make(chan *kmsg.JoinGroupResponse, 1)
	go func() { ch <- c.JoinGroup(context.Background(), req, "client", "/127.0.0.1") }()
	return ch
}

func recv[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(5 * time.Second):
		t.Fatal("no response")
		panic("unreachable")
	}
}

func syncAsync(c *Coordinator, memberID, instanceID string, generation int32, assignments map[string]string) <-chan *kmsg.SyncGroupResponse {
	req := kmsg.NewPtrSyncGroupRequest()
	req.Version = 5
	req.Group, req.MemberID, req.Generation = testGroup, memberID, generation
	if instanceID != "" {
		req.InstanceID = kmsg.StringPtr(instanceID)
	}
	for id, a := range assignments {
		sa := kmsg.NewSyncGroupRequestGroupAssignment()
		sa.MemberID, sa.MemberAssignment = id, []byte(a)
		req.GroupAssignment = append(req.GroupAssignment, sa)
	}
	ch := make(chan *kmsg.SyncGroupResponse, 1)
	go func() { ch <- c.SyncGroup(context.Background(), req) }()
	return ch
}

func heartbeat(c *Coordinator, memberID, instanceID string, generation int32) int16 {
	req := kmsg.NewPtrHeartbeatRequest()
	req.Version = 4
	req.Group, req.MemberID, req.Generation = testGroup, memberID, generation
	if instanceID != "" {
		req.InstanceID = kmsg.StringPtr(instanceID)
	}
	return c.Heartbeat(req).ErrorCode
}

func wantCode(t *testing.T, what string, got int16, want *kerr.Error) {
	t.Helper()
	var code int16
	if want != nil {
		code = want.Code
	}
	if got != code {
		t.Fatalf("%s: error %v, want %v", what, kerr.ErrorForCode(got), want)
	}
}

// stableGroup brings two dynamic members (v3, no KIP-394 round trip)
// through the initial delayed join and SyncGroup.
func stableGroup(t *testing.T, c *Coordinator, clock *clocktest.Fake) (leader, follower *kmsg.JoinGroupResponse) {
	t.Helper()
	a := joinAsync(c, joinReq("", "", 3, "range"))
	wait.For(t, waitTimeout, "first member parked", func() bool { return awaitingJoin(c, testGroup) == 1 })
	b := joinAsync(c, joinReq("", "", 3, "range"))
	wait.For(t, waitTimeout, "second member parked", func() bool { return awaitingJoin(c, testGroup) == 2 })
	if s := stateOf(c, testGroup); s != PreparingRebalance {
		t.Fatalf("state %v during the initial delay, want PreparingRebalance", s)
	}
	// group.initial.rebalance.delay.ms, once more because a member arrived
	// during the first delay.
	clock.Advance(3 * time.Second)
	if s := stateOf(c, testGroup); s != PreparingRebalance {
		t.Fatalf("state %v after one delay with a new member, want PreparingRebalance", s)
	}
	clock.Advance(3 * time.Second)
	ra, rb := recv(t, a), recv(t, b)
	wantCode(t, "join a", ra.ErrorCode, nil)
	wantCode(t, "join b", rb.ErrorCode, nil)
	leader, follower = ra, rb
	if rb.LeaderID == rb.MemberID {
		leader, follower = rb, ra
	}
	if len(leader.Members) != 2 || len(follower.Members) != 0 {
		t.Fatalf("leader got %d members, follower %d; want 2 and 0", len(leader.Members), len(follower.Members))
	}
	if leader.Generation != 1 || *leader.Protocol != "range" {
		t.Fatalf("generation %d protocol %v, want 1 range", leader.Generation, *leader.Protocol)
	}
	fs := syncAsync(c, follower.MemberID, "", 1, nil)
	wait.For(t, waitTimeout, "follower parked in sync", func() bool {
		return inspect(c, testGroup, func(g *group) bool { return g.members[follower.MemberID].awaitingSync != nil })
	})
	ls := syncAsync(c, leader.MemberID, "", 1, map[string]string{leader.MemberID: "A", follower.MemberID: "B"})
	if r := recv(t, ls); r.ErrorCode != 0 || string(r.MemberAssignment) != "A" {
		t.Fatalf("leader sync: %v %q", kerr.ErrorForCode(r.ErrorCode), r.MemberAssignment)
	}
	if r := recv(t, fs); r.ErrorCode != 0 || string(r.MemberAssignment) != "B" {
		t.Fatalf("follower sync: %v %q", kerr.ErrorForCode(r.ErrorCode), r.MemberAssignment)
	}
	if s := stateOf(c, testGroup); s != Stable {
		t.Fatalf("state %v, want Stable", s)
	}
	return leader, follower
}

func TestJoinSyncReachesStable(t *testing.T) {
	c, clock, store := testCoordinator(t, nil)
	leader, follower := stableGroup(t, c, clock)
	wantCode(t, "heartbeat", heartbeat(c, follower.MemberID, "", 1), nil)

	// The stored group metadata (key v2, value v3) holds both assignments.
	var last *kmsg.GroupMetadataValue
	for _, r := range store.records(t, PartitionFor(testGroup, 4)) {
		var k kmsg.GroupMetadataKey
		if k.ReadFrom(r.key) == nil && k.Version == 2 {
			last = new(kmsg.GroupMetadataValue)
			if err := last.ReadFrom(r.value); err != nil {
				t.Fatal(err)
			}
		}
	}
	if last == nil || last.Version != 3 || last.Generation != 1 || *last.Leader != leader.MemberID || len(last.Members) != 2 {
		t.Fatalf("stored group metadata %+v", last)
	}
}

func TestProtocolVote(t *testing.T) {
	c, clock, _ := testCoordinator(t, nil)
	// Both support range and roundrobin; two of three prefer roundrobin.
	// sticky is not supported by all, so it is no candidate.
	a := joinAsync(c, joinReq("", "", 3, "sticky", "range", "roundrobin"))
	wait.For(t, waitTimeout, "a parked", func() bool { return awaitingJoin(c, testGroup) == 1 })
	b := joinAsync(c, joinReq("", "", 3, "roundrobin", "range"))
	d := joinAsync(c, joinReq("", "", 3, "roundrobin", "range", "sticky"))
	wait.For(t, waitTimeout, "all parked", func() bool { return awaitingJoin(c, testGroup) == 3 })
	clock.Advance(6 * time.Second)
	for _, ch := range []<-chan *kmsg.JoinGroupResponse{a, b, d} {
		if r := recv(t, ch); *r.Protocol != "roundrobin" {
			t.Fatalf("protocol %q, want roundrobin", *r.Protocol)
		}
	}
	// A member that shares no protocol with the group is refused.
	r := recv(t, joinAsync(c, joinReq("", "", 3, "sticky")))
	wantCode(t, "inconsistent protocol", r.ErrorCode, kerr.InconsistentGroupProtocol)
	other := joinReq("", "", 3, "range")
	other.ProtocolType = "connect"
	wantCode(t, "other protocol type", recv(t, joinAsync(c, other)).ErrorCode, kerr.InconsistentGroupProtocol)
}

func TestInitialDelayExtendsWhileMembersArrive(t *testing.T) {
	c, clock, _ := testCoordinator(t, nil)
	a := joinAsync(c, joinReq("", "", 3, "range"))
	wait.For(t, waitTimeout, "a parked", func() bool { return awaitingJoin(c, testGroup) == 1 })
	clock.Advance(2 * time.Second)
	b := joinAsync(c, joinReq("", "", 3, "range"))
	wait.For(t, waitTimeout, "b parked", func() bool { return awaitingJoin(c, testGroup) == 2 })
	clock.Advance(1 * time.Second) // first delay over; b arrived meanwhile: another delay
	if s := stateOf(c, testGroup); s != PreparingRebalance {
		t.Fatalf("state %v after the first delay with a new member, want PreparingRebalance", s)
	}
	clock.Advance(3 * time.Second)
	if ra, rb := recv(t, a), recv(t, b); ra.Generation != 1 || rb.Generation != 1 {
		t.Fatalf("generations %d %d", ra.Generation, rb.Generation)
	}
}

func TestMemberIDRequired(t *testing.T) {
	c, clock, _ := testCoordinator(t, func(cfg *Config) { cfg.InitialRebalanceDelay = 0 })
	r := recv(t, joinAsync(c, joinReq("", "", 4, "range")))
	wantCode(t, "first join v4", r.ErrorCode, kerr.MemberIDRequired)
	if r.MemberID == "" {
		t.Fatal("MEMBER_ID_REQUIRED without a member id")
	}
	j := joinAsync(c, joinReq(r.MemberID, "", 4, "range"))
	wait.For(t, waitTimeout, "parked", func() bool { return awaitingJoin(c, testGroup) == 1 })
	clock.Advance(0)
	r2 := recv(t, j)
	wantCode(t, "second join", r2.ErrorCode, nil)
	if r2.MemberID != r.MemberID || r2.LeaderID != r.MemberID {
		t.Fatalf("member %q leader %q, want %q", r2.MemberID, r2.LeaderID, r.MemberID)
	}
	// A pending id that never rejoins expires after the session timeout.
	r3 := recv(t, joinAsync(c, joinReq("", "", 4, "range")))
	wantCode(t, "pending", r3.ErrorCode, kerr.MemberIDRequired)
	if n := inspect(c, testGroup, func(g *group) int { return len(g.pending) }); n != 1 {
		t.Fatalf("%d pending members, want 1", n)
	}
	clock.Advance(10 * time.Second)
	if n := inspect(c, testGroup, func(g *group) int { return len(g.pending) }); n != 0 {
		t.Fatalf("%d pending members after the session timeout, want 0", n)
	}
}

func TestBadInput(t *testing.T) {
	c, clock, _ := testCoordinator(t, func(cfg *Config) { cfg.MaxGroupSize = 2 })
	leader, follower := stableGroup(t, c, clock)

	short := joinReq("", "", 3, "range")
	short.SessionTimeoutMillis = 10
	wantCode(t, "session below group.min.session.timeout.ms", recv(t, joinAsync(c, short)).ErrorCode, kerr.InvalidSessionTimeout)
	long := joinReq("", "", 3, "range")
	long.SessionTimeoutMillis = 31 * 60 * 1000
	wantCode(t, "session above group.max.session.timeout.ms", recv(t, joinAsync(c, long)).ErrorCode, kerr.InvalidSessionTimeout)
	empty := joinReq("", "", 3, "range")
	empty.Group = ""
	wantCode(t, "empty group id", recv(t, joinAsync(c, empty)).ErrorCode, kerr.InvalidGroupID)
	wantCode(t, "third member", recv(t, joinAsync(c, joinReq("", "", 3, "range"))).ErrorCode, kerr.GroupMaxSizeReached)
	wantCode(t, "unknown member join", recv(t, joinAsync(c, joinReq("nobody", "", 3, "range"))).ErrorCode, kerr.UnknownMemberID)
	wantCode(t, "unknown member heartbeat", heartbeat(c, "nobody", "", 1), kerr.UnknownMemberID)
	wantCode(t, "old generation heartbeat", heartbeat(c, follower.MemberID, "", 0), kerr.IllegalGeneration)
	wantCode(t, "old generation sync", recv(t, syncAsync(c, follower.MemberID, "", 7, nil)).ErrorCode, kerr.IllegalGeneration)

	commit := kmsg.NewPtrOffsetCommitRequest()
	commit.Version = 8
	commit.Group, commit.MemberID, commit.Generation = testGroup, follower.MemberID, 9
	ct := kmsg.NewOffsetCommitRequestTopic()
	ct.Topic = "t"
	ct.Partitions = append(ct.Partitions, kmsg.OffsetCommitRequestTopicPartition{Partition: 0, Offset: 5})
	commit.Topics = append(commit.Topics, ct)
	wantCode(t, "commit with a wrong generation", c.OffsetCommit(context.Background(), commit).Topics[0].Partitions[0].ErrorCode, kerr.IllegalGeneration)

	// None of it disturbed the group.
	if s := stateOf(c, testGroup); s != Stable {
		t.Fatalf("state %v, want Stable", s)
	}
	wantCode(t, "leader heartbeat", heartbeat(c, leader.MemberID, "", 1), nil)

	// The leader rejoining starts a rebalance: heartbeats say so, commits
	// in CompletingRebalance are refused.
	lj := joinAsync(c, joinReq(leader.MemberID, "", 3, "range"))
	wait.For(t, waitTimeout, "rebalance", func() bool { return stateOf(c, testGroup) == PreparingRebalance })
	wantCode(t, "heartbeat during rebalance", heartbeat(c, follower.MemberID, "", 1), kerr.RebalanceInProgress)
	fj := joinAsync(c, joinReq(follower.MemberID, "", 3, "range"))
	recv(t, lj)
	if r := recv(t, fj); r.Generation != 2 {
		t.Fatalf("generation %d, want 2", r.Generation)
	}
	commit.Generation = 2
	wantCode(t, "commit while CompletingRebalance", c.OffsetCommit(context.Background(), commit).Topics[0].Partitions[0].ErrorCode, kerr.RebalanceInProgress)
}

func TestNotCoordinatorAndLoading(t *testing.T) {
	clock, store := newFakeClock(), newFakeLog()
	cfg := DefaultConfig()
	cfg.Clock, cfg.OffsetsTopicPartitions = clock, 4
	c := New(cfg, store)
	c.Start()
	defer c.Shutdown()
	wantCode(t, "not leader", recv(t, joinAsync(c, joinReq("", "", 3, "range"))).ErrorCode, kerr.NotCoordinator)
	// OffsetFetch v1 carries the error per partition, with metadata "" (Kafka's
	// NO_METADATA), never null.
	of := kmsg.NewPtrOffsetFetchRequest()
	of.Version, of.Group = 1, testGroup
	of.Topics = []kmsg.OffsetFetchRequestTopic{{Topic: "t", Partitions: []int32{0}}}
	p := c.OffsetFetch(of).Topics[0].Partitions[0]
	wantCode(t, "offset fetch v1, not leader", p.ErrorCode, kerr.NotCoordinator)
	if p.Metadata == nil || *p.Metadata != "" || p.Offset != -1 {
		t.Errorf("offset fetch v1, not leader: offset %d metadata %v, want -1 and \"\"", p.Offset, p.Metadata)
	}
	c.mu.Lock()
	c.partitions[PartitionFor(testGroup, 4)] = &ownedPartition{loading: true}
	c.mu.Unlock()
	wantCode(t, "loading", recv(t, joinAsync(c, joinReq("", "", 3, "range"))).ErrorCode, kerr.CoordinatorLoadInProgress)
	wantCode(t, "heartbeat while loading", heartbeat(c, "m", "", 1), nil)
	wantCode(t, "sync while loading", recv(t, syncAsync(c, "m", "", 1, nil)).ErrorCode, kerr.RebalanceInProgress)
}

func TestSessionExpiryRebalances(t *testing.T) {
	c, clock, _ := testCoordinator(t, nil)
	leader, follower := stableGroup(t, c, clock)
	// Only the leader heartbeats; the follower's session (10 s) runs out.
	clock.Advance(6 * time.Second)
	wantCode(t, "leader heartbeat", heartbeat(c, leader.MemberID, "", 1), nil)
	clock.Advance(5 * time.Second)
	if inspect(c, testGroup, func(g *group) bool { return g.has(follower.MemberID) }) {
		t.Fatal("the follower is still a member after its session timeout")
	}
	if s := stateOf(c, testGroup); s != PreparingRebalance {
		t.Fatalf("state %v, want PreparingRebalance", s)
	}
	wantCode(t, "leader heartbeat", heartbeat(c, leader.MemberID, "", 1), kerr.RebalanceInProgress)
	r := recv(t, joinAsync(c, joinReq(leader.MemberID, "", 3, "range")))
	if r.Generation != 2 || len(r.Members) != 1 {
		t.Fatalf("generation %d with %d members, want 2 with 1", r.Generation, len(r.Members))
	}
	// The last member leaving empties the group.
	leave := kmsg.NewPtrLeaveGroupRequest()
	leave.Version = 3
	leave.Group = testGroup
	leave.Members = []kmsg.LeaveGroupRequestMember{{MemberID: leader.MemberID}, {MemberID: "nobody"}}
	resp := c.LeaveGroup(leave)
	wantCode(t, "leave", resp.Members[0].ErrorCode, nil)
	wantCode(t, "leave unknown", resp.Members[1].ErrorCode, kerr.UnknownMemberID)
	clock.Advance(20 * time.Second)
	if s := stateOf(c, testGroup); s != Empty {
		t.Fatalf("state %v, want Empty", s)
	}
}

func TestStaticMemberRejoinWithoutRebalance(t *testing.T) {
	c, clock, _ := testCoordinator(t, nil)
	a := joinAsync(c, joinReq("", "instance-a", 5, "range"))
	wait.For(t, waitTimeout, "a parked", func() bool { return awaitingJoin(c, testGroup) == 1 })
	b := joinAsync(c, joinReq("", "instance-b", 5, "range"))
	wait.For(t, waitTimeout, "b parked", func() bool { return awaitingJoin(c, testGroup) == 2 })
	clock.Advance(6 * time.Second)
	ra, rb := recv(t, a), recv(t, b)
	leader, follower, fInstance := ra, rb, "instance-b"
	if rb.LeaderID == rb.MemberID {
		leader, follower, fInstance = rb, ra, "instance-a"
	}
	fs := syncAsync(c, follower.MemberID, fInstance, 1, nil)
	wait.For(t, waitTimeout, "follower parked", func() bool {
		return inspect(c, testGroup, func(g *group) bool { return g.members[follower.MemberID].awaitingSync != nil })
	})
	recv(t, syncAsync(c, leader.MemberID, "", 1, map[string]string{leader.MemberID: "L", follower.MemberID: "F"}))
	recv(t, fs)

	// The follower restarts: a new JoinGroup with its instance id and no
	// member id gets a new id, the same generation, and no rebalance.
	r := recv(t, joinAsync(c, joinReq("", fInstance, 5, "range")))
	wantCode(t, "static rejoin", r.ErrorCode, nil)
	if r.Generation != 1 || r.MemberID == follower.MemberID || r.LeaderID != leader.MemberID {
		t.Fatalf("static rejoin: generation %d member %q leader %q", r.Generation, r.MemberID, r.LeaderID)
	}
	if s := stateOf(c, testGroup); s != Stable {
		t.Fatalf("state %v, want Stable", s)
	}
	if s := recv(t, syncAsync(c, r.MemberID, fInstance, 1, nil)); string(s.MemberAssignment) != "F" {
		t.Fatalf("assignment after static rejoin %q, want F", s.MemberAssignment)
	}
	// The old incarnation is fenced everywhere.
	wantCode(t, "old id heartbeat", heartbeat(c, follower.MemberID, fInstance, 1), kerr.FencedInstanceID)
	wantCode(t, "old id join", recv(t, joinAsync(c, joinReq(follower.MemberID, fInstance, 5, "range"))).ErrorCode, kerr.FencedInstanceID)
	wantCode(t, "old id sync", recv(t, syncAsync(c, follower.MemberID, fInstance, 1, nil)).ErrorCode, kerr.FencedInstanceID)
	wantCode(t, "new id heartbeat", heartbeat(c, r.MemberID, fInstance, 1), nil)

	// A static member that misses its session is removed: a rebalance.
	clock.Advance(9 * time.Second)
	wantCode(t, "leader heartbeat", heartbeat(c, leader.MemberID, "", 1), nil)
	clock.Advance(2 * time.Second)
	if s := stateOf(c, testGroup); s != PreparingRebalance {
		t.Fatalf("state %v after the static member's session ran out, want PreparingRebalance", s)
	}
}

func commitReq(group, memberID string, generation int32, topic string, offsets map[int32]int64) *kmsg.OffsetCommitRequest {
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Version = 8
	req.Group, req.MemberID, req.Generation = group, memberID, generation
	ct := kmsg.NewOffsetCommitRequestTopic()
	ct.Topic = topic
	for p, o := range offsets {
		cp := kmsg.NewOffsetCommitRequestTopicPartition()
		cp.Partition, cp.Offset, cp.Metadata = p, o, kmsg.StringPtr("m")
		ct.Partitions = append(ct.Partitions, cp)
	}
	req.Topics = append(req.Topics, ct)
	return req
}

func fetchOffsets(c *Coordinator, group string) map[kafka.TopicPartition]int64 {
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Version = 7
	req.Group = group
	out := map[kafka.TopicPartition]int64{}
	for _, t := range c.OffsetFetch(req).Topics {
		for _, p := range t.Partitions {
			out[kafka.TopicPartition{Topic: t.Topic, Partition: p.Partition}] = p.Offset
		}
	}
	return out
}

func TestOffsetsSurviveFailover(t *testing.T) {
	c, clock, store := testCoordinator(t, nil)
	_, follower := stableGroup(t, c, clock)
	resp := c.OffsetCommit(context.Background(), commitReq(testGroup, follower.MemberID, 1, "t", map[int32]int64{0: 10, 1: 20}))
	wantCode(t, "commit", resp.Topics[0].Partitions[0].ErrorCode, nil)
	resp = c.OffsetCommit(context.Background(), commitReq(testGroup, follower.MemberID, 1, "t", map[int32]int64{0: 11}))
	wantCode(t, "commit", resp.Topics[0].Partitions[0].ErrorCode, nil)
	// A simple (generation -1) commit to another group creates it.
	resp = c.OffsetCommit(context.Background(), commitReq("simple", "", -1, "u", map[int32]int64{0: 7}))
	wantCode(t, "simple commit", resp.Topics[0].Partitions[0].ErrorCode, nil)

	// The records are Kafka's: offset commit key v1, value v3.
	for _, r := range store.records(t, PartitionFor(testGroup, 4)) {
		var k kmsg.OffsetCommitKey
		if k.ReadFrom(r.key) != nil || k.Version > 1 {
			continue
		}
		if k.Version != 1 || int16(r.value[0])<<8|int16(r.value[1]) != 3 {
			t.Fatalf("offset commit key v%d value v%d, want 1 and 3", k.Version, int16(r.value[0])<<8|int16(r.value[1]))
		}
	}

	// Another coordinator loads the same partitions: the group and every
	// acknowledged offset are back.
	c.OnResign(PartitionFor(testGroup, 4))
	wantCode(t, "unloaded", heartbeat(c, follower.MemberID, "", 1), kerr.NotCoordinator)
	c2 := startCoordinator(t, clock, store, nil)
	got := fetchOffsets(c2, testGroup)
	if got[kafka.TopicPartition{Topic: "t", Partition: 0}] != 11 || got[kafka.TopicPartition{Topic: "t", Partition: 1}] != 20 {
		t.Fatalf("offsets after failover %v", got)
	}
	if got := fetchOffsets(c2, "simple"); got[kafka.TopicPartition{Topic: "u", Partition: 0}] != 7 {
		t.Fatalf("simple group's offsets after failover %v", got)
	}
	if s := stateOf(c2, testGroup); s != Stable {
		t.Fatalf("loaded group state %v, want Stable", s)
	}
	wantCode(t, "heartbeat on the new coordinator", heartbeat(c2, follower.MemberID, "", 1), nil)

	// Deleting a live group is refused; an empty one leaves tombstones, and
	// a third coordinator finds nothing.
	del := c2.DeleteGroups([]string{testGroup, "simple", "missing"})
	if del[testGroup] != kerr.NonEmptyGroup || del["simple"] != nil || del["missing"] != kerr.GroupIDNotFound {
		t.Fatalf("DeleteGroups: %v", del)
	}
	c3 := startCoordinator(t, clock, store, nil)
	if got := fetchOffsets(c3, "simple"); len(got) != 0 {
		t.Fatalf("deleted group's offsets %v", got)
	}
}

func TestOffsetExpiry(t *testing.T) {
	c, clock, _ := testCoordinator(t, func(cfg *Config) { cfg.OffsetsRetention = time.Hour })
	c.OffsetCommit(context.Background(), commitReq("simple", "", -1, "u", map[int32]int64{0: 7}))
	_, follower := stableGroup(t, c, clock)
	c.OffsetCommit(context.Background(), commitReq(testGroup, follower.MemberID, 1, "t", map[int32]int64{0: 1}))
	// The check runs every offsets.retention.check.interval.ms (10 min).
	clock.Advance(50 * time.Minute)
	heartbeatAll := func() {
		for range 12 {
			inspect(c, testGroup, func(g *group) int {
				for _, m := range g.members {
					c.scheduleHeartbeatLocked(g, m, m.sessionTimeout)
				}
				return 0
			})
			clock.Advance(5 * time.Second)
		}
	}
	heartbeatAll()
	if got := fetchOffsets(c, "simple"); got[kafka.TopicPartition{Topic: "u", Partition: 0}] != 7 {
		t.Fatalf("offsets expired before the retention: %v", got)
	}
	clock.Advance(10 * time.Minute)
	if got := fetchOffsets(c, "simple"); len(got) != 0 {
		t.Fatalf("offsets not expired after the retention: %v", got)
	}
	if inspect(c, "simple", func(*group) bool { return true }) {
		t.Fatal("the empty group without offsets was not removed")
	}
	// A live group whose subscriptions cannot be read (this test's
	// metadata is not the consumer protocol's) keeps its offsets.
	if got := fetchOffsets(c, testGroup); got[kafka.TopicPartition{Topic: "t", Partition: 0}] != 1 {
		t.Fatalf("a live group's offsets expired: %v", got)
	}
}

// A group that only stores offsets is removed by the expiry check once it
// has none left, but not while its first commit waits for acks=all: the
// acknowledged commit must not be lost (Kafka counts pending commits as
// offsets).
func TestExpiryKeepsGroupWithCommitInFlight(t *testing.T) {
	c, _, store := testCoordinator(t, nil)
	store.mu.Lock()
	store.acks = make(chan struct{})
	store.mu.Unlock()
	resp := make(chan *kmsg.OffsetCommitResponse, 1)
	go func() {
		resp <- c.OffsetCommit(context.Background(), commitReq("simple", "", -1, "u", map[int32]int64{0: 7}))
	}()
	wait.For(t, waitTimeout, "commit appended", func() bool { return len(store.records(t, PartitionFor("simple", 4))) == 1 })
	c.ExpireOffsets()
	close(store.acks)
	wantCode(t, "commit", recv(t, resp).Topics[0].Partitions[0].ErrorCode, nil)
	if got := fetchOffsets(c, "simple"); got[kafka.TopicPartition{Topic: "u", Partition: 0}] != 7 {
		t.Fatalf("offsets after a commit acknowledged during the expiry check: %v", got)
	}
}

func TestFailedAssignmentStoreRebalances(t *testing.T) {
	c, clock, store := testCoordinator(t, func(cfg *Config) { cfg.InitialRebalanceDelay = 0 })
	j := joinAsync(c, joinReq("", "", 3, "range"))
	wait.For(t, waitTimeout, "parked", func() bool { return awaitingJoin(c, testGroup) == 1 })
	clock.Advance(0)
	r := recv(t, j)
	store.mu.Lock()
	store.awaitErr = kerr.NotEnoughReplicas
	store.mu.Unlock()
	s := recv(t, syncAsync(c, r.MemberID, "", r.Generation, map[string]string{r.MemberID: "x"}))
	wantCode(t, "sync with a failed store", s.ErrorCode, kerr.CoordinatorNotAvailable)
	if st := stateOf(c, testGroup); st != PreparingRebalance {
		t.Fatalf("state %v, want PreparingRebalance", st)
	}
}

func TestRebalanceTimeoutDropsMembersThatDoNotRejoin(t *testing.T) {
	c, clock, _ := testCoordinator(t, nil)
	leader, follower := stableGroup(t, c, clock)
	lj := joinAsync(c, joinReq(leader.MemberID, "", 3, "range"))
	wait.For(t, waitTimeout, "rebalance", func() bool { return stateOf(c, testGroup) == PreparingRebalance })
	// The follower heartbeats (and is told to rejoin) but never does; the
	// join phase ends at the rebalance timeout (20 s) without it.
	for range 3 {
		clock.Advance(6 * time.Second)
		wantCode(t, "follower heartbeat", heartbeat(c, follower.MemberID, "", 1), kerr.RebalanceInProgress)
	}
	clock.Advance(3 * time.Second)
	r := recv(t, lj)
	if r.Generation != 2 || len(r.Members) != 1 || r.Members[0].MemberID != leader.MemberID {
		t.Fatalf("after the rebalance timeout: generation %d members %v", r.Generation, r.Members)
	}
	wantCode(t, "dropped follower heartbeat", heartbeat(c, follower.MemberID, "", 2), kerr.UnknownMemberID)
}

func TestStaticLeaderRejoinWithoutRebalance(t *testing.T) {
	c, clock, _ := testCoordinator(t, func(cfg *Config) { cfg.InitialRebalanceDelay = 0 })
	j := joinAsync(c, joinReq("", "leader-instance", 5, "range"))
	wait.For(t, waitTimeout, "parked", func() bool { return awaitingJoin(c, testGroup) == 1 })
	clock.Advance(0)
	first := recv(t, j)
	recv(t, syncAsync(c, first.MemberID, "leader-instance", 1, map[string]string{first.MemberID: "all"}))

	// The leader restarts: same generation, its old assignment, and the old
	// leader id in the response so it does not compute an assignment that a
	// Stable group would never send.
	r := recv(t, joinAsync(c, joinReq("", "leader-instance", 5, "range")))
	wantCode(t, "static leader rejoin", r.ErrorCode, nil)
	if r.Generation != 1 || r.LeaderID != first.MemberID || len(r.Members) != 0 {
		t.Fatalf("static leader rejoin: generation %d leader %q members %d", r.Generation, r.LeaderID, len(r.Members))
	}
	if s := stateOf(c, testGroup); s != Stable {
		t.Fatalf("state %v, want Stable", s)
	}
	if s := recv(t, syncAsync(c, r.MemberID, "leader-instance", 1, nil)); string(s.MemberAssignment) != "all" {
		t.Fatalf("assignment %q, want all", s.MemberAssignment)
	}
	if leader := inspect(c, testGroup, func(g *group) string { return g.leaderID }); leader != r.MemberID {
		t.Fatalf("group leader %q, want the new member id %q", leader, r.MemberID)
	}
}

// TestNewMemberID: the client id, a dash, and a version-4 UUID of the RFC 4122 variant, as
// Kafka's UUID.randomUUID() gives.
func TestNewMemberID(t *testing.T) {
	re := regexp.MustCompile(`^consumer-g-1-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	for range 100 {
		if id := newMemberID("consumer-g-1"); !re.MatchString(id) {
			t.Fatalf("member id %q is not the client id and a version-4 UUID", id)
		}
	}
}
