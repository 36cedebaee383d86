package coordinator

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/internal/wait"
)

// fakeTopics is a TopicSource of fixed topics, topic i with id {i+1}.
type fakeTopics map[string]int32

func (f fakeTopics) id(name string) topicID {
	for i, n := range slices.Sorted(mapKeys(f)) {
		if n == name {
			return topicID{byte(i + 1)}
		}
	}
	return topicID{}
}

func (f fakeTopics) Topic(name string) (topicID, int32, bool) {
	n, ok := f[name]
	return f.id(name), n, ok
}

func (f fakeTopics) TopicName(id topicID) (string, bool) {
	for name := range f {
		if f.id(name) == id {
			return name, true
		}
	}
	return "", false
}

func (f fakeTopics) TopicNames() []string { return slices.Sorted(mapKeys(f)) }

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func consumerCoordinator(t *testing.T, topics fakeTopics) (*Coordinator, interface{ Advance(time.Duration) }) {
	t.Helper()
	c, clock, _ := testCoordinator(t, func(cfg *Config) { cfg.Topics = topics })
	return c, clock
}

// hb is a heartbeat: join (epoch 0) with names when subscribe is set, else
// a heartbeat at epoch reporting owned (nil: not reported).
type hb struct {
	group, member string
	epoch         int32
	instance      string
	names         []string
	owned         assignment
	full          bool // a full request: subscription and owned partitions
	assignor      string
	regex         string
	rebalanceMs   int32
}

func (h hb) request() *kmsg.ConsumerGroupHeartbeatRequest {
	req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	req.Group, req.MemberID, req.MemberEpoch = h.group, h.member, h.epoch
	if req.Group == "" {
		req.Group = "g"
	}
	if h.instance != "" {
		req.InstanceID = kmsg.StringPtr(h.instance)
	}
	if h.epoch == 0 || h.full {
		req.RebalanceTimeoutMillis = 30_000
		if h.rebalanceMs != 0 {
			req.RebalanceTimeoutMillis = h.rebalanceMs
		}
		req.SubscribedTopicNames = h.names
		if req.SubscribedTopicNames == nil {
			req.SubscribedTopicNames = []string{}
		}
		req.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	}
	if h.regex != "" {
		req.SubscribedTopicRegex = kmsg.StringPtr(h.regex)
	}
	if h.assignor != "" {
		req.ServerAssignor = kmsg.StringPtr(h.assignor)
	}
	if h.owned != nil {
		req.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
		for t, ps := range h.owned {
			req.Topics = append(req.Topics, kmsg.ConsumerGroupHeartbeatRequestTopic{TopicID: t, Partitions: ps})
		}
	}
	return req
}

func send(t *testing.T, c *Coordinator, h hb) *kmsg.ConsumerGroupHeartbeatResponse {
	t.Helper()
	return c.ConsumerGroupHeartbeat(h.request(), 1, "client", "/127.0.0.1")
}

func mustSend(t *testing.T, c *Coordinator, h hb) *kmsg.ConsumerGroupHeartbeatResponse {
	t.Helper()
	resp := send(t, c, h)
	if resp.ErrorCode != 0 {
		t.Fatalf("heartbeat %+v: %v %s", h, kerr.ErrorForCode(resp.ErrorCode), deref(resp.ErrorMessage))
	}
	return resp
}

// assigned is a heartbeat response's assignment, nil when it has none.
func assigned(resp *kmsg.ConsumerGroupHeartbeatResponse) assignment {
	if resp.Assignment == nil {
		return nil
	}
	a := assignment{}
	for _, t := range resp.Assignment.Topics {
		for _, p := range t.Partitions {
			a.add(t.TopicID, p)
		}
	}
	return a
}

func parts(t topicID, ps ...int32) assignment { return assignment{t: ps} }

// checkNoPartitionTwice fails if two members of group hold (are assigned or
// are revoking) the same partition.
func checkNoPartitionTwice(t *testing.T, c *Coordinator, groupID string) {
	t.Helper()
	inspect(c, groupID, func(g *group) bool {
		seen := map[string]string{}
		for id, m := range g.modern.members {
			for _, a := range []assignment{m.assigned, m.pendingRevocation} {
				for tid, ps := range a {
					for _, p := range ps {
						k := fmt.Sprint(tid[0], "-", p)
						if other, ok := seen[k]; ok {
							t.Fatalf("partition %s held by %s and %s", k, other, id)
						}
						seen[k] = id
					}
				}
			}
		}
		return true
	})
}

