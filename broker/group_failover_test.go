package broker_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/internal/wait"
	"github.com/zkafka/zkafka/wire"
)

// findCoordinator asks a broker for a group's coordinator; -1 until there is
// one.
func findCoordinator(t *testing.T, addr, group string) int32 {
	t.Helper()
	ctx := ctxT(t, 10*time.Second)
	cl, err := wire.Dial(ctx, addr, "find-coordinator")
	if err != nil {
		return -1
	}
	defer cl.Close()
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.CoordinatorKey = group
	resp, err := cl.RequestVersion(ctx, req, 3)
	if err != nil || resp.(*kmsg.FindCoordinatorResponse).ErrorCode != 0 {
		return -1
	}
	return resp.(*kmsg.FindCoordinatorResponse).NodeID
}

// kill -9 of the coordinator while a group member commits: the new
// coordinator (the new leader of the group's __consumer_offsets partition)
// loads the group — the member carries on with the same member id — and
// every acknowledged commit.
func TestGroupCoordinatorFailover(t *testing.T) {
	pc := startProcClusterWith(t, 3, map[string]string{
		"group.initial.rebalance.delay.ms": "0",
		"offsets.topic.num.partitions":     "3",
		"replica.lag.time.max.ms":          "5000",
	})
	procs, addrs, seeds := pc.procs, pc.addrs, pc.seeds()
	admCl, err := kgo.NewClient(kgo.SeedBrokers(seeds...))
	if err != nil {
		t.Fatal(err)
	}
	defer admCl.Close()
	adm := kadm.NewClient(admCl)
	wait.For(t, 30*time.Second, "topic created", func() bool {
		_, err := adm.CreateTopic(ctxT(t, 10*time.Second), 2, 3, nil, "failover")
		return err == nil
	})
	const group = "failover-group"
	coord := int32(-1)
	wait.For(t, 30*time.Second, "a coordinator", func() bool {
		coord = findCoordinator(t, addrs[1], group)
		return coord > 0
	})

	member, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ConsumerGroup(group), kgo.ConsumeTopics("failover"),
		kgo.DisableAutoCommit(), kgo.SessionTimeout(20*time.Second), kgo.HeartbeatInterval(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer member.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for ctx.Err() == nil {
			member.PollFetches(ctx)
		}
	}()
	var memberID string
	var gen int32
	wait.For(t, 30*time.Second, "the member to join", func() bool {
		memberID, gen = member.GroupMetadata()
		return gen > 0
	})

	commit := func(offsets map[int32]int64) bool {
		eo := map[int32]kgo.EpochOffset{}
		for p, o := range offsets {
			eo[p] = kgo.EpochOffset{Epoch: -1, Offset: o}
		}
		ok := false
		member.CommitOffsetsSync(ctx, map[string]map[int32]kgo.EpochOffset{"failover": eo},
			func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
				if err != nil {
					return
				}
				ok = true
				for _, rt := range resp.Topics {
					for _, rp := range rt.Partitions {
						ok = ok && rp.ErrorCode == 0
					}
				}
			})
		return ok
	}
	// Partition 1 is committed once, before the kill: only loading can
	// bring it back.
	if !commit(map[int32]int64{1: 777}) {
		t.Fatal("first commit failed")
	}
	var mu sync.Mutex
	acked := int64(0)
	done, stop := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for next := int64(1); ; next++ {
			select {
			case <-stop:
				return
			default:
			}
			if commit(map[int32]int64{0: next}) {
				mu.Lock()
				acked = next
				mu.Unlock()
			}
		}
	}()
	ackedNow := func() int64 {
		mu.Lock()
		defer mu.Unlock()
		return acked
	}
	wait.For(t, 30*time.Second, "commits acknowledged", func() bool { return ackedNow() >= 30 })
	procs[coord].Kill()
	atKill := ackedNow()
	wait.For(t, 60*time.Second, "commits acknowledged by a new coordinator", func() bool { return ackedNow() >= atKill+30 })
	// The loop stops between commits, so the last one sent is acknowledged.
	close(stop)
	<-done
	last := ackedNow()

	var survivor int32 = 1
	if coord == 1 {
		survivor = 2
	}
	newCoord := findCoordinator(t, addrs[survivor], group)
	if newCoord == coord || newCoord < 0 {
		t.Fatalf("coordinator after the kill: %d (was %d)", newCoord, coord)
	}
	var live []string
	for id, addr := range addrs {
		if id != coord {
			live = append(live, addr)
		}
	}
	fresh, err := kgo.NewClient(kgo.SeedBrokers(live...))
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	offs, err := kadm.NewClient(fresh).FetchOffsets(ctxT(t, 10*time.Second), group)
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := offs.Lookup("failover", 1); o.At != 777 {
		t.Fatalf("partition 1's commit before the kill: %d, want 777", o.At)
	}
	if o, _ := offs.Lookup("failover", 0); o.At != last {
		t.Fatalf("partition 0's committed offset %d, want the last acknowledged %d", o.At, last)
	}
	// The member keeps its id: the new coordinator loaded it from the log
	// (an unknown id would be answered UNKNOWN_MEMBER_ID and replaced). Its
	// generation may move on: kgo ends its group session when a request to the
	// dead coordinator fails to dial, and rejoins, which rebalances.
	if id, g := member.GroupMetadata(); id != memberID || g < gen {
		t.Fatalf("member after failover: %q generation %d, before %q generation %d", id, g, memberID, gen)
	}
}
