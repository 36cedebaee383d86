package dockertest

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/zkafka/zkafka/internal/testcluster"
	"github.com/zkafka/zkafka/internal/wait"
)

// sessionTimeout replaces the compose file's 18 s, so that a killed or
// paused broker leaves in a few seconds.
const sessionTimeout = 6 * time.Second

// TestCluster runs docker-compose.yml on the offline images and takes its
// containers through what a learner does to them, in order, on one cluster.
func TestCluster(t *testing.T) {
	t.Parallel()
	p := NewProject(t, Single, sessionTimeout)
	p.Up()
	h := newHost(t, p, 1)
	h.waitRegistered("1", "2", "3")

	t.Run("Listeners", func(t *testing.T) { testListeners(t, h) })
	t.Run("LegacyConsumer", func(t *testing.T) { testLegacyConsumer(t, h) })
	t.Run("ControllerKilled", func(t *testing.T) { testControllerKilled(t, h) })
	t.Run("ControllerPaused", func(t *testing.T) { testControllerPaused(t, h) })
	t.Run("IsolatedLeader", func(t *testing.T) { testIsolatedLeader(t, h) })
	t.Run("RestartKeepsData", func(t *testing.T) { testRestartKeepsData(t, h) })
	t.Run("DownWipes", func(t *testing.T) { testDownWipes(t, h) })
}

// testListeners: the host is told EXTERNAL addresses, a container on the
// cluster network INTERNAL ones, and both produce and consume.
func testListeners(t *testing.T, h *host) {
	h = h.with(t)
	md := h.mustCommand(time.Minute, "kcat", "-b", h.seed(1), "-L")
	for id := int32(1); id <= 3; id++ {
		if want := fmt.Sprintf("broker %d at %s", id, h.seed(id)); !strings.Contains(md, want) {
			t.Errorf("kcat -L from the host lacks %q:\n%s", want, md)
		}
	}
	if !strings.Contains(md, " 3 brokers:") {
		t.Errorf("kcat -L from the host does not list 3 brokers:\n%s", md)
	}

	h.createTopic("hello", "1:2:3")
	h.mustCommand(time.Minute, "sh", "-c", fmt.Sprintf("printf 'from-host-1\\nfrom-host-2\\n' | kcat -b %s -t hello -P", h.seed(2)))

	p := h.p
	versions := p.MustCompose(2*time.Minute, "run", "--rm", "-T", "tools", "broker-api-versions", "--bootstrap-server", "kafka1:19092")
	for id := 1; id <= 3; id++ {
		if want := fmt.Sprintf("kafka%d:19092 (id: %d", id, id); !strings.Contains(versions, want) {
			t.Errorf("broker-api-versions inside the network lacks %q:\n%s", want, versions)
		}
	}
	if out, err := p.ComposeInput(2*time.Minute, "from-container\n", "run", "--rm", "-T", "tools", "console-producer",
		"--bootstrap-server", "kafka2:19092", "--topic", "hello"); err != nil {
		t.Fatalf("console-producer inside the network: %v\n%s", err, out)
	}
	in := p.MustCompose(2*time.Minute, "run", "--rm", "-T", "tools", "console-consumer", "--bootstrap-server", "kafka3:19092",
		"--topic", "hello", "--from-beginning", "--max-messages", "3")
	for _, v := range []string{"from-host-1", "from-host-2", "from-container"} {
		if !strings.Contains(in, v) {
			t.Errorf("console-consumer inside the network did not read %q:\n%s", v, in)
		}
	}

	ids := p.MustCompose(2*time.Minute, "exec", "-T", "zookeeper", "zkCli.sh", "ls", "/brokers/ids")
	if !strings.Contains(ids, "[1, 2, 3]") {
		t.Errorf("zkCli.sh ls /brokers/ids in the zookeeper container:\n%s", ids)
	}
}

// testLegacyConsumer: the 0.8 consumer finds the brokers through ZooKeeper
// and reaches them from the host (EXTERNAL) and from a container (INTERNAL).
func testLegacyConsumer(t *testing.T, h *host) {
	h = h.with(t)
	h.createTopic("legacy", "2:3:1")
	want := values("legacy", 3)
	if acked := h.produce(h.seeds(), "legacy", kgo.AllISRAcks(), 30*time.Second, want); !slices.Equal(acked, want) {
		t.Fatalf("acked %v, want %v", acked, want)
	}
	fromHost := h.mustCommand(2*time.Minute, testcluster.Binary(t), "console-consumer", "--zookeeper",
		"localhost:"+strconv.Itoa(h.p.ZooKeeperPorts[0]), "--topic", "legacy", "--group", "host-readers", "--from-beginning", "--max-messages", "3")
	fromContainer := h.p.MustCompose(2*time.Minute, "run", "--rm", "-T", "tools", "console-consumer", "--zookeeper", "zookeeper:2181",
		"--topic", "legacy", "--group", "container-readers", "--from-beginning", "--max-messages", "3")
	for _, v := range want {
		if !strings.Contains(fromHost, v) {
			t.Errorf("0.8 consumer on the host did not read %s:\n%s", v, fromHost)
		}
		if !strings.Contains(fromContainer, v) {
			t.Errorf("0.8 consumer in a container did not read %s:\n%s", v, fromContainer)
		}
	}
}

