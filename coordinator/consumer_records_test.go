package coordinator

import (
	"encoding/hex"
	"slices"
	"testing"
)

// TestConsumerGroupRecordBytes: keys and values byte for byte as Kafka
// 4.0's schemas lay them out (golden bytes written from the JSON schemas,
// not from this encoder), and read back.
func TestConsumerGroupRecordBytes(t *testing.T) {
	topic := topicID{0xAA, 15: 0xBB}
	for _, tc := range []struct {
		name      string
		got, want string
	}{
		// int16 type 3, int16-length "g".
		{"group metadata key", hex.EncodeToString(consumerGroupKey(consumerGroupMetadataType, "g")), "0003" + "0001" + "67"},
		// type 8, "g", "m1".
		{"current assignment key", hex.EncodeToString(consumerGroupKey(consumerGroupCurrentAssignmentType, "g", "m1")), "0008" + "000167" + "00026d31"},
		// version 0, epoch 7, no tagged fields.
		{"group epoch value", hex.EncodeToString(epochValue(7)), "0000" + "00000007" + "00"},
		// version 0; TopicPartitions: 1 element (compact length 2): uuid,
		// partitions [1 3] (compact length 3), struct tags; top-level tags.
		{"target member value", hex.EncodeToString(targetMemberValue(assignment{topic: {1, 3}})),
			"0000" + "02" + "aa0000000000000000000000000000bb" + "03" + "00000001" + "00000003" + "00" + "00"},
		// version 0, epoch 5, previous 4, state 1, assigned {topic: [0]},
		// pending none (compact length 1), tags.
		{"current assignment value", hex.EncodeToString(currentAssignmentValue(memberAssignment{epoch: 5, previousEpoch: 4, state: memberUnrevokedPartitions,
			assigned: assignment{topic: {0}}, pending: assignment{}})),
			"0000" + "00000005" + "00000004" + "01" + "02" + "aa0000000000000000000000000000bb" + "02" + "00000000" + "00" + "01" + "00"},
		// version 0; instance null, rack null, client "c", host "/h",
		// names ["t"], regex "", timeout 30000, assignor "range", tags.
		{"member metadata value", hex.EncodeToString(memberMetadataValue(&consumerMember{clientID: "c", clientHost: "/h",
			subscribedNames: []string{"t"}, rebalanceTimeout: 30_000_000_000, serverAssignor: "range"})),
			"0000" + "00" + "00" + "0263" + "032f68" + "02" + "0274" + "01" + "00007530" + "0672616e6765" + "00"},
		// version 0; 1 topic: uuid, name "t", 4 partitions, no partition
		// metadata, struct tags; tags.
		{"partition metadata value", hex.EncodeToString(partitionMetadataValue(map[string]topicMetadata{"t": {id: topic, partitions: 4}})),
			"0000" + "02" + "aa0000000000000000000000000000bb" + "0274" + "00000004" + "01" + "00" + "00"},
	} {
		if tc.got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, tc.got, tc.want)
		}
	}

	// What is written reads back.
	groups := map[string]*loadedConsumerGroup{}
	m := &consumerMember{id: "m1", instanceID: "i", clientID: "c", clientHost: "/h", subscribedNames: []string{"t", "u"},
		subscribedRegex: "x.*", rebalanceTimeout: 30_000_000_000, serverAssignor: "range"}
	cur := memberAssignment{epoch: 5, previousEpoch: 4, state: memberUnreleasedPartitions, assigned: assignment{topic: {0, 2}}, pending: assignment{}}
	for i, r := range []Record{
		{Key: consumerGroupKey(consumerGroupMetadataType, "g"), Value: epochValue(6)},
		{Key: consumerGroupKey(consumerGroupTargetMetadataType, "g"), Value: epochValue(5)},
		{Key: consumerGroupKey(consumerGroupMemberMetadataType, "g", "m1"), Value: memberMetadataValue(m)},
		{Key: consumerGroupKey(consumerGroupCurrentAssignmentType, "g", "m1"), Value: currentAssignmentValue(cur)},
		{Key: consumerGroupKey(consumerGroupTargetMemberType, "g", "m1"), Value: targetMemberValue(assignment{topic: {0, 1, 2}})},
		{Key: consumerGroupKey(consumerGroupPartitionMetadataType, "g"), Value: partitionMetadataValue(map[string]topicMetadata{"t": {id: topic, partitions: 3}})},
	} {
		applyConsumerRecord(groups, int16(r.Key[1]), r.Key, r.Value, int64(i))
	}
	cg := groups["g"].group()
	got := cg.members["m1"]
	if cg.epoch != 6 || cg.assignmentEpoch != 5 || got == nil || got.instanceID != "i" || got.clientHost != "/h" ||
		!slices.Equal(got.subscribedNames, []string{"t", "u"}) || got.subscribedRegex != "x.*" || got.serverAssignor != "range" ||
		got.rebalanceTimeout != m.rebalanceTimeout || !got.current().equal(cur) || !cg.target["m1"].equal(assignment{topic: {0, 1, 2}}) ||
		cg.metadata["t"].partitions != 3 || cg.static["i"] != "m1" {
		t.Fatalf("read back: group %+v, member %+v", cg, got)
	}
}