// TestConsumerGroupReconciliation: a second member joining waits for the
// partitions the first must revoke, the first keeps consuming the rest, and
// the group converges at the new epoch with no partition owned twice.
func TestConsumerGroupReconciliation(t *testing.T) {
	topics := fakeTopics{"t": 6}
	c, _ := consumerCoordinator(t, topics)
	tid := topics.id("t")

	a := mustSend(t, c, hb{member: "a", names: []string{"t"}})
	if a.MemberEpoch != 1 || !assigned(a).equal(parts(tid, 0, 1, 2, 3, 4, 5)) || a.HeartbeatIntervalMillis != 5000 {
		t.Fatalf("first member: epoch %d, assignment %v, interval %d", a.MemberEpoch, assigned(a), a.HeartbeatIntervalMillis)
	}
	b := mustSend(t, c, hb{member: "b", names: []string{"t"}})
	if b.MemberEpoch != 2 || assigned(b).size() != 0 {
		t.Fatalf("second member: epoch %d, assignment %v; want epoch 2 and nothing while a holds them", b.MemberEpoch, assigned(b))
	}
	checkNoPartitionTwice(t, c, "g")
	if s := describeState(t, c); s != "Reconciling" {
		t.Fatalf("state %s, want Reconciling", s)
	}

	// a still owns all six: it must revoke three first, at its epoch.
	a = mustSend(t, c, hb{member: "a", epoch: 1, owned: parts(tid, 0, 1, 2, 3, 4, 5)})
	kept := assigned(a)
	if a.MemberEpoch != 1 || kept.size() != 3 {
		t.Fatalf("revoking member: epoch %d, assignment %v; want epoch 1 and three partitions", a.MemberEpoch, kept)
	}
	b = mustSend(t, c, hb{member: "b", epoch: 2, owned: assignment{}})
	if assigned(b) != nil && assigned(b).size() != 0 {
		t.Fatalf("b got %v before a revoked", assigned(b))
	}
	checkNoPartitionTwice(t, c, "g")
	// a acknowledges the revocation by owning only what it keeps.
	a = mustSend(t, c, hb{member: "a", epoch: 1, owned: kept})
	if a.MemberEpoch != 2 {
		t.Fatalf("a after revoking: epoch %d, want 2", a.MemberEpoch)
	}
	b = mustSend(t, c, hb{member: "b", epoch: 2, owned: assignment{}})
	got := assigned(b)
	if got.size() != 3 || got.overlaps(kept) {
		t.Fatalf("b's assignment %v, want the three a revoked (a keeps %v)", got, kept)
	}
	checkNoPartitionTwice(t, c, "g")
	if s := describeState(t, c); s != "Stable" {
		t.Fatalf("state %s, want Stable", s)
	}
	// A heartbeat with nothing new carries no assignment.
	if resp := mustSend(t, c, hb{member: "b", epoch: 2, owned: got}); resp.Assignment != nil {
		t.Fatalf("an unchanged heartbeat carried %v", assigned(resp))
	}

	d := c.ConsumerGroupDescribe([]string{"g"})[0]
	if d.ErrorCode != 0 || d.Epoch != 2 || d.AssignmentEpoch != 2 || d.AssignorName != "uniform" || len(d.Members) != 2 ||
		len(d.Members[0].Assignment.TopicPartitions) != 1 || d.Members[0].Assignment.TopicPartitions[0].Topic != "t" {
		t.Fatalf("describe: %+v", d)
	}
	groups, err := c.ListGroups(nil)
	if err != nil || len(groups) != 1 || groups[0].ProtocolType != "consumer" || groups[0].GroupState != "Stable" {
		t.Fatalf("ListGroups: %+v, %v", groups, err)
	}
}

func describeState(t *testing.T, c *Coordinator) string {
	t.Helper()
	return c.ConsumerGroupDescribe([]string{"g"})[0].State
}

