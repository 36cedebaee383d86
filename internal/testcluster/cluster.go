package testcluster

import (
	"context"
	"crypto/tls"
	"fmt"
	"maps"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/zkafka/zkafka/broker"
	"github.com/zkafka/zkafka/brokerconfig"
	"github.com/zkafka/zkafka/internal/loglevels"
	"github.com/zkafka/zkafka/internal/wait"
	"github.com/zkafka/zkafka/internal/zkclient"
	"github.com/zkafka/zkafka/internal/zktest"
	"github.com/zkafka/zkafka/zkpaths"
)

// Options shape a test cluster.
type Options struct {
	// Brokers is the number of brokers, with ids 1..N. Zero means 1.
	Brokers int
	// Properties are extra server.properties entries for every broker.
	Properties map[string]string
	// ZooKeeper is a connect string (with chroot); empty means a fresh
	// chroot on the test binary's shared server (TestMain must call
	// zktest.Main).
	ZooKeeper string
	// ZooKeeperTLS is what the cluster's own ZooKeeper client connects with when ZooKeeper is
	// a secure client port (the brokers' zookeeper.ssl.* properties say theirs).
	ZooKeeperTLS *tls.Config
}

// Cluster is a running set of brokers on one ZooKeeper.
type Cluster struct {
	t       testing.TB
	ZK      string // connect string with chroot
	opts    Options
	brokers map[int32]*node
	zk      *zkclient.Client
}

type node struct {
	id     int32
	dir    string
	port   int32
	server *broker.Server
}

// Start starts the brokers and waits until a controller is elected and every
// broker knows all of them. Brokers stop at test cleanup.
func Start(t testing.TB, opts Options) *Cluster {
	t.Helper()
	if opts.Brokers == 0 {
		opts.Brokers = 1
	}
	if opts.ZooKeeper == "" {
		opts.ZooKeeper = zktest.NewChroot(t)
	}
	c := &Cluster{t: t, ZK: opts.ZooKeeper, opts: opts, brokers: map[int32]*node{}}
	// The data dir is removed after the brokers stop: cleanups run last first.
	dir := t.TempDir()
	t.Cleanup(c.Stop)
	for i := 1; i <= opts.Brokers; i++ {
		n := &node{id: int32(i), dir: filepath.Join(dir, "broker-"+strconv.Itoa(i))}
		c.brokers[n.id] = n
		c.StartBroker(n.id)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	zkc, err := zkclient.Connect(ctx, zkclient.Config{Connect: c.ZK, TLS: opts.ZooKeeperTLS})
	if err != nil {
		t.Fatalf("testcluster: connect to ZooKeeper: %v", err)
	}
	c.zk = zkc
	c.WaitForController()
	c.WaitFor("every broker to know every broker", func() bool {
		for _, n := range c.brokers {
			if n.server == nil {
				continue
			}
			if len(c.metadata(n.id).Brokers) != opts.Brokers {
				return false
			}
		}
		return true
	})
	return c
}

// Properties returns the server.properties a broker runs with.
func (c *Cluster) Properties(id int32) map[string]string {
	n := c.brokers[id]
	props := map[string]string{
		"broker.id":                        strconv.Itoa(int(id)),
		"listeners":                        fmt.Sprintf("PLAINTEXT://127.0.0.1:%d", n.port),
		"log.dirs":                         n.dir,
		"zookeeper.connect":                c.ZK,
		"zookeeper.session.timeout.ms":     "6000",
		"offsets.topic.replication.factor": "1",
		// A controlled shutdown that cannot finish (the last ISR member
		// stopping) retries quickly instead of every 5 s.
		"controlled.shutdown.retry.backoff.ms": "100",
	}
	maps.Copy(props, c.opts.Properties)
	return props
}

// StartBroker starts (or restarts) a broker in process, on the port it had
// before if it ran already.
func (c *Cluster) StartBroker(id int32) {
	c.t.Helper()
	n := c.brokers[id]
	cfg, err := brokerconfig.New(c.Properties(id))
	if err != nil {
		c.t.Fatalf("testcluster: broker %d config: %v", id, err)
	}
	levels, _ := loglevels.New("DEBUG") // valid, and zaptest's level
	s := broker.NewServer(cfg, zaptest.NewLogger(c.t, zaptest.WrapOptions(zap.WrapCore(levels.Wrap))).Named(fmt.Sprintf("broker-%d", id)))
	s.SetLogLevels(levels)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.Start(ctx); err != nil {
		c.t.Fatalf("testcluster: start broker %d: %v", id, err)
	}
	addr, _ := s.ListenerAddr("PLAINTEXT")
	_, portStr, _ := splitHostPort(addr)
	port, _ := strconv.Atoi(portStr)
	n.port, n.server = int32(port), s
}

// StopBroker shuts a broker down cleanly (SIGTERM's path).
func (c *Cluster) StopBroker(id int32) {
	c.t.Helper()
	n := c.brokers[id]
	if n.server == nil {
		return
	}
	if err := n.server.Shutdown(); err != nil {
		c.t.Errorf("testcluster: shut down broker %d: %v", id, err)
	}
	n.server = nil
}

// Stop shuts every broker down and closes the harness's ZooKeeper session;
// it runs at test cleanup and may be called earlier (leak checks).
func (c *Cluster) Stop() {
	for id := range c.brokers {
		c.StopBroker(id)
	}
	if c.zk != nil {
		c.zk.Close()
		c.zk = nil
	}
}

// Broker returns the running broker started i-th (1-based), which is broker.id
// i unless the properties ask for generated ids.
func (c *Cluster) Broker(id int32) *broker.Server { return c.brokers[id].server }

// Addr returns a broker's host:port.
func (c *Cluster) Addr(id int32) string {
	return fmt.Sprintf("127.0.0.1:%d", c.brokers[id].port)
}

// BootstrapAddrs returns the addresses of the running brokers.
func (c *Cluster) BootstrapAddrs() []string {
	var addrs []string
	for id, n := range c.brokers {
		if n.server != nil {
			addrs = append(addrs, c.Addr(id))
		}
	}
	return addrs
}

// ZooKeeper returns the harness's own ZooKeeper session (in the cluster's
// chroot), for reading znodes in assertions.
func (c *Cluster) ZooKeeper() *zkclient.Client { return c.zk }

// Client returns a kgo client bootstrapped on the cluster, closed at cleanup.
func (c *Cluster) Client(opts ...kgo.Opt) *kgo.Client {
	c.t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(c.BootstrapAddrs()...)}, opts...)...)
	if err != nil {
		c.t.Fatalf("testcluster: kgo client: %v", err)
	}
	c.t.Cleanup(cl.Close)
	return cl
}

