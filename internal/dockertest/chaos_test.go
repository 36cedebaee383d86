package dockertest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/zkafka/zkafka/chaos"
)

// TestChaosOnDocker runs `zkafka chaos` against the Docker cluster with the ZooKeeper ensemble:
// one fault of each container kind — a broker killed (docker kill) and started again, one paused
// (docker pause) past its session, an isolated leader (nftables in its container's namespace, clients
// still reach it through the published port), a leader's links slowed through the proxy on the
// cluster network's gateway, and the ensemble's leader cut from the other two servers. The checker
// must find nothing acknowledged lost, duplicated or reordered, and every fault must heal.
func TestChaosOnDocker(t *testing.T) {
	t.Parallel()
	p := NewProject(t, Ensemble, sessionTimeout)
	p.Override("chaos-settings.yml", chaosSettings)
	p.Up()
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	d, err := chaos.NewDocker(ctx, Root(), p.Env())
	if err != nil {
		t.Fatal(err)
	}
	if got := len(d.ZKServerIDs()); got != 3 {
		t.Fatalf("%d ZooKeeper servers found, want the ensemble's 3", got)
	}
	o := chaos.DefaultOptions()
	o.Cluster, o.Out = d, t.TempDir()
	o.Faults = []string{chaos.KindKill, chaos.KindPause, chaos.KindPartition, chaos.KindSlow, chaos.KindZKSplit}
	o.Count, o.Seed = 5, 1
	o.WarmUp, o.DownMin, o.DownMax = 2*time.Second, 100*time.Millisecond, 500*time.Millisecond
	o.GroupSessionTimeout, o.HealTimeout, o.DrainTimeout = 6*time.Second, 2*time.Minute, 2*time.Minute
	rep, err := chaos.Run(ctx, o)
	if rep != nil {
		var b strings.Builder
		rep.WriteTable(&b)
		t.Logf("\n%s", b.String())
	}
	if err != nil {
		t.Fatal(err)
	}
	if rep.Check.Verdict() != "PASS" {
		t.Fatalf("%s; failures %v", rep.Verdict(), rep.Check.Failures)
	}
	if c := rep.Check.AcksAll; c.Lost != 0 || c.Duplicated != 0 || c.Reordered != 0 || c.Acked < 500 {
		t.Fatalf("acks=all: %d acknowledged, %d lost, %d duplicated, %d reordered", c.Acked, c.Lost, c.Duplicated, c.Reordered)
	}
	kinds := map[string]bool{}
	for _, f := range rep.Faults {
		kinds[strings.Split(f.Fault, "/")[0]] = true
		if f.Healthy == 0 {
			t.Errorf("fault %d (%s) never healed", f.Seq, f.Fault)
		}
	}
	if len(rep.Faults) != o.Count || len(kinds) != len(o.Faults) {
		t.Fatalf("faults %v, want one of each of %v", rep.Faults, o.Faults)
	}
}

// chaosSettings makes the brokers' faults cheap: replica lag as short as the session, and few
// __consumer_offsets partitions to load after a restart.
const chaosSettings = `services:
  kafka1:
    environment: &chaos
      KAFKA_REPLICA_LAG_TIME_MAX_MS: "6000"
      KAFKA_OFFSETS_TOPIC_NUM_PARTITIONS: "5"
      KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS: "0"
  kafka2:
    environment: *chaos
  kafka3:
    environment: *chaos
`
