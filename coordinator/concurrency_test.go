package coordinator

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/internal/wait"
	"github.com/zkafka/zkafka/kafka"
)

// TestConcurrentGroupsJoinSyncCommit runs the whole life of many groups at
// once — several groups per offsets partition, several members per group —
// and checks every answer, the offsets served and the offsets a new
// coordinator loads from the log.
func TestConcurrentGroupsJoinSyncCommit(t *testing.T) {
	const groups, members, rounds = 24, 3, 10
	c, clock, store := testCoordinator(t, nil)
	name := func(g int) string { return fmt.Sprintf("concurrent-%02d", g) }

	// Every member of every group joins at once.
	joins := make([][]<-chan *kmsg.JoinGroupResponse, groups)
	for g := range groups {
		for range members {
			req := joinReq("", "", 3, "range")
			req.Group = name(g)
			joins[g] = append(joins[g], joinAsync(c, req))
		}
	}
	for g := range groups {
		wait.For(t, waitTimeout, name(g)+" members parked", func() bool { return awaitingJoin(c, name(g)) == members })
	}
	// The initial delay, and once more because members arrived during it.
	clock.Advance(3 * time.Second)
	clock.Advance(3 * time.Second)
	joined := make([][]*kmsg.JoinGroupResponse, groups)
	for g := range groups {
		leaders := 0
		for m := range members {
			r := recv(t, joins[g][m])
			wantCode(t, name(g)+" join", r.ErrorCode, nil)
			if r.Generation != 1 {
				t.Fatalf("%s: generation %d, want 1", name(g), r.Generation)
			}
			if r.LeaderID == r.MemberID {
				leaders++
				if len(r.Members) != members {
					t.Fatalf("%s: the leader got %d members, want %d", name(g), len(r.Members), members)
				}
			}
			joined[g] = append(joined[g], r)
		}
		if leaders != 1 {
			t.Fatalf("%s: %d leaders, want 1", name(g), leaders)
		}
	}

	// Every member syncs at once; each gets the part the leader gave it.
	var wg sync.WaitGroup
	synced := make([][]*kmsg.SyncGroupResponse, groups)
	for g := range groups {
		synced[g] = make([]*kmsg.SyncGroupResponse, members)
		for m, j := range joined[g] {
			req := kmsg.NewPtrSyncGroupRequest()
			req.Version = 5
			req.Group, req.MemberID, req.Generation = name(g), j.MemberID, j.Generation
			for _, jm := range j.Members {
				sa := kmsg.NewSyncGroupRequestGroupAssignment()
				sa.MemberID, sa.MemberAssignment = jm.MemberID, []byte("part-of-"+jm.MemberID)
				req.GroupAssignment = append(req.GroupAssignment, sa)
			}
			wg.Go(func() { synced[g][m] = c.SyncGroup(context.Background(), req) })
		}
	}
	wg.Wait()
	for g := range groups {
		for m, r := range synced[g] {
			wantCode(t, name(g)+" sync", r.ErrorCode, nil)
			if want := "part-of-" + joined[g][m].MemberID; string(r.MemberAssignment) != want {
				t.Fatalf("%s: assignment %q, want %q", name(g), r.MemberAssignment, want)
			}
		}
	}

	// Every member commits its own partition round after round, with a
	// heartbeat between commits, while readers describe, list and fetch;
	// a group that only stores offsets commits alongside each group.
	codes := make(chan error, groups*(members+1)*rounds*2)
	for g := range groups {
		for m, j := range joined[g] {
			wg.Go(func() {
				for r := 1; r <= rounds; r++ {
					resp := c.OffsetCommit(context.Background(), commitReq(name(g), j.MemberID, 1, "t", map[int32]int64{int32(m): int64(r)}))
					codes <- kerr.ErrorForCode(resp.Topics[0].Partitions[0].ErrorCode)
					hb := kmsg.NewPtrHeartbeatRequest()
					hb.Version = 4
					hb.Group, hb.MemberID, hb.Generation = name(g), j.MemberID, 1
					codes <- kerr.ErrorForCode(c.Heartbeat(hb).ErrorCode)
				}
			})
		}
		wg.Go(func() {
			for r := 1; r <= rounds; r++ {
				resp := c.OffsetCommit(context.Background(), commitReq("simple-"+name(g), "", -1, "u", map[int32]int64{0: int64(r)}))
				codes <- kerr.ErrorForCode(resp.Topics[0].Partitions[0].ErrorCode)
				fetchOffsets(c, name(g))
				c.DescribeGroup(name(g))
			}
		})
	}
	wg.Go(func() {
		for range rounds {
			if _, err := c.ListGroups(nil); err != nil {
				codes <- err
			}
		}
	})
	wg.Wait()
	close(codes)
	for err := range codes {
		if err != nil {
			t.Fatalf("commit or heartbeat: %v", err)
		}
	}

	check := func(c *Coordinator, who string) {
		t.Helper()
		for g := range groups {
			got := fetchOffsets(c, name(g))
			for m := range members {
				if o := got[kafka.TopicPartition{Topic: "t", Partition: int32(m)}]; o != rounds {
					t.Fatalf("%s: %s partition %d at offset %d, want %d", who, name(g), m, o, rounds)
				}
			}
			if o := fetchOffsets(c, "simple-"+name(g))[kafka.TopicPartition{Topic: "u", Partition: 0}]; o != rounds {
				t.Fatalf("%s: simple-%s at offset %d, want %d", who, name(g), o, rounds)
			}
			d := c.DescribeGroup(name(g))
			if d.State != Stable.String() || len(d.Members) != members {
				t.Fatalf("%s: %s is %s with %d members, want Stable with %d", who, name(g), d.State, len(d.Members), members)
			}
			for _, dm := range d.Members {
				if want := "part-of-" + dm.MemberID; string(dm.MemberAssignment) != want {
					t.Fatalf("%s: %s member assignment %q, want %q", who, name(g), dm.MemberAssignment, want)
				}
			}
		}
	}
	check(c, "the coordinator")
	check(startCoordinator(t, clock, store, nil), "a coordinator loading the log")
}

