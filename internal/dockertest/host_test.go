package dockertest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/zkafka/zkafka/internal/testcluster"
	"github.com/zkafka/zkafka/internal/wait"
	"github.com/zkafka/zkafka/zkpaths"
)

// host is what a learner has on the host next to a compose project: the
// published ports, kcat, zkafka's tools and a ZooKeeper client.
type host struct {
	t  *testing.T
	p  *Project
	zk *zk.Conn
}

func newHost(t *testing.T, p *Project, zkPorts int) *host {
	t.Helper()
	var servers []string
	for _, port := range p.ZooKeeperPorts[:zkPorts] {
		servers = append(servers, "localhost:"+strconv.Itoa(port))
	}
	conn, events, err := zk.Connect(servers, 10*time.Second, zk.WithLogger(quiet{}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	wait.For(t, time.Minute, "a ZooKeeper session from the host", func() bool {
		select {
		case ev := <-events:
			return ev.State == zk.StateHasSession
		default:
			return conn.State() == zk.StateHasSession
		}
	})
	return &host{t: t, p: p, zk: conn}
}

// with returns the host as seen by t, a subtest of the one that made it.
// The containers' logs are taken when t fails, not only at the end of the
// parent: a later subtest may have wiped them by then.
func (h *host) with(t *testing.T) *host {
	p := h.p.For(t)
	t.Cleanup(func() {
		if t.Failed() {
			out, _ := p.Compose(time.Minute, "logs", "--no-color", "--tail", "80")
			t.Logf("%s logs when %s failed:\n%s", p.Name, t.Name(), out)
		}
	})
	return &host{t: t, p: p, zk: h.zk}
}

type quiet struct{}

func (quiet) Printf(string, ...any) {}

// seed is broker id's EXTERNAL address as the host reaches it.
func (h *host) seed(id int32) string {
	return "localhost:" + strconv.Itoa(h.p.BrokerPorts[id-1])
}

func (h *host) seeds(except ...int32) []string {
	var s []string
	for id := int32(1); id <= 3; id++ {
		if !slices.Contains(except, id) {
			s = append(s, h.seed(id))
		}
	}
	return s
}

// registered returns the broker ids under /brokers/ids.
func (h *host) registered() []string {
	ids, _, err := h.zk.Children(zkpaths.BrokerIDs)
	if err != nil {
		return nil
	}
	slices.Sort(ids)
	return ids
}

func (h *host) waitRegistered(want ...string) {
	h.t.Helper()
	wait.For(h.t, 2*time.Minute, fmt.Sprintf("/brokers/ids = %v", want), func() bool {
		return slices.Equal(h.registered(), want)
	})
}

// controller returns the broker in /controller (-1 when there is none) and
// /controller_epoch.
func (h *host) controller() (int32, int32) {
	h.t.Helper()
	id := int32(-1)
	if data, _, err := h.zk.Get(zkpaths.Controller); err == nil {
		reg, err := zkpaths.DecodeControllerRegistration(data)
		if err != nil {
			h.t.Fatal(err)
		}
		id = reg.BrokerID
	}
	var epoch int32
	if data, _, err := h.zk.Get(zkpaths.ControllerEpoch); err == nil {
		if epoch, err = zkpaths.DecodeControllerEpoch(data); err != nil {
			h.t.Fatal(err)
		}
	}
	return id, epoch
}

// state returns a partition's leader and ISR from its state znode.
func (h *host) state(topic string, partition int32) zkpaths.LeaderAndIsr {
	h.t.Helper()
	data, _, err := h.zk.Get(zkpaths.PartitionStatePath(topic, partition))
	if err != nil {
		return zkpaths.LeaderAndIsr{Leader: -1}
	}
	s, err := zkpaths.DecodeLeaderAndIsr(data)
	if err != nil {
		h.t.Fatal(err)
	}
	return s
}

// waitISR waits until the partition's state znode has a leader and size
// replicas in sync (waitZooKeeperISR), and every broker's metadata names that
// leader. The znode alone is not enough: the controller writes it before its
// LeaderAndIsr and UpdateMetadata reach the brokers, and a client in that gap
// hears UNKNOWN_TOPIC_OR_PARTITION, which franz-go gives up on after four
// tries.
func (h *host) waitISR(topic string, partition int32, size int) zkpaths.LeaderAndIsr {
	h.t.Helper()
	var s zkpaths.LeaderAndIsr
	wait.For(h.t, 2*time.Minute, fmt.Sprintf("%s-%d with %d replicas in sync, its leader known to every broker", topic, partition, size), func() bool {
		var ok bool
		if s, ok = h.inSync(topic, partition, size); !ok {
			return false
		}
		for _, addr := range h.seeds() {
			if l, ok := testcluster.MetadataLeader(addr, topic, partition); !ok || l != s.Leader {
				return false
			}
		}
		return true
	})
	return s
}

// waitZooKeeperISR waits until the partition's state znode has a leader and
// size replicas in sync. A cluster whose listeners the host cannot reach in
// plaintext is waited for this way.
func (h *host) waitZooKeeperISR(topic string, partition int32, size int) zkpaths.LeaderAndIsr {
	h.t.Helper()
	var s zkpaths.LeaderAndIsr
	wait.For(h.t, 2*time.Minute, fmt.Sprintf("%s-%d with %d replicas in sync", topic, partition, size), func() bool {
		var ok bool
		s, ok = h.inSync(topic, partition, size)
		return ok
	})
	return s
}

// inSync reads the partition's state znode and says whether it has a leader
// and size replicas in sync.
func (h *host) inSync(topic string, partition int32, size int) (zkpaths.LeaderAndIsr, bool) {
	s := h.state(topic, partition)
	return s, s.Leader >= 0 && len(s.ISR) == size
}

// command runs a program on the host (kcat, zkafka) and returns its output.
func (h *host) command(timeout time.Duration, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	return string(out), err
}

func (h *host) mustCommand(timeout time.Duration, name string, args ...string) string {
	h.t.Helper()
	out, err := h.command(timeout, name, args...)
	if err != nil {
		h.t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	return out
}

// createTopic creates a one-partition topic on the given replicas (the first
// leads) with topic configs key=value.
func (h *host) createTopic(topic, replicas string, configs ...string) {
	h.t.Helper()
	args := []string{"topics", "--bootstrap-server", strings.Join(h.seeds(), ","), "--create", "--topic", topic, "--replica-assignment", replicas}
	for _, c := range configs {
		args = append(args, "--config", c)
	}
	h.mustCommand(time.Minute, testcluster.Binary(h.t), args...)
	h.waitISR(topic, 0, len(strings.Split(replicas, ":")))
}

// produce sends values to partition 0 of topic through seeds, all at once,
// and returns those the cluster acknowledged within timeout.
func (h *host) produce(seeds []string, topic string, acks kgo.Acks, timeout time.Duration, values []string, extra ...kgo.Opt) []string {
	h.t.Helper()
	opts := []kgo.Opt{
		kgo.SeedBrokers(seeds...),
		kgo.RequiredAcks(acks),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.RecordDeliveryTimeout(timeout),
		kgo.ProduceRequestTimeout(timeout),
	}
	if acks != kgo.AllISRAcks() {
		opts = append(opts, kgo.DisableIdempotentWrite())
	}
	opts = append(opts, extra...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		h.t.Fatal(err)
	}
	defer cl.Close()
	var (
		mu     sync.Mutex
		acked  []string
		failed = map[string]int{} // error text to the records it failed
		wg     sync.WaitGroup
	)
	ctx, cancel := context.WithTimeout(context.Background(), timeout+10*time.Second)
	defer cancel()
	for _, v := range values {
		wg.Add(1)
		cl.Produce(ctx, &kgo.Record{Topic: topic, Partition: 0, Value: []byte(v)}, func(r *kgo.Record, err error) {
			defer wg.Done()
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failed[err.Error()]++
				return
			}
			acked = append(acked, string(r.Value))
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(timeout + time.Minute):
		h.t.Fatalf("producing to %s through %v: records still unresolved %v after their delivery timeout", topic, seeds, timeout+time.Minute)
	}
	mu.Lock()
	defer mu.Unlock()
	// Some tests expect failures; a test that did not says why from these.
	for msg, n := range failed {
		h.t.Logf("producing to %s: %d records failed: %s", topic, n, msg)
	}
	slices.Sort(acked)
	return acked
}

// onlyTo keeps a client from connecting anywhere but addr.
func onlyTo(addr string) kgo.Opt {
	var d net.Dialer
	return kgo.Dialer(func(ctx context.Context, network, host string) (net.Conn, error) {
		if host != addr {
			return nil, fmt.Errorf("this client reaches only %s, not %s", addr, host)
		}
		return d.DialContext(ctx, network, host)
	})
}

// consume reads topic from the beginning to its end with kcat from the host.
func (h *host) consume(topic string) []string {
	h.t.Helper()
	args := []string{"-b", strings.Join(h.seeds(), ","), "-t", topic, "-C", "-o", "beginning", "-e", "-q", "-f", "%s\n",
		"-d", "metadata,topic,fetch,protocol,broker"}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "kcat", args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		// What librdkafka saw says why it did not reach the end.
		lines := strings.Split(stderr.String(), "\n")
		h.t.Fatalf("kcat %v: %v\n%s\nstate %+v; its last debug lines:\n%s", args, err, stdout.String(), h.state(topic, 0),
			strings.Join(lines[max(0, len(lines)-120):], "\n"))
	}
	values := strings.Fields(stdout.String())
	slices.Sort(values)
	return values
}

// missing returns the values of want that got lacks.
func missing(want, got []string) []string {
	var m []string
	for _, w := range want {
		if !slices.Contains(got, w) {
			m = append(m, w)
		}
	}
	return m
}

func values(prefix string, n int) []string {
	v := make([]string, n)
	for i := range v {
		v[i] = fmt.Sprintf("%s-%03d", prefix, i)
	}
	return v
}