// TestConsumerGroupFencing: a member that misses its session, or does not
// revoke within its rebalance timeout, is fenced and its partitions go to
// the others; a member that leaves (-1) is removed at once.
func TestConsumerGroupFencing(t *testing.T) {
	topics := fakeTopics{"t": 4}
	c, clock := consumerCoordinator(t, topics)
	tid := topics.id("t")
	mustSend(t, c, hb{member: "a", names: []string{"t"}, rebalanceMs: 10_000})
	mustSend(t, c, hb{member: "b", names: []string{"t"}})
	// a is asked to revoke two and does not: fenced after 10 s.
	a := mustSend(t, c, hb{member: "a", epoch: 1, owned: parts(tid, 0, 1, 2, 3)})
	if assigned(a).size() != 2 {
		t.Fatalf("a keeps %v, want two", assigned(a))
	}
	clock.Advance(9 * time.Second)
	mustSend(t, c, hb{member: "b", epoch: 2, owned: assignment{}})
	clock.Advance(2 * time.Second)
	if resp := send(t, c, hb{member: "a", epoch: 1, owned: parts(tid, 0, 1, 2, 3)}); resp.ErrorCode != kerr.UnknownMemberID.Code {
		t.Fatalf("a after its rebalance timeout: %v, want UNKNOWN_MEMBER_ID", kerr.ErrorForCode(resp.ErrorCode))
	}
	b := mustSend(t, c, hb{member: "b", epoch: 2, owned: assignment{}})
	if b.MemberEpoch != 3 || assigned(b).size() != 4 {
		t.Fatalf("b after a was fenced: epoch %d, %v; want epoch 3 and all four", b.MemberEpoch, assigned(b))
	}

	// c joins, then misses its session (45 s) while b heartbeats.
	mustSend(t, c, hb{member: "c", names: []string{"t"}})
	for range 10 {
		clock.Advance(5 * time.Second)
		b = mustSend(t, c, hb{member: "b", epoch: b.MemberEpoch, owned: assigned(b)})
		if assigned(b) == nil {
			b.Assignment = &kmsg.ConsumerGroupHeartbeatResponseAssignment{}
		}
	}
	if resp := send(t, c, hb{member: "c", epoch: 4}); resp.ErrorCode != kerr.UnknownMemberID.Code {
		t.Fatalf("c after its session: %v, want UNKNOWN_MEMBER_ID", kerr.ErrorForCode(resp.ErrorCode))
	}

	leave := mustSend(t, c, hb{member: "b", epoch: -1})
	if leave.MemberEpoch != -1 || deref(leave.MemberID) != "b" {
		t.Fatalf("leave: %+v", leave)
	}
	if s := describeState(t, c); s != "Empty" {
		t.Fatalf("state after the last member left: %s", s)
	}
}

// TestConsumerGroupStaticMember: a static member that leaves with epoch -2
// keeps its partitions for its instance id, and a new member id with that
// instance takes them at once; while the old one still holds the instance,
// another join is UNRELEASED_INSTANCE_ID.
func TestConsumerGroupStaticMember(t *testing.T) {
	topics := fakeTopics{"t": 3}
	c, _ := consumerCoordinator(t, topics)
	tid := topics.id("t")
	first := mustSend(t, c, hb{member: "m1", instance: "i", names: []string{"t"}})
	mustSend(t, c, hb{member: "other", names: []string{"t"}})
	mine := assigned(mustSend(t, c, hb{member: "m1", instance: "i", epoch: first.MemberEpoch, owned: parts(tid, 0, 1, 2)}))
	if resp := send(t, c, hb{member: "m2", instance: "i", names: []string{"t"}}); resp.ErrorCode != kerr.UnreleasedInstanceID.Code {
		t.Fatalf("a second member with the instance id: %v, want UNRELEASED_INSTANCE_ID", kerr.ErrorForCode(resp.ErrorCode))
	}
	if resp := mustSend(t, c, hb{member: "m1", instance: "i", epoch: -2}); resp.MemberEpoch != -2 {
		t.Fatalf("static leave: epoch %d", resp.MemberEpoch)
	}
	back := mustSend(t, c, hb{member: "m2", instance: "i", names: []string{"t"}})
	if !assigned(back).equal(mine) {
		t.Fatalf("the instance's new member got %v, want its partitions %v", assigned(back), mine)
	}
	if resp := send(t, c, hb{member: "m1", instance: "i", epoch: 1}); resp.ErrorCode != kerr.FencedInstanceID.Code {
		t.Fatalf("the replaced member: %v, want FENCED_INSTANCE_ID", kerr.ErrorForCode(resp.ErrorCode))
	}
	checkNoPartitionTwice(t, c, "g")
}