// TestCommitsWhilePartitionsMove commits to many groups while their offsets
// partitions are unloaded and loaded again underneath: a commit either
// fails with a retriable coordinator error and writes nothing, or succeeds
// and is never lost, whichever coordinator instance answers later.
func TestCommitsWhilePartitionsMove(t *testing.T) {
	const groups, rounds = 16, 40
	c, _, _ := testCoordinator(t, nil)
	name := func(g int) string { return fmt.Sprintf("moving-%02d", g) }
	acked := make([]int64, groups)
	failed := 0
	for r := int64(1); r <= rounds; r++ {
		// Every group commits offset r while one partition moves.
		var wg sync.WaitGroup
		errs := make([]error, groups)
		for g := range groups {
			wg.Go(func() {
				resp := c.OffsetCommit(context.Background(), commitReq(name(g), "", -1, "t", map[int32]int64{0: r}))
				errs[g] = kerr.ErrorForCode(resp.Topics[0].Partitions[0].ErrorCode)
			})
		}
		p := int32(r % 4)
		c.OnResign(p)
		c.OnBecomeLeader(p, 0)
		wg.Wait()
		wait.For(t, waitTimeout, "partition loaded", func() bool { return c.Owns(p) })
		for g, err := range errs {
			switch err {
			case nil:
				acked[g] = r
			case kerr.NotCoordinator, kerr.CoordinatorLoadInProgress, kerr.CoordinatorNotAvailable:
				failed++
			default:
				t.Fatalf("%s: commit %d: %v", name(g), r, err)
			}
		}
	}
	t.Logf("%d of %d commits failed with a retriable error", failed, groups*rounds)
	for g := range groups {
		if got := fetchOffsets(c, name(g))[kafka.TopicPartition{Topic: "t", Partition: 0}]; got != acked[g] {
			t.Fatalf("%s: offset %d, want the last acknowledged commit %d", name(g), got, acked[g])
		}
	}
}
