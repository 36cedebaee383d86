package coordinator

import (
	"fmt"
	"testing"
)

func specOf(partitions map[topicID]int32, members ...assignorMember) assignorSpec {
	spec := assignorSpec{members: members, partitions: partitions, homogeneous: true}
	for _, m := range members[1:] {
		if fmt.Sprint(m.topics) != fmt.Sprint(members[0].topics) {
			spec.homogeneous = false
		}
	}
	return spec
}

// TestRangeAssignorCoPartitions: members subscribed to topics of equal
// partition counts get the same partition numbers in each, static members
// first by instance id, the first members one partition more.
func TestRangeAssignorCoPartitions(t *testing.T) {
	t1, t2 := topicID{1}, topicID{2}
	both := []topicID{t1, t2}
	out, err := rangeAssign(specOf(map[topicID]int32{t1: 3, t2: 3},
		assignorMember{id: "a", topics: both}, assignorMember{id: "b", instanceID: "z", topics: both}, assignorMember{id: "c", topics: both}))
	if err != nil {
		t.Fatal(err)
	}
	// Order: b (static), a, c.
	want := map[string]assignment{"b": {t1: {0}, t2: {0}}, "a": {t1: {1}, t2: {1}}, "c": {t1: {2}, t2: {2}}}
	for id, a := range want {
		if !out[id].equal(a) {
			t.Errorf("%s got %v, want %v", id, out[id], a)
		}
	}
}

// TestUniformAssignor: balanced to within one partition, and sticky: a
// member joining takes partitions only from those above quota; in a
// heterogeneous group each topic goes only to its subscribers.
func TestUniformAssignor(t *testing.T) {
	t1, t2 := topicID{1}, topicID{2}
	parts := map[topicID]int32{t1: 7, t2: 2}
	both := []topicID{t1, t2}
	first, err := uniformAssign(specOf(parts, assignorMember{id: "a", topics: both, current: assignment{}}, assignorMember{id: "b", topics: both, current: assignment{}}))
	if err != nil {
		t.Fatal(err)
	}
	if n, m := first["a"].size(), first["b"].size(); n+m != 9 || n-m > 1 || m-n > 1 {
		t.Fatalf("two members: %v and %v", first["a"], first["b"])
	}
	second, err := uniformAssign(specOf(parts, assignorMember{id: "a", topics: both, current: first["a"]},
		assignorMember{id: "b", topics: both, current: first["b"]}, assignorMember{id: "c", topics: both, current: assignment{}}))
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a", "b", "c"} {
		if second[id].size() != 3 {
			t.Fatalf("three members: %s has %v, want 3", id, second[id])
		}
	}
	for _, id := range []string{"a", "b"} {
		kept := second[id].filter(first[id].has)
		if kept.size() != 3 {
			t.Errorf("%s kept %v of %v, want all 3 it still has room for", id, kept, first[id])
		}
	}

	// Heterogeneous: a subscribes to t1 only, b to both.
	het, err := uniformAssign(specOf(parts, assignorMember{id: "a", topics: []topicID{t1}, current: assignment{}},
		assignorMember{id: "b", topics: both, current: assignment{}}))
	if err != nil {
		t.Fatal(err)
	}
	if len(het["a"][t2]) != 0 || len(het["b"][t2]) != 2 || het["a"].size()+het["b"].size() != 9 {
		t.Fatalf("heterogeneous: a %v, b %v", het["a"], het["b"])
	}
	if d := het["a"].size() - het["b"].size(); d > 1 || d < -1 {
		t.Fatalf("heterogeneous unbalanced: a %v, b %v", het["a"], het["b"])
	}
}
