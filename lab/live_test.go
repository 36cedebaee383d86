package lab

import (
	"testing"

	"github.com/zkafka/zkafka/consumer"
)

// TestLiveStableWaitsForEveryShare: a group whose partitions are all
// fetched is not yet stable while a member that joined owns nothing (a
// consumer-protocol member before its first partitions), unless there are
// fewer partitions than members.
func TestLiveStableWaitsForEveryShare(t *testing.T) {
	l := newLive("consumer", nil)
	l.apply(Event{Type: TypeMarker, Note: MarkJoin, Member: "m1"})
	l.apply(Event{Type: consumer.EventPartitionsAssigned.String(), Member: "m1", Partitions: []int32{0, 1}})
	if !l.stable(2) {
		t.Fatal("one member owning both partitions: not stable")
	}
	l.apply(Event{Type: TypeMarker, Note: MarkJoin, Member: "m2"})
	if l.stable(2) {
		t.Error("stable while m2 owns nothing")
	}
	if !l.stable(1) {
		t.Error("not stable with one partition for two members")
	}
	l.apply(Event{Type: consumer.EventPartitionsRevoked.String(), Member: "m1", Partitions: []int32{1}})
	l.apply(Event{Type: consumer.EventPartitionsAssigned.String(), Member: "m2", Partitions: []int32{1}})
	if !l.stable(2) {
		t.Error("not stable with a partition each")
	}
}
