package controller

import (
	"slices"
	"testing"
)

func liveSet(ids ...int32) func(int32) bool {
	return func(id int32) bool { return slices.Contains(ids, id) }
}

func TestInitialLeadership(t *testing.T) {
	tests := []struct {
		name       string
		assignment []int32
		live       []int32
		want       election
		ok         bool
	}{
		{"all live: first replica leads", []int32{3, 1, 2}, []int32{1, 2, 3}, election{leader: 3, isr: []int32{3, 1, 2}}, true},
		{"first replica dead: next live leads", []int32{3, 1, 2}, []int32{1, 2}, election{leader: 1, isr: []int32{1, 2}}, true},
		{"ISR keeps assignment order", []int32{2, 3, 1}, []int32{1, 3}, election{leader: 3, isr: []int32{3, 1}}, true},
		{"none live", []int32{1, 2}, []int32{3}, election{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := initialLeadership(tt.assignment, liveSet(tt.live...))
			if ok != tt.ok || got.leader != tt.want.leader || !slices.Equal(got.isr, tt.want.isr) || got.unclean {
				t.Errorf("initialLeadership = %+v, %v; want %+v, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestOfflineLeaderElection(t *testing.T) {
	tests := []struct {
		name       string
		assignment []int32
		isr        []int32
		live       []int32
		unclean    bool
		want       election
		ok         bool
	}{
		{"first live ISR member in assignment order", []int32{1, 2, 3}, []int32{3, 2}, []int32{2, 3}, false,
			election{leader: 2, isr: []int32{3, 2}}, true},
		{"dead leader leaves ISR, ISR order kept", []int32{1, 2, 3}, []int32{1, 3, 2}, []int32{2, 3}, false,
			election{leader: 2, isr: []int32{3, 2}}, true},
		{"live replica outside ISR is skipped", []int32{1, 2, 3}, []int32{1, 3}, []int32{2, 3}, false,
			election{leader: 3, isr: []int32{3}}, true},
		{"preferred replica wins when live and in ISR", []int32{2, 1}, []int32{1, 2}, []int32{1, 2}, false,
			election{leader: 2, isr: []int32{1, 2}}, true},
		{"no live ISR member, unclean disabled", []int32{1, 2, 3}, []int32{1}, []int32{2, 3}, false,
			election{}, false},
		{"no live ISR member, unclean enabled", []int32{1, 2, 3}, []int32{1}, []int32{3, 2}, true,
			election{leader: 2, isr: []int32{2}, unclean: true}, true},
		{"unclean not used while an ISR member is live", []int32{1, 2, 3}, []int32{3}, []int32{2, 3}, true,
			election{leader: 3, isr: []int32{3}}, true},
		{"nothing live, unclean enabled", []int32{1, 2}, []int32{1}, nil, true, election{}, false},
		{"ISR member not in assignment cannot lead", []int32{1, 2}, []int32{5}, []int32{5}, false, election{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := offlineLeaderElection(tt.assignment, tt.isr, liveSet(tt.live...), tt.unclean)
			if ok != tt.ok || got.leader != tt.want.leader || !slices.Equal(got.isr, tt.want.isr) || got.unclean != tt.want.unclean {
				t.Errorf("offlineLeaderElection = %+v, %v; want %+v, %v", got, ok, tt.want, tt.ok)
			}
			if hasLiveISRMember(tt.assignment, tt.isr, liveSet(tt.live...)) != (ok && !got.unclean) {
				t.Errorf("hasLiveISRMember disagrees with the election's cleanliness")
			}
		})
	}
}

func TestWithoutReplica(t *testing.T) {
	current := leaderAndISR{leader: 2, leaderEpoch: 4, isr: []int32{2, 3}, zkVersion: 7}
	tests := []struct {
		name    string
		l       leaderAndISR
		replica int32
		want    leaderAndISR
		ok      bool
	}{
		{"follower leaves the ISR", current, 3,
			leaderAndISR{leader: 2, leaderEpoch: 5, isr: []int32{2}, zkVersion: 7}, true},
		{"leader leaves the ISR and the leadership", current, 2,
			leaderAndISR{leader: noLeader, leaderEpoch: 5, isr: []int32{3}, zkVersion: 7}, true},
		{"last ISR member stays", leaderAndISR{leader: 2, leaderEpoch: 4, isr: []int32{2}, zkVersion: 7}, 2,
			leaderAndISR{leader: noLeader, leaderEpoch: 5, isr: []int32{2}, zkVersion: 7}, true},
		{"replica not in the ISR changes nothing", current, 1, current, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := withoutReplica(tt.l, tt.replica)
			if ok != tt.ok || got.leader != tt.want.leader || got.leaderEpoch != tt.want.leaderEpoch ||
				!slices.Equal(got.isr, tt.want.isr) || got.zkVersion != tt.want.zkVersion {
				t.Errorf("withoutReplica = %v, %v; want %v, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
	if !slices.Equal(current.isr, []int32{2, 3}) {
		t.Errorf("withoutReplica modified its input's ISR: %v", current.isr)
	}
}

func TestPartitionTransitions(t *testing.T) {
	states := []partitionState{newPartition, onlinePartition, offlinePartition, nonExistentPartition}
	valid := map[[2]partitionState]bool{
		{nonExistentPartition, newPartition}:     true,
		{newPartition, onlinePartition}:          true,
		{onlinePartition, onlinePartition}:       true,
		{offlinePartition, onlinePartition}:      true,
		{newPartition, offlinePartition}:         true,
		{onlinePartition, offlinePartition}:      true,
		{offlinePartition, offlinePartition}:     true,
		{offlinePartition, nonExistentPartition}: true,
	}
	for _, from := range states {
		for _, to := range states {
			if got := validPartitionTransition(from, to); got != valid[[2]partitionState{from, to}] {
				t.Errorf("%s -> %s valid = %v", from, to, got)
			}
		}
	}
}

func TestLeaderAndISRString(t *testing.T) {
	l := leaderAndISR{leader: 2, leaderEpoch: 3, isr: []int32{2, 3}, zkVersion: 4}
	if got, want := l.String(), "LeaderAndIsr(leader=2, leaderEpoch=3, isr=2,3, zkVersion=4)"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}
