package broker_test

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/internal/testcluster"
)

// Leadership of the group's __consumer_offsets partition moves to another
// live broker (a reassignment that changes the preferred leader, then a
// preferred election): the old coordinator unloads the group and answers
// NOT_COORDINATOR, the new one loads it, and the member carries on in the
// same generation with its committed offset.
func TestGroupCoordinatorMovesToAnotherBroker(t *testing.T) {
	props := map[string]string{"offsets.topic.num.partitions": "1", "offsets.topic.replication.factor": "2", "auto.leader.rebalance.enable": "false"}
	for k, v := range groupProps {
		if _, ok := props[k]; !ok {
			props[k] = v
		}
	}
	c := testcluster.Start(t, testcluster.Options{Brokers: 2, Properties: props})
	adm := kadm.NewClient(c.Client())
	if _, err := adm.CreateTopic(ctxT(t, 20*time.Second), 1, 2, nil, "moved"); err != nil {
		t.Fatal(err)
	}
	c.WaitForLeader("moved", 0)
	const group = "moving-group"
	waitForCoordinator(t, c, group)
	old := findCoordinator(t, c.Addr(1), group)

	member := c.Client(kgo.ConsumerGroup(group), kgo.ConsumeTopics("moved"), kgo.DisableAutoCommit(),
		kgo.HeartbeatInterval(200*time.Millisecond))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for ctx.Err() == nil {
			member.PollFetches(ctx)
		}
	}()
	var memberID string
	var gen int32
	c.WaitFor("the member to join", func() bool { memberID, gen = member.GroupMetadata(); return gen > 0 })
	var commitErr error
	member.CommitOffsetsSync(ctx, map[string]map[int32]kgo.EpochOffset{"moved": {0: {Epoch: -1, Offset: 42}}},
		func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
			if commitErr = err; err == nil {
				commitErr = kerr.ErrorForCode(resp.Topics[0].Partitions[0].ErrorCode)
			}
		})
	if commitErr != nil {
		t.Fatal(commitErr)
	}

	other := 3 - old
	var req kadm.AlterPartitionAssignmentsReq
	req.Assign("__consumer_offsets", 0, []int32{other, old})
	if _, err := adm.AlterPartitionAssignments(ctxT(t, 10*time.Second), req); err != nil {
		t.Fatal(err)
	}
	c.WaitFor("the reassignment to finish", func() bool {
		s, ok := c.PartitionState("__consumer_offsets", 0)
		return ok && len(s.ISR) == 2
	})
	c.WaitFor("the new preferred leader to be elected", func() bool {
		adm.ElectLeaders(ctxT(t, 10*time.Second), kadm.ElectPreferredReplica, kadm.TopicsSet{"__consumer_offsets": {0: {}}})
		s, ok := c.PartitionState("__consumer_offsets", 0)
		return ok && s.Leader == other
	})
	c.WaitFor("the old coordinator to unload", func() bool {
		hb := kmsg.NewPtrHeartbeatRequest()
		hb.Group, hb.MemberID, hb.Generation = group, memberID, gen
		return raw(t, c.Addr(old), hb, 4).(*kmsg.HeartbeatResponse).ErrorCode == kerr.NotCoordinator.Code
	})
	c.WaitFor("the new coordinator to serve the group", func() bool { return findCoordinator(t, c.Addr(old), group) == other })
	offs, err := kadm.NewClient(c.Client()).FetchOffsets(ctxT(t, 10*time.Second), group)
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := offs.Lookup("moved", 0); o.At != 42 {
		t.Fatalf("committed offset on the new coordinator: %d, want 42", o.At)
	}
	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Group, hb.MemberID, hb.Generation = group, memberID, gen
	if code := raw(t, c.Addr(other), hb, 4).(*kmsg.HeartbeatResponse).ErrorCode; code != 0 {
		t.Fatalf("the member's heartbeat on the new coordinator: %v", kerr.ErrorForCode(code))
	}
	if id, g := member.GroupMetadata(); id != memberID || g != gen {
		t.Fatalf("member after the move: %q generation %d, before %q generation %d", id, g, memberID, gen)
	}
	// ListGroups asks every broker: only the new coordinator lists it.
	for id := int32(1); id <= 2; id++ {
		req := kmsg.NewPtrListGroupsRequest()
		var listed []string
		for _, g := range raw(t, c.Addr(id), req, 4).(*kmsg.ListGroupsResponse).Groups {
			listed = append(listed, g.Group+"/"+g.GroupState)
		}
		want := 0
		if id == other {
			want = 1
		}
		if len(listed) != want || want == 1 && listed[0] != group+"/Stable" {
			t.Fatalf("ListGroups on broker %d: %v", id, listed)
		}
	}
}
