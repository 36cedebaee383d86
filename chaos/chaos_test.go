package chaos_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zkafka/zkafka/chaos"
	"github.com/zkafka/zkafka/internal/testcluster"
)

// ciOptions are a short run's settings: brief down times, a fast-moving group.
func ciOptions(t *testing.T, l *chaos.Local) chaos.Options {
	o := chaos.DefaultOptions()
	o.Cluster, o.Out = l, testcluster.KeepOnFailure(t, "chaos-run")
	o.WarmUp, o.DownMin, o.DownMax = 2*time.Second, 100*time.Millisecond, 500*time.Millisecond
	o.GroupSessionTimeout = 6 * time.Second
	o.HealTimeout, o.DrainTimeout = time.Minute, time.Minute
	o.Seed = 1
	return o
}

// logTable puts the run's table in the test log.
func logTable(t *testing.T, rep *chaos.Report) {
	var b strings.Builder
	rep.WriteTable(&b)
	t.Logf("\n%s", b.String())
}

// TestChaosCheapFaults is the CI-sized chaos run: kill -9 of random brokers, the controller, the
// group's coordinator, two and all three brokers (three in five faults), ZooKeeper killed and
// restarted, a broker, the controller and the coordinator paused past the session timeout, against three idempotent acks=all producers
// (replication factor 3, min.insync.replicas 2, no unclean election), an acks=1 producer and a
// cooperative group. The checker must find nothing: no acknowledged record lost, none duplicated
// or out of order, the group's committed offsets never going back, every record processed.
func TestChaosCheapFaults(t *testing.T) {
	l := testcluster.StartScripted(t)
	o := ciOptions(t, l)
	o.Faults = []string{chaos.KindKill, chaos.KindKill, chaos.KindKill, chaos.KindZKRestart, chaos.KindPause}
	o.Count = 20
	start := time.Now()
	rep := runChaos(t, o)
	t.Logf("%d faults in %v", len(rep.Faults), time.Since(start).Round(time.Second))
	if c := rep.Check.AcksAll; c.Lost != 0 || c.Duplicated != 0 || c.Reordered != 0 || c.Acked < 1000 {
		t.Fatalf("acks=all: %d acknowledged, %d lost, %d duplicated, %d reordered", c.Acked, c.Lost, c.Duplicated, c.Reordered)
	}
}

// TestChaosIsolatedLeaderAndFullDisk runs the faults that need the machine's root (network
// namespaces and a tmpfs) and, on the same cluster, clock jumps.
//
// The isolated-leader scenario is the 2013 Jepsen case: a partition leader cut from ZooKeeper and
// the other brokers while clients still reach it. What it acknowledges alone with acks=1 is lost
// when it rejoins, as Kafka's design allows; with acks=all and min.insync.replicas=2 it
// acknowledges nothing alone and nothing is lost.
//
// A full disk: the broker whose only log dir (a tmpfs) fills up must stop serving with
// KAFKA_STORAGE_ERROR and halt, as Kafka's does once all its log dirs failed, instead of staying
// leader of partitions it cannot write; restarted once space returns it recovers its logs, cutting
// the torn batches, and nothing acknowledged is lost.
//
// A clock jump: a leader's wall clock an hour ahead (every follower looks an hour behind at its next
// ISR check) or behind, then set right; nothing acknowledged is lost.
func TestChaosIsolatedLeaderAndFullDisk(t *testing.T) {
	l := testcluster.StartScripted(t)
	t.Run("isolated-leader", func(t *testing.T) {
		o := ciOptions(t, l)
		o.Scenario, o.Count = chaos.ScenarioIsolatedLeader, 2
		rep := runChaos(t, o)
		if all, one := rep.Check.AcksAll, rep.Check.AcksOne; all.Lost != 0 || one.Lost == 0 || one.Acked == 0 {
			t.Fatalf("acks=all lost %d, acks=1 lost %d of %d: want none with acks=all, some with acks=1", all.Lost, one.Lost, one.Acked)
		}
	})
	t.Run("slow", func(t *testing.T) {
		o := ciOptions(t, l)
		o.Faults, o.Count, o.Latency = []string{chaos.KindSlow}, 2, 400*time.Millisecond
		rep := runChaos(t, o)
		if c := rep.Check.AcksAll; c.Lost != 0 || c.Duplicated != 0 || c.Reordered != 0 || c.Acked == 0 {
			t.Fatalf("acks=all through the proxy: %d acknowledged, %d lost, %d duplicated, %d reordered", c.Acked, c.Lost, c.Duplicated, c.Reordered)
		}
		// An acks=all record the slowed leader takes waits for its followers' fetches, each a round
		// trip through the proxy: 2 × 400 ms at least.
		for _, f := range rep.Faults {
			if f.Fault == chaos.KindSlow+"/latency" && f.Unavailable < 0.8 {
				t.Errorf("fault %d (%s): the slowest acks=all record waited %.2fs, want ≥ 0.8s", f.Seq, f.Fault, f.Unavailable)
			}
		}
	})
	t.Run("clock", func(t *testing.T) {
		o := ciOptions(t, l)
		o.Faults, o.Count = []string{chaos.KindClock}, 2
		rep := runChaos(t, o)
		if c := rep.Check.AcksAll; c.Lost != 0 || c.Duplicated != 0 || c.Reordered != 0 || c.Acked == 0 {
			t.Fatalf("acks=all across clock jumps: %d acknowledged, %d lost, %d duplicated, %d reordered", c.Acked, c.Lost, c.Duplicated, c.Reordered)
		}
	})
	t.Run("disk-full", func(t *testing.T) {
		o := ciOptions(t, l)
		o.Faults, o.Count = []string{chaos.KindDiskFull}, 3
		rep := runChaos(t, o)
		if len(rep.Incidents) > 0 {
			t.Fatalf("incidents: %v", rep.Incidents)
		}
		for _, f := range rep.Faults {
			if f.Unavailable > 15 {
				t.Errorf("fault %d: a partition took no records for %.1fs", f.Seq, f.Unavailable)
			}
		}
	})
}