// testControllerKilled: docker kill the controller's container; the
// controller moves, the epoch goes up, and no acks=all record is lost.
func testControllerKilled(t *testing.T, h *host) {
	h = h.with(t)
	h.createTopic("durable", "1:2:3", "min.insync.replicas=2")
	before := h.produce(h.seeds(), "durable", kgo.AllISRAcks(), 30*time.Second, values("before", 20))
	if len(before) != 20 {
		t.Fatalf("only %d of 20 records acknowledged before the fault", len(before))
	}
	old, epoch := h.controller()
	service := fmt.Sprintf("kafka%d", old)
	MustDocker(t, time.Minute, "kill", h.p.Container(service))
	var now, newEpoch int32
	wait.For(t, time.Minute, "a new controller", func() bool {
		now, newEpoch = h.controller()
		return now > 0 && now != old
	})
	if newEpoch <= epoch {
		t.Errorf("controller %d → %d, epoch %d → %d: the epoch did not go up", old, now, epoch, newEpoch)
	}
	after := h.produce(h.seeds(old), "durable", kgo.AllISRAcks(), 30*time.Second, values("after", 20))
	h.p.Up(service)
	h.waitRegistered("1", "2", "3")
	h.waitISR("durable", 0, 3)
	if lost := missing(append(before, after...), h.consume("durable")); len(lost) > 0 {
		t.Errorf("acknowledged acks=all records lost: %v", lost)
	}
}

// testControllerPaused: docker pause the controller past its session
// timeout; another broker takes over with a higher epoch, and the zombie,
// unpaused, does not take the controller back.
func testControllerPaused(t *testing.T, h *host) {
	h = h.with(t)
	old, epoch := h.controller()
	id := h.p.Container(fmt.Sprintf("kafka%d", old))
	MustDocker(t, time.Minute, "pause", id)
	var now, newEpoch int32
	wait.For(t, time.Minute, "a controller other than the paused one", func() bool {
		now, newEpoch = h.controller()
		return now > 0 && now != old
	})
	h.waitRegistered(slices.DeleteFunc([]string{"1", "2", "3"}, func(s string) bool { return s == strconv.Itoa(int(old)) })...)
	MustDocker(t, time.Minute, "unpause", id)
	h.waitRegistered("1", "2", "3")
	h.p.WaitHealthy(fmt.Sprintf("kafka%d", old))
	if c, e := h.controller(); c != now || e != newEpoch || e <= epoch {
		t.Errorf("after unpausing broker %d: controller %d epoch %d, want %d with epoch %d (> %d)", old, c, e, now, newEpoch, epoch)
	}
	want := values("unpaused", 5)
	if acked := h.produce(h.seeds(), "durable", kgo.AllISRAcks(), 30*time.Second, want); !slices.Equal(acked, want) {
		t.Errorf("after the zombie came back only %v of %v were acknowledged", acked, want)
	}
}

