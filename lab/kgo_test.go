package lab

import (
	"testing"

	"github.com/zkafka/zkafka/internal/testcluster"
)

// testKgoMembersGiveTheSameFigures runs scale-out with franz-go's consumer
// as the members: its callbacks make a valid log whose figures show what
// zkafka's members show (eager members pause at each join, cooperative
// ones never and form two generations per join), and every record is
// processed.
func testKgoMembersGiveTheSameFigures(t *testing.T, c *testcluster.Cluster) {
	o := shortOptions(t, c, "scale-out", "eager-range", "cooperative")
	o.Client, o.Topic = ClientKgo, "lab-kgo"
	// kgo waits for the batch in hand at each step of a cooperative
	// rebalance (its revocation, assignment and rejoin each wait for Poll):
	// short batches keep each join apart from the next.
	o.MaxPollRecords = 20
	joins := o.Members - 1
	as := analyze(t, o)
	for _, a := range as {
		f := a.Figures
		if f.Never != 0 || f.Partial || f.Triggers != joins || f.Rebalances < joins {
			t.Errorf("%s: %d records never processed, partial %v, %d joins, %d rebalances: want 0, false, %d, ≥ %d",
				f.Mode, f.Never, f.Partial, f.Triggers, f.Rebalances, joins, joins)
		}
		if f.JoinGroups == 0 || f.SyncGroups == 0 || f.Heartbeats == 0 || f.ZKReads != 0 {
			t.Errorf("%s: JoinGroup %d, SyncGroup %d, Heartbeat %d, ZooKeeper reads %d: want requests counted, no ZooKeeper",
				f.Mode, f.JoinGroups, f.SyncGroups, f.Heartbeats, f.ZKReads)
		}
		for p := range int32(o.Partitions) {
			if !fetchedAtEnd(a, p) {
				t.Errorf("%s: partition %d has no member at the end", f.Mode, p)
			}
		}
	}
	eager, coop := as["eager-range"].Figures, as["cooperative"].Figures
	if eager.PausedMemberSeconds == 0 || coop.PausedMemberSeconds != 0 {
		t.Errorf("member-seconds paused: eager %.2f, cooperative %.2f: want eager's above 0, cooperative's 0",
			eager.PausedMemberSeconds, coop.PausedMemberSeconds)
	}
	if coop.Rounds <= eager.Rounds {
		t.Errorf("cooperative formed %d generations, eager %d: want more (two rounds when partitions move)", coop.Rounds, eager.Rounds)
	}
}

// fetchedAtEnd reports whether some member fetches partition p when the
// measured window ends.
func fetchedAtEnd(a Analysis, p int32) bool {
	for _, s := range a.Segments {
		if s.Partition == p && s.End >= a.End {
			return true
		}
	}
	return false
}