// TestChaosZooKeeperEnsemble runs the faults only an ensemble has, on a cluster of three ZooKeeper
// servers (ZKAFKA_ZK_SERVERS=3): the leader killed and restarted, the leader paused past syncLimit ×
// tickTime and the session timeout, the leader cut from the other two servers (brokers still reach
// it), and a follower cut likewise. Nothing acknowledged may be lost, and after each fault on the
// leader another server must lead: the others elected one while it was gone.
func TestChaosZooKeeperEnsemble(t *testing.T) {
	l := testcluster.StartScripted(t, "ZKAFKA_ZK_SERVERS=3")
	o := ciOptions(t, l)
	o.Faults, o.Count = []string{chaos.KindZKLeader, chaos.KindZKSplit}, 4
	rep := runChaos(t, o)
	if c := rep.Check.AcksAll; c.Lost != 0 || c.Duplicated != 0 || c.Reordered != 0 || c.Acked == 0 {
		t.Fatalf("acks=all: %d acknowledged, %d lost, %d duplicated, %d reordered", c.Acked, c.Lost, c.Duplicated, c.Reordered)
	}
	f, err := os.Open(filepath.Join(o.Out, chaos.HistoryFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	seen := map[string]int{}
	err = chaos.ScanHistory(f, func(op chaos.Op) {
		var now, was int
		if op.Type != chaos.OpNote || op.Fault == "" {
			return
		}
		if _, err := fmt.Sscanf(op.Note, chaos.ZKLeaderNote, &now, &was); err != nil {
			return
		}
		seen[op.Fault]++
		if moved := now != was; moved != (op.Fault != chaos.KindZKSplit+"/follower") {
			t.Errorf("fault %d (%s): ZooKeeper server %d leads after it, %d before", op.Seq, op.Fault, now, was)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"zk-leader/kill", "zk-leader/pause", "zk-split/leader", "zk-split/follower"} {
		if seen[name] != 1 {
			t.Errorf("%d leader notes for %s, want 1: %v", seen[name], name, seen)
		}
	}
}

// runChaos runs o and fails the test unless the verdict is PASS with every fault healed.
func runChaos(t *testing.T, o chaos.Options) *chaos.Report {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	rep, err := chaos.Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	logTable(t, rep)
	if rep.Check.Verdict() != "PASS" {
		t.Fatalf("%s; failures %v", rep.Verdict(), rep.Check.Failures)
	}
	if len(rep.Faults) != o.Count {
		t.Fatalf("%d faults, want %d", len(rep.Faults), o.Count)
	}
	for _, f := range rep.Faults {
		if f.Healthy == 0 {
			t.Errorf("fault %d (%s) never healed", f.Seq, f.Fault)
		}
	}
	return rep
}
