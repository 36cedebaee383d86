package broker_test

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/internal/testcluster"
)

func wantErr(t *testing.T, what string, code int16, want *kerr.Error) {
	t.Helper()
	if code != want.Code {
		t.Errorf("%s: %v, want %v", what, kerr.ErrorForCode(code), want)
	}
}

func rawJoin(group, memberID string, session int32, protocolType string, protocols ...string) *kmsg.JoinGroupRequest {
	req := kmsg.NewPtrJoinGroupRequest()
	req.Group, req.MemberID, req.ProtocolType = group, memberID, protocolType
	req.SessionTimeoutMillis, req.RebalanceTimeoutMillis = session, 10000
	for _, p := range protocols {
		req.Protocols = append(req.Protocols, kmsg.JoinGroupRequestProtocol{Name: p})
	}
	return req
}

// Each bad request gets Kafka's error and leaves a live kgo member alone:
// its generation and partitions do not change.
func TestGroupBadInput(t *testing.T) {
	props := map[string]string{"group.max.size": "1"}
	for k, v := range groupProps {
		props[k] = v
	}
	c := testcluster.Start(t, testcluster.Options{Properties: props})
	const topic, group = "bad-input", "bad-input-group"
	createGroupTopic(t, c, topic, 2)
	seen := &consumed{seen: map[string]map[int64]bool{}}
	m := startMember(t, c, "m", group, topic, seen, kgo.Balancers(kgo.RangeBalancer()))
	waitExactlyOneOwner(t, c, 2, m)
	memberID, gen := m.cl.GroupMetadata()
	addr := c.Addr(1)

	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.CoordinatorKey, fc.CoordinatorType = group, 7
	wantErr(t, "FindCoordinator of an unknown key type", raw(t, addr, fc, 3).(*kmsg.FindCoordinatorResponse).ErrorCode, kerr.InvalidRequest)

	wantErr(t, "JoinGroup with an empty group id", raw(t, addr, rawJoin("", "", 10000, "consumer", "range"), 5).(*kmsg.JoinGroupResponse).ErrorCode, kerr.InvalidGroupID)
	wantErr(t, "JoinGroup with a 1 ms session", raw(t, addr, rawJoin(group, "", 1, "consumer", "range"), 5).(*kmsg.JoinGroupResponse).ErrorCode, kerr.InvalidSessionTimeout)
	wantErr(t, "JoinGroup with a 2-hour session", raw(t, addr, rawJoin(group, "", 7200000, "consumer", "range"), 5).(*kmsg.JoinGroupResponse).ErrorCode, kerr.InvalidSessionTimeout)
	wantErr(t, "JoinGroup past group.max.size", raw(t, addr, rawJoin(group, "", 10000, "consumer", "range"), 3).(*kmsg.JoinGroupResponse).ErrorCode, kerr.GroupMaxSizeReached)
	wantErr(t, "JoinGroup with an unknown member id", raw(t, addr, rawJoin(group, "nobody", 10000, "consumer", "range"), 5).(*kmsg.JoinGroupResponse).ErrorCode, kerr.UnknownMemberID)
	// The inconsistent protocol checks come after the size check: a fresh
	// group of one shows them.
	other := "bad-input-other"
	first := raw(t, addr, rawJoin(other, "", 10000, "consumer", "range"), 3).(*kmsg.JoinGroupResponse)
	if first.ErrorCode != 0 {
		t.Fatalf("first member of %s: %v", other, kerr.ErrorForCode(first.ErrorCode))
	}
	wantErr(t, "JoinGroup of a known member with another protocol type", raw(t, addr, rawJoin(other, first.MemberID, 10000, "connect", "range"), 5).(*kmsg.JoinGroupResponse).ErrorCode, kerr.InconsistentGroupProtocol)

	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Group, hb.MemberID, hb.Generation = group, "nobody", gen
	wantErr(t, "Heartbeat of an unknown member", raw(t, addr, hb, 4).(*kmsg.HeartbeatResponse).ErrorCode, kerr.UnknownMemberID)
	hb.MemberID, hb.Generation = memberID, gen+5
	wantErr(t, "Heartbeat with a wrong generation", raw(t, addr, hb, 4).(*kmsg.HeartbeatResponse).ErrorCode, kerr.IllegalGeneration)
	sg := kmsg.NewPtrSyncGroupRequest()
	sg.Group, sg.MemberID, sg.Generation = group, memberID, gen-1
	wantErr(t, "SyncGroup v5 without its protocol type and name", raw(t, addr, sg, 5).(*kmsg.SyncGroupResponse).ErrorCode, kerr.InconsistentGroupProtocol)
	sg.ProtocolType, sg.Protocol = kmsg.StringPtr("consumer"), kmsg.StringPtr("range")
	wantErr(t, "SyncGroup with an old generation", raw(t, addr, sg, 5).(*kmsg.SyncGroupResponse).ErrorCode, kerr.IllegalGeneration)
	sg.Generation, sg.Protocol = gen, kmsg.StringPtr("roundrobin")
	wantErr(t, "SyncGroup naming another protocol", raw(t, addr, sg, 5).(*kmsg.SyncGroupResponse).ErrorCode, kerr.InconsistentGroupProtocol)

	oc := kmsg.NewPtrOffsetCommitRequest()
	oc.Group, oc.MemberID, oc.Generation = group, memberID, gen+1
	oc.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: topic, Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0, Offset: 1}}},
		{Topic: "no-such-topic", Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0, Offset: 1}}}}
	ocr := raw(t, addr, oc, 8).(*kmsg.OffsetCommitResponse)
	wantErr(t, "OffsetCommit with a wrong generation", ocr.Topics[0].Partitions[0].ErrorCode, kerr.IllegalGeneration)
	wantErr(t, "OffsetCommit to an unknown topic", ocr.Topics[1].Partitions[0].ErrorCode, kerr.UnknownTopicOrPartition)

	od := kmsg.NewPtrOffsetDeleteRequest()
	od.Group = group
	od.Topics = []kmsg.OffsetDeleteRequestTopic{{Topic: topic, Partitions: []kmsg.OffsetDeleteRequestTopicPartition{{Partition: 0}}}}
	wantErr(t, "OffsetDelete of a subscribed topic", raw(t, addr, od, 0).(*kmsg.OffsetDeleteResponse).Topics[0].Partitions[0].ErrorCode, kerr.GroupSubscribedToTopic)
	dg := kmsg.NewPtrDeleteGroupsRequest()
	dg.Groups = []string{group, "never-existed"}
	dgr := raw(t, addr, dg, 2).(*kmsg.DeleteGroupsResponse)
	wantErr(t, "DeleteGroups of a live group", dgr.Groups[0].ErrorCode, kerr.NonEmptyGroup)
	wantErr(t, "DeleteGroups of an unknown group", dgr.Groups[1].ErrorCode, kerr.GroupIDNotFound)

	// DescribeGroups shows the member as Kafka does, client host included.
	dgq := kmsg.NewPtrDescribeGroupsRequest()
	dgq.Groups = []string{group}
	d := raw(t, addr, dgq, 5).(*kmsg.DescribeGroupsResponse).Groups[0]
	if d.State != "Stable" || d.Protocol != "range" || len(d.Members) != 1 || d.Members[0].MemberID != memberID ||
		d.Members[0].ClientID != "m" || d.Members[0].ClientHost != "/127.0.0.1" || len(d.Members[0].MemberAssignment) == 0 {
		t.Fatalf("DescribeGroups: %+v", d)
	}

	// None of it disturbed the member.
	if id, g := m.cl.GroupMetadata(); id != memberID || g != gen {
		t.Fatalf("member after bad input: %q generation %d, before %q generation %d", id, g, memberID, gen)
	}
	waitExactlyOneOwner(t, c, 2, m)
}