// testIsolatedLeader cuts a partition's leader off from ZooKeeper and the
// other brokers (docker network disconnect of the cluster network) while the
// host still reaches it. With acks=1 it acknowledges writes that are gone once
// it rejoins; with acks=all and min.insync.replicas=2 nothing acknowledged is
// lost.
func testIsolatedLeader(t *testing.T, h *host) {
	h = h.with(t)
	// Leaders that are not the controller, so the controller stays put.
	ctl, _ := h.controller()
	leader := ctl%3 + 1
	followers := fmt.Sprintf("%d:%d", leader%3+1, (leader+1)%3+1)
	h.createTopic("isolated-1", fmt.Sprintf("%d:%s", leader, followers))
	h.createTopic("isolated-all", fmt.Sprintf("%d:%s", leader, followers), "min.insync.replicas=2")
	for _, topic := range []string{"isolated-1", "isolated-all"} {
		if acked := h.produce(h.seeds(), topic, kgo.AllISRAcks(), 30*time.Second, values("before", 10)); len(acked) != 10 {
			t.Fatalf("%s: only %d of 10 acknowledged before the fault", topic, len(acked))
		}
	}
	service := fmt.Sprintf("kafka%d", leader)
	id := h.p.Container(service)
	MustDocker(t, time.Minute, "network", "disconnect", h.p.Network("cluster"), id)

	// A client that reaches only the isolated broker, which still believes
	// it leads (a metadata refresh would otherwise send it elsewhere). Not
	// idempotent, so that records in flight fail at their delivery timeout
	// instead of being retried for ever.
	lonely := []string{h.seed(leader)}
	only := onlyTo(h.seed(leader))
	isolated1 := h.produce(lonely, "isolated-1", kgo.LeaderAck(), 10*time.Second, values("isolated", 10), only)
	isolatedAll := h.produce(lonely, "isolated-all", kgo.AllISRAcks(), 10*time.Second, values("isolated", 10), only, kgo.DisableIdempotentWrite())
	if len(isolated1) == 0 {
		t.Errorf("the isolated leader acknowledged no acks=1 write: the case shows nothing")
	}
	if len(isolatedAll) > 0 {
		t.Errorf("the isolated leader acknowledged acks=all writes with its followers cut off: %v", isolatedAll)
	}
	for _, topic := range []string{"isolated-1", "isolated-all"} {
		wait.For(t, time.Minute, topic+" led by another broker", func() bool {
			l := h.state(topic, 0).Leader
			return l > 0 && l != leader
		})
	}
	later := h.produce(h.seeds(leader), "isolated-all", kgo.AllISRAcks(), 30*time.Second, values("later", 10))

	MustDocker(t, time.Minute, "network", "connect", "--alias", service, h.p.Network("cluster"), id)
	h.waitRegistered("1", "2", "3")
	h.waitISR("isolated-1", 0, 3)
	h.waitISR("isolated-all", 0, 3)

	got1 := h.consume("isolated-1")
	if lost := missing(values("before", 10), got1); len(lost) > 0 {
		t.Errorf("isolated-1: records acknowledged by all replicas before the fault lost: %v", lost)
	}
	if kept := slices.DeleteFunc(slices.Clone(isolated1), func(v string) bool { return !slices.Contains(got1, v) }); len(kept) > 0 {
		t.Errorf("isolated-1: acks=1 writes to the isolated leader survived its return, want them truncated: %v", kept)
	}
	gotAll := h.consume("isolated-all")
	if lost := missing(append(append(values("before", 10), isolatedAll...), later...), gotAll); len(lost) > 0 {
		t.Errorf("isolated-all: acknowledged acks=all records lost: %v", lost)
	}
	t.Logf("isolated leader %d: %d acks=1 writes acknowledged, then truncated; no acks=all write acknowledged", leader, len(isolated1))
}

// testRestartKeepsData: down and up keep ZooKeeper's and the brokers' data,
// and the non-root brokers still own and write their volumes.
func testRestartKeepsData(t *testing.T, h *host) {
	h = h.with(t)
	p := h.p
	before := h.consume("durable")
	p.MustCompose(3*time.Minute, "down", "--timeout", "10")
	p.Up()
	h.waitRegistered("1", "2", "3")
	h.waitISR("durable", 0, 3)
	if got := h.consume("durable"); !slices.Equal(got, before) || len(got) == 0 {
		t.Errorf("after down and up, durable holds %d records, want the %d it had", len(got), len(before))
	}
	want := values("restarted", 3)
	if acked := h.produce(h.seeds(), "durable", kgo.AllISRAcks(), 30*time.Second, want); !slices.Equal(acked, want) {
		t.Errorf("after down and up, acked %v of %v", acked, want)
	}
	for n := 1; n <= 3; n++ {
		owner := MustDocker(t, time.Minute, "run", "--rm", "-v", p.Volume(fmt.Sprintf("kafka%d-data", n))+":/v",
			"--entrypoint", "stat", "zkafka-zookeeper:offline", "-c", "%u:%g %n", "/v", "/v/data", "/v/data/durable-0")
		for _, line := range strings.Split(strings.TrimSpace(owner), "\n") {
			if !strings.HasPrefix(line, "65532:65532 ") {
				t.Errorf("kafka%d's volume: %s, want it owned by the broker's user 65532", n, line)
			}
		}
	}
}

// testDownWipes: down -v deletes ZooKeeper's and the brokers' volumes
// together.
func testDownWipes(t *testing.T, h *host) {
	h = h.with(t)
	h.p.MustCompose(3*time.Minute, "down", "-v", "--timeout", "10")
	left := MustDocker(t, time.Minute, "volume", "ls", "-q", "--filter", "label=com.docker.compose.project="+h.p.Name)
	if strings.TrimSpace(left) != "" {
		t.Errorf("volumes left after down -v: %s", left)
	}
}
