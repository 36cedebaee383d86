package broker_test

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/internal/testcluster"
)

func createGroupTopic(t *testing.T, c *testcluster.Cluster, topic string, partitions int32) {
	t.Helper()
	if _, err := kadm.NewClient(c.Client()).CreateTopic(ctxT(t, 20*time.Second), partitions, 1, nil, topic); err != nil {
		t.Fatal(err)
	}
	for p := range partitions {
		c.WaitForLeader(topic, p)
	}
}

// A static member (KIP-345) that restarts within its session timeout gets
// its partitions back without a rebalance; a second live member with the
// same group.instance.id fences the first.
func TestGroupStaticMembership(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Properties: groupProps})
	const topic, group = "static", "static-group"
	createGroupTopic(t, c, topic, 4)
	seen := &consumed{seen: map[string]map[int64]bool{}}
	a := startMember(t, c, "a", group, topic, seen, kgo.InstanceID("instance-a"), kgo.SessionTimeout(10*time.Second))
	b := startMember(t, c, "b", group, topic, seen, kgo.InstanceID("instance-b"), kgo.SessionTimeout(10*time.Second))
	waitExactlyOneOwner(t, c, 4, a, b)
	_, gen := a.cl.GroupMetadata()
	oldB, _ := b.cl.GroupMetadata()
	owned := b.partitions()

	// kgo does not send LeaveGroup for a static member: the restart is
	// invisible to the group.
	b.stop()
	b2 := startMember(t, c, "b2", group, topic, seen, kgo.InstanceID("instance-b"), kgo.SessionTimeout(10*time.Second))
	c.WaitFor("the restarted static member to get its partitions", func() bool { return len(b2.partitions()) == len(owned) })
	newB, gen2 := b2.cl.GroupMetadata()
	if gen2 != gen || newB == oldB {
		t.Fatalf("restarted static member: generation %d (was %d), member id %q (was %q); want the same generation and a new id", gen2, gen, newB, oldB)
	}
	if got := b2.partitions(); len(got) != len(owned) || got[0] != owned[0] {
		t.Fatalf("restarted static member owns %v, before %v", got, owned)
	}
	if _, g := a.cl.GroupMetadata(); g != gen {
		t.Fatalf("the other member's generation moved from %d to %d", gen, g)
	}

	// The old incarnation's id is fenced.
	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Group, hb.MemberID, hb.Generation, hb.InstanceID = group, oldB, gen, kmsg.StringPtr("instance-b")
	if code := raw(t, c.Addr(1), hb, 4).(*kmsg.HeartbeatResponse).ErrorCode; code != kerr.FencedInstanceID.Code {
		t.Fatalf("heartbeat of the replaced member: %v, want FENCED_INSTANCE_ID", kerr.ErrorForCode(code))
	}

	// A second live member with instance-b: it takes the instance over and
	// the first is fenced on its next heartbeat.
	join := kmsg.NewPtrJoinGroupRequest()
	join.Group, join.InstanceID, join.ProtocolType = group, kmsg.StringPtr("instance-b"), "consumer"
	join.SessionTimeoutMillis, join.RebalanceTimeoutMillis = 10000, 10000
	join.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "cooperative-sticky"}}
	jr := raw(t, c.Addr(1), join, 7).(*kmsg.JoinGroupResponse)
	if jr.ErrorCode != 0 {
		t.Fatalf("second instance-b join: %v", kerr.ErrorForCode(jr.ErrorCode))
	}
	hb.MemberID, hb.Generation = newB, gen2
	if code := raw(t, c.Addr(1), hb, 4).(*kmsg.HeartbeatResponse).ErrorCode; code != kerr.FencedInstanceID.Code {
		t.Fatalf("heartbeat of the member whose instance id was taken: %v, want FENCED_INSTANCE_ID", kerr.ErrorForCode(code))
	}
}