// waitForCoordinator waits until the group's coordinator is elected and
// loaded: a heartbeat of an unknown member gets UNKNOWN_MEMBER_ID.
func waitForCoordinator(t *testing.T, c *testcluster.Cluster, group string) {
	t.Helper()
	c.WaitFor("the coordinator of "+group, func() bool {
		id := findCoordinator(t, c.Addr(1), group)
		if id < 0 {
			return false
		}
		hb := kmsg.NewPtrHeartbeatRequest()
		hb.Group, hb.MemberID = group, "nobody"
		return raw(t, c.Addr(id), hb, 4).(*kmsg.HeartbeatResponse).ErrorCode == kerr.UnknownMemberID.Code
	})
}

// A member of a group that is rebalancing is told REBALANCE_IN_PROGRESS by
// its heartbeat, and its commit in CompletingRebalance is refused the same
// way.
func TestGroupRebalanceInProgress(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Properties: groupProps})
	addr := c.Addr(1)
	const group = "rip-group"
	waitForCoordinator(t, c, group)
	x := raw(t, addr, rawJoin(group, "", 10000, "consumer", "range"), 3).(*kmsg.JoinGroupResponse)
	sg := kmsg.NewPtrSyncGroupRequest()
	sg.Group, sg.MemberID, sg.Generation = group, x.MemberID, x.Generation
	if code := raw(t, addr, sg, 3).(*kmsg.SyncGroupResponse).ErrorCode; code != 0 {
		t.Fatalf("sync: %v", kerr.ErrorForCode(code))
	}
	// A second member parks in JoinGroup until x rejoins.
	yDone := make(chan *kmsg.JoinGroupResponse, 1)
	go func() {
		yDone <- raw(t, addr, rawJoin(group, "", 10000, "consumer", "range"), 3).(*kmsg.JoinGroupResponse)
	}()
	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Group, hb.MemberID, hb.Generation = group, x.MemberID, x.Generation
	c.WaitFor("REBALANCE_IN_PROGRESS on heartbeat", func() bool {
		return raw(t, addr, hb, 3).(*kmsg.HeartbeatResponse).ErrorCode == kerr.RebalanceInProgress.Code
	})
	x2 := raw(t, addr, rawJoin(group, x.MemberID, 10000, "consumer", "range"), 3).(*kmsg.JoinGroupResponse)
	y := <-yDone
	if x2.ErrorCode != 0 || y.ErrorCode != 0 || x2.Generation != 2 || y.Generation != 2 {
		t.Fatalf("rejoin: %v gen %d; new member: %v gen %d", kerr.ErrorForCode(x2.ErrorCode), x2.Generation, kerr.ErrorForCode(y.ErrorCode), y.Generation)
	}
	oc := kmsg.NewPtrOffsetCommitRequest()
	oc.Group, oc.MemberID, oc.Generation = group, y.MemberID, 2
	oc.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: "__consumer_offsets", Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0, Offset: 1}}}}
	wantErr(t, "commit while CompletingRebalance", raw(t, addr, oc, 8).(*kmsg.OffsetCommitResponse).Topics[0].Partitions[0].ErrorCode, kerr.RebalanceInProgress)
}