// TestConsumerGroupSurvivesCoordinatorFailover: a new coordinator over the
// same log loads the group as it was (epochs, members, assignments), its
// members carry on at their epochs, and a group deleted after its members
// left is gone after another load.
func TestConsumerGroupSurvivesCoordinatorFailover(t *testing.T) {
	topics := fakeTopics{"t": 4}
	c, clock, store := testCoordinator(t, func(cfg *Config) { cfg.Topics = topics })
	tid := topics.id("t")
	a := mustSend(t, c, hb{member: "a", names: []string{"t"}})
	mustSend(t, c, hb{member: "b", instance: "ib", names: []string{"t"}, assignor: "range"})
	a = mustSend(t, c, hb{member: "a", epoch: a.MemberEpoch, owned: parts(tid, 0, 1, 2, 3)})
	a = mustSend(t, c, hb{member: "a", epoch: a.MemberEpoch, owned: assigned(a)})
	mustSend(t, c, hb{member: "b", instance: "ib", epoch: 2, owned: assignment{}})
	before := c.ConsumerGroupDescribe([]string{"g"})[0]
	if before.State != "Stable" {
		t.Fatalf("before failover: %+v", before)
	}
	c.Shutdown()

	c2 := startCoordinator(t, clock, store, func(cfg *Config) { cfg.Topics = topics })
	after := c2.ConsumerGroupDescribe([]string{"g"})[0]
	if after.State != before.State || after.Epoch != before.Epoch || after.AssignmentEpoch != before.AssignmentEpoch ||
		after.AssignorName != "range" || len(after.Members) != 2 {
		t.Fatalf("after failover: %+v\nbefore: %+v", after, before)
	}
	for i := range after.Members {
		x, y := after.Members[i], before.Members[i]
		if x.MemberID != y.MemberID || x.MemberEpoch != y.MemberEpoch || deref(x.InstanceID) != deref(y.InstanceID) ||
			!slices.Equal(x.Assignment.TopicPartitions[0].Partitions, y.Assignment.TopicPartitions[0].Partitions) {
			t.Fatalf("member %d after failover: %+v, before %+v", i, x, y)
		}
	}
	if resp := mustSend(t, c2, hb{member: "a", epoch: a.MemberEpoch, owned: assigned(a)}); resp.MemberEpoch != a.MemberEpoch {
		t.Fatalf("a after failover: epoch %d, want %d", resp.MemberEpoch, a.MemberEpoch)
	}
	if resp := send(t, c2, hb{member: "a", names: []string{"t"}}); resp.ErrorCode == 0 {
		t.Fatal("a rejoining at epoch 0 under its id was not fenced")
	}

	mustSend(t, c2, hb{member: "a", epoch: -1})
	mustSend(t, c2, hb{member: "b", instance: "ib", epoch: -1})
	if errs := c2.DeleteGroups([]string{"g"}); errs["g"] != nil {
		t.Fatalf("DeleteGroups: %v", errs["g"])
	}
	c2.Shutdown()
	c3 := startCoordinator(t, clock, store, func(cfg *Config) { cfg.Topics = topics })
	if d := c3.ConsumerGroupDescribe([]string{"g"})[0]; d.ErrorCode == 0 {
		t.Fatalf("a deleted group loaded again: %+v", d)
	}
	if groups, _ := c3.ListGroups(nil); len(groups) != 0 {
		t.Fatalf("groups after deletion: %+v", groups)
	}
}