// WaitFor is wait.For with the cluster's test and a 30 s timeout.
func (c *Cluster) WaitFor(what string, cond func() bool) {
	c.t.Helper()
	wait.For(c.t, 30*time.Second, what, cond)
}

// WaitForController waits until /controller names a running broker that
// acts as controller, and returns its broker id.
func (c *Cluster) WaitForController() int32 {
	c.t.Helper()
	id := int32(-1)
	c.WaitFor("a controller", func() bool {
		data, _, err := c.zk.Get(zkpaths.Controller)
		if err != nil {
			return false
		}
		reg, err := zkpaths.DecodeControllerRegistration(data)
		if err != nil {
			return false
		}
		for _, n := range c.brokers {
			if n.server != nil && n.server.BrokerID() == reg.BrokerID && n.server.Controller().IsActive() {
				id = reg.BrokerID
				return true
			}
		}
		return false
	})
	return id
}

// PartitionState reads a partition's state znode.
func (c *Cluster) PartitionState(topic string, partition int32) (zkpaths.LeaderAndIsr, bool) {
	data, _, err := c.zk.Get(zkpaths.PartitionStatePath(topic, partition))
	if err != nil {
		return zkpaths.LeaderAndIsr{}, false
	}
	s, err := zkpaths.DecodeLeaderAndIsr(data)
	return s, err == nil
}

// WaitForLeader waits until the partition has a leader in ZooKeeper that
// every running broker's metadata agrees on, and returns it.
func (c *Cluster) WaitForLeader(topic string, partition int32) int32 {
	c.t.Helper()
	leader := int32(-1)
	c.WaitFor(fmt.Sprintf("a leader for %s-%d", topic, partition), func() bool {
		s, ok := c.PartitionState(topic, partition)
		if !ok || s.Leader < 0 {
			return false
		}
		for id, n := range c.brokers {
			if n.server == nil {
				continue
			}
			if l, ok := MetadataLeader(c.Addr(id), topic, partition); !ok || l != s.Leader {
				return false
			}
		}
		leader = s.Leader
		return true
	})
	return leader
}