// TestConsumerGroupHeartbeatErrors: every error of the API, from bad input
// and bad state, with Kafka 4.0's code.
func TestConsumerGroupHeartbeatErrors(t *testing.T) {
	topics := fakeTopics{"t": 2}
	c, _, _ := testCoordinator(t, func(cfg *Config) { cfg.Topics = topics; cfg.ConsumerMaxSize = 2 })
	mustSend(t, c, hb{member: "a", names: []string{"t"}})
	mustSend(t, c, hb{member: "s", instance: "i", names: []string{"t"}})
	mustSend(t, c, hb{group: "h", member: "a", names: []string{"t"}}) // not full
	noSubscription := hb{member: "x"}.request()
	noSubscription.SubscribedTopicNames = nil
	for _, tc := range []struct {
		name    string
		req     *kmsg.ConsumerGroupHeartbeatRequest
		version int16
		want    *kerr.Error
		msg     string
	}{
		{"empty member id", hb{member: " "}.request(), 1, kerr.InvalidRequest, "MemberId can't be empty."},
		{"empty group", hb{group: " ", member: "a"}.request(), 1, kerr.InvalidRequest, "GroupId can't be empty."},
		{"no rebalance timeout", func() *kmsg.ConsumerGroupHeartbeatRequest {
			r := hb{member: "x"}.request()
			r.RebalanceTimeoutMillis = -1
			return r
		}(), 1, kerr.InvalidRequest, "RebalanceTimeoutMs must be provided in first request."},
		{"owned partitions on join", hb{member: "x", owned: parts(topics.id("t"), 0)}.request(), 1, kerr.InvalidRequest, "TopicPartitions must be empty when (re-)joining."},
		{"no subscription", noSubscription, 1, kerr.InvalidRequest, "Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining."},
		{"static leave without instance", hb{member: "a", epoch: -2}.request(), 1, kerr.InvalidRequest, "InstanceId can't be null."},
		{"bad epoch", hb{member: "a", epoch: -3}.request(), 1, kerr.InvalidRequest, "MemberEpoch is invalid."},
		{"unknown assignor", hb{member: "x", assignor: "sticky"}.request(), 1, kerr.UnsupportedAssignor, "ServerAssignor sticky is not supported. Supported assignors: uniform, range."},
		{"bad regex", hb{member: "x", regex: "t("}.request(), 1, kerr.InvalidRegularExpression, ""},
		{"no such group", hb{group: "nope", member: "a", epoch: 3}.request(), 1, kerr.GroupIDNotFound, "Consumer group nope not found."},
		{"unknown member", hb{group: "h", member: "zz", epoch: 1}.request(), 1, kerr.UnknownMemberID, "Member zz is not a member of group h."},
		{"epoch from the future", hb{member: "a", epoch: 9}.request(), 1, kerr.FencedMemberEpoch, ""},
		{"unknown instance", hb{member: "a", instance: "j", epoch: 1}.request(), 1, kerr.UnknownMemberID, "Instance id j is unknown."},
		{"instance of another member", hb{member: "a", instance: "i", epoch: 2}.request(), 1, kerr.FencedInstanceID, ""},
		{"group full", hb{member: "third", names: []string{"t"}}.request(), 1, kerr.GroupMaxSizeReached, "The consumer group has reached its maximum capacity of 2 members."},
	} {
		resp := c.ConsumerGroupHeartbeat(tc.req, tc.version, "client", "/127.0.0.1")
		if resp.ErrorCode != tc.want.Code || tc.msg != "" && deref(resp.ErrorMessage) != tc.msg || !strings.HasSuffix(deref(resp.ErrorMessage), ".") {
			t.Errorf("%s: %v %q, want %s %q", tc.name, kerr.ErrorForCode(resp.ErrorCode), deref(resp.ErrorMessage), tc.want.Message, tc.msg)
		}
		if resp.ErrorCode != 0 && (resp.MemberEpoch != -1 || resp.HeartbeatIntervalMillis != 0 || resp.Assignment != nil) {
			t.Errorf("%s: error response %+v", tc.name, resp)
		}
	}

	// A classic group with members is not a consumer group.
	join := kmsg.NewPtrJoinGroupRequest()
	join.Group, join.ProtocolType, join.SessionTimeoutMillis, join.RebalanceTimeoutMillis = "classic", "consumer", 10_000, 10_000
	join.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range"}}
	go c.JoinGroup(t.Context(), join, "client", "/127.0.0.1")
	wait.For(t, waitTimeout, "the classic group", func() bool { return stateOf(c, "classic") == PreparingRebalance })
	if resp := send(t, c, hb{group: "classic", member: "x", names: []string{"t"}}); resp.ErrorCode != kerr.GroupIDNotFound.Code ||
		deref(resp.ErrorMessage) != "Group classic is not a consumer group." {
		t.Fatalf("heartbeat into a classic group: %v %q", kerr.ErrorForCode(resp.ErrorCode), deref(resp.ErrorMessage))
	}
	// And a classic join into a consumer group with members is refused.
	join.Group = "g"
	if resp := c.JoinGroup(t.Context(), join, "client", "/127.0.0.1"); resp.ErrorCode != kerr.InconsistentGroupProtocol.Code {
		t.Fatalf("classic join into a consumer group: %v", kerr.ErrorForCode(resp.ErrorCode))
	}
}

