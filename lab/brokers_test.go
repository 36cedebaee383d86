package lab

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/zkafka/zkafka/consumer"
	"github.com/zkafka/zkafka/internal/testcluster"
	"github.com/zkafka/zkafka/internal/wait"
	"github.com/zkafka/zkafka/internal/zktest"
)

// processBrokers kills and restarts brokers that run as processes.
type processBrokers map[int32]*testcluster.Process

func (p processBrokers) KillBroker(_ context.Context, id int32) error {
	p[id].Kill()
	return nil
}

func (p processBrokers) RestartBroker(_ context.Context, id int32) error {
	p[id].Restart()
	return nil
}

// startProcessCluster starts three brokers as processes, so that one can
// be killed with SIGKILL, with short ZooKeeper sessions so that the
// cluster notices in seconds, and returns them with their addresses and
// ZooKeeper connect string.
func startProcessCluster(t *testing.T) (processBrokers, []string, string) {
	connect := zktest.NewChroot(t)
	procs := processBrokers{}
	var seeds []string
	for id := int32(1); id <= 3; id++ {
		port := testcluster.FreePort(t)
		seeds = append(seeds, "127.0.0.1:"+strconv.Itoa(port))
		procs[id] = testcluster.StartProcess(t, map[string]string{
			"broker.id":                            strconv.Itoa(int(id)),
			"listeners":                            fmt.Sprintf("PLAINTEXT://127.0.0.1:%d", port),
			"log.dirs":                             t.TempDir(),
			"zookeeper.connect":                    connect,
			"zookeeper.session.timeout.ms":         "2000",
			"controlled.shutdown.retry.backoff.ms": "100",
			"group.initial.rebalance.delay.ms":     "0",
			"group.min.session.timeout.ms":         "500",
			"offsets.topic.num.partitions":         "3",
			"offsets.topic.replication.factor":     "3",
			// Consumer-protocol members back off up to a second between
			// retries while the coordinator moves.
			"group.coordinator.rebalance.protocols":    "classic,consumer",
			"group.consumer.min.session.timeout.ms":    "1000",
			"group.consumer.session.timeout.ms":        "4000",
			"group.consumer.min.heartbeat.interval.ms": "100",
			"group.consumer.heartbeat.interval.ms":     "100",
		})
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.MetadataMinAge(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	wait.For(t, 30*time.Second, "three brokers registered", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		bs, err := adm.ListBrokers(ctx)
		return err == nil && len(bs) == 3
	})
	return procs, seeds, connect
}

// testBrokerFailureMovesTheCoordinator kills the group coordinator's
// broker mid-run: the coordinator moves to another broker once the killed
// one's ZooKeeper session expires and loads the group, so its members find
// it, commit there and carry on in the same generation (no rebalance);
// legacy members rebalance at the broker change. Every partition has a
// member at the end, and no record is lost.
func testBrokerFailureMovesTheCoordinator(t *testing.T, c *testcluster.Cluster) {
	procs, seeds, connect := startProcessCluster(t)
	o := shortOptions(t, c, "broker-failure", "legacy-range", "eager-range", "consumer")
	o.Members = 2
	o.Bootstrap, o.ZooKeeper, o.Brokers = seeds, connect, procs
	events, as := runEvents(t, o)

	for _, m := range o.Modes {
		a := as[m.Name]
		f := a.Figures
		if f.Never != 0 || f.Partial {
			t.Errorf("%s: %d records never processed, partial %v", m.Name, f.Never, f.Partial)
		}
		for p := range int32(o.Partitions) {
			if !fetchedAtEnd(a, p) {
				t.Errorf("%s: partition %d has no member at the end", m.Name, p)
			}
		}
		var killed, down, restarted, up, moved, rebalanced float64
		var victim int32 = -1
		committed := map[string]bool{}
		for _, e := range ModeEvents(events, m.Name) {
			switch {
			case e.Type == TypeMarker && e.Note == MarkKillBroker:
				killed, victim = e.T, *e.Broker
			case e.Type == TypeBrokerDown && killed > 0 && *e.Broker == victim:
				down = e.T
			case e.Type == TypeMarker && e.Note == MarkRestartBroker && *e.Broker == victim:
				restarted = e.T
			case e.Type == TypeBrokerUp && restarted > 0 && *e.Broker == victim:
				up = e.T
			case e.Type == TypeCoordinator && killed > 0 && *e.Broker != victim && moved == 0:
				moved = e.T
			case e.Type == consumer.EventRebalanceStarted.String() && killed > 0 && rebalanced == 0:
				rebalanced = e.T
			case e.Type == consumer.EventOffsetsCommitted.String() && moved > 0 && e.Err == "":
				committed[e.Member] = true
			}
		}
		if killed == 0 || down < killed || restarted < down || up < restarted {
			t.Errorf("%s: broker %d killed at %.2f, gone from the metadata at %.2f, restarted at %.2f, back at %.2f: want them in this order",
				m.Name, victim, killed, down, restarted, up)
		}
		if m.Legacy {
			if rebalanced < killed {
				t.Errorf("%s: no rebalance after the broker change", m.Name)
			}
			continue
		}
		if moved < killed || len(committed) != o.Members || f.Rebalances != 0 {
			t.Errorf("%s: coordinator moved from broker %d at %.2f (killed at %.2f); members that committed after: %v; %d rebalances: want all %d members, 0 rebalances",
				m.Name, victim, moved, killed, committed, f.Rebalances, o.Members)
		}
	}
}

// TestCommandBrokers: the commands run with {broker} replaced, and a
// failing command's error carries its output.
func TestCommandBrokers(t *testing.T) {
	out := filepath.Join(t.TempDir(), "log")
	b := CommandBrokers{Kill: "echo kill {broker} >>" + out, Restart: "echo cannot restart {broker} >&2; exit 3"}
	if err := b.KillBroker(context.Background(), 2); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(out); string(got) != "kill 2\n" {
		t.Errorf("kill command wrote %q, want %q", got, "kill 2\n")
	}
	err := b.RestartBroker(context.Background(), 0)
	if err == nil || !strings.Contains(err.Error(), "exit status 3: cannot restart 0") {
		t.Errorf("failing restart: %v", err)
	}
}