// TestConsumerGroupOffsetCommit: a member commits at its epoch with
// OffsetCommit v9; an older epoch is STALE_MEMBER_EPOCH, a stranger
// UNKNOWN_MEMBER_ID, and v8 (the classic protocol's) UNSUPPORTED_VERSION.
func TestConsumerGroupOffsetCommit(t *testing.T) {
	topics := fakeTopics{"t": 1}
	c, _ := consumerCoordinator(t, topics)
	mustSend(t, c, hb{member: "a", names: []string{"t"}})
	commit := func(version int16, member string, epoch int32) int16 {
		req := kmsg.NewPtrOffsetCommitRequest()
		req.Version, req.Group, req.MemberID, req.Generation = version, "g", member, epoch
		req.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: "t", Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0, Offset: 5}}}}
		return c.OffsetCommit(t.Context(), req).Topics[0].Partitions[0].ErrorCode
	}
	for _, tc := range []struct {
		version int16
		member  string
		epoch   int32
		want    int16
	}{
		{9, "a", 1, 0},
		{9, "a", 0, kerr.StaleMemberEpoch.Code},
		{9, "b", 1, kerr.UnknownMemberID.Code},
		{8, "a", 1, kerr.UnsupportedVersion.Code},
	} {
		if got := commit(tc.version, tc.member, tc.epoch); got != tc.want {
			t.Errorf("OffsetCommit v%d from %s at epoch %d: %v, want %v", tc.version, tc.member, tc.epoch, kerr.ErrorForCode(got), kerr.ErrorForCode(tc.want))
		}
	}
}

// TestConsumerGroupDescribeErrors: an empty group id is INVALID_GROUP_ID,
// an unknown group and a classic one GROUP_ID_NOT_FOUND with Kafka 4.0's
// messages, each in its own entry beside the groups that are described.
func TestConsumerGroupDescribeErrors(t *testing.T) {
	c, _ := consumerCoordinator(t, fakeTopics{"t": 1})
	mustSend(t, c, hb{member: "a", names: []string{"t"}})
	offsets := kmsg.NewPtrOffsetCommitRequest()
	offsets.Group, offsets.Generation = "classic", -1
	offsets.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: "t", Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0, Offset: 1}}}}
	c.OffsetCommit(t.Context(), offsets)
	got := c.ConsumerGroupDescribe([]string{"", "nope", "classic", "g"})
	want := []struct {
		code int16
		msg  string
	}{
		{kerr.InvalidGroupID.Code, ""},
		{kerr.GroupIDNotFound.Code, "Group nope not found."},
		{kerr.GroupIDNotFound.Code, "Group classic is not a consumer group."},
		{0, ""},
	}
	for i, w := range want {
		if got[i].ErrorCode != w.code || deref(got[i].ErrorMessage) != w.msg {
			t.Errorf("group %q: %v %q, want %v %q", got[i].Group, kerr.ErrorForCode(got[i].ErrorCode), deref(got[i].ErrorMessage), kerr.ErrorForCode(w.code), w.msg)
		}
	}
	if got[3].State != "Stable" || len(got[3].Members) != 1 {
		t.Errorf("described group: %+v", got[3])
	}
}
