package controller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/goleak"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"
	"go.uber.org/zap/zaptest/observer"

	"github.com/zkafka/zkafka/internal/wait"
	"github.com/zkafka/zkafka/internal/zkclient"
	"github.com/zkafka/zkafka/internal/zktest"
	"github.com/zkafka/zkafka/zkpaths"
)

func TestMain(m *testing.M) { zktest.Main(m) }

const waitTimeout = 20 * time.Second

// cluster is a test's ZooKeeper namespace (a fresh chroot on the shared server), the test's own
// session for reading and writing znodes, fake brokers that are only /brokers/ids registrations,
// and a recorder of every request the controllers send them.
type cluster struct {
	t       *testing.T
	connect string
	admin   *zkclient.Client
	sent    *recorder
	logger  *zap.Logger
	logs    *observer.ObservedLogs
	// bulkReadMin, if set, replaces the controllers' bulkReadMin, so that small reads go through
	// their read sessions.
	bulkReadMin int
}

func newCluster(t *testing.T) *cluster {
	t.Helper()
	connect := zktest.NewChroot(t) // starts the shared server first, so goleak ignores it
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() {
		if err := goleak.Find(ignore); err != nil {
			t.Error(err)
		}
	})
	core, logs := observer.New(zapcore.InfoLevel)
	c := &cluster{
		t:       t,
		connect: connect,
		sent:    &recorder{},
		logger:  zap.New(zapcore.NewTee(zaptest.NewLogger(t).Core(), core)),
		logs:    logs,
	}
	c.admin = c.session()
	for _, p := range zkpaths.PersistentPaths {
		if err := c.admin.CreateIfMissing(p, nil); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// session opens a ZooKeeper session that the test closes at its end.
func (c *cluster) session() *zkclient.Client {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	zkc, err := zkclient.Connect(ctx, zkclient.Config{Connect: c.connect, SessionTimeout: 6 * time.Second, Logger: c.logger})
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(func() { _ = zkc.Close() })
	return zkc
}

// startController starts broker id's controller on its own session.
func (c *cluster) startController(id int32, unclean bool) (*Controller, *zkclient.Client) {
	c.t.Helper()
	zkc := c.session()
	ctl := New(Config{BrokerID: id, Logger: c.logger, Dial: c.sent.dial, UncleanLeaderElection: unclean}, zkc)
	if c.bulkReadMin > 0 {
		ctl.bulkReadMin = c.bulkReadMin
	}
	ctl.Start(context.Background())
	c.t.Cleanup(ctl.Stop) // runs before the session's Close
	return ctl, zkc
}

func brokerPort(id int32) int32 { return 9000 + id }

// registerBroker registers a fake broker on a session of its own; closing that session kills it.
func (c *cluster) registerBroker(id int32) *zkclient.Client {
	c.t.Helper()
	zkc := c.session()
	reg := zkpaths.BrokerRegistration{
		ID: id,
		Endpoints: []zkpaths.Endpoint{{
			ListenerName: "PLAINTEXT", SecurityProtocol: zkpaths.SecurityProtocolPlaintext,
			Host: "127.0.0.1", Port: brokerPort(id),
		}},
		JmxPort:   -1,
		Timestamp: time.Now().UnixMilli(),
	}
	if _, err := zkc.Create(zkpaths.BrokerPath(id), reg.Encode(), zk.FlagEphemeral, nil); err != nil {
		c.t.Fatal(err)
	}
	return zkc
}

// brokerEpoch is the czxid of the broker's registration.
func (c *cluster) brokerEpoch(id int32) int64 {
	c.t.Helper()
	_, stat, err := c.admin.Get(zkpaths.BrokerPath(id))
	if err != nil {
		c.t.Fatal(err)
	}
	return stat.Czxid
}

// createTopic writes /brokers/topics/<t> as the CreateTopics handler does and returns its id.
func (c *cluster) createTopic(topic string, partitions map[int32][]int32) [16]byte {
	c.t.Helper()
	a := zkpaths.TopicAssignment{TopicID: zkpaths.NewTopicID(), Partitions: partitions}
	if _, err := c.admin.Create(zkpaths.TopicPath(topic), a.Encode(), 0, nil); err != nil {
		c.t.Fatal(err)
	}
	id, err := zkpaths.ParseUUID(a.TopicID)
	if err != nil {
		c.t.Fatal(err)
	}
	return id
}

// writeState writes a partition state znode as a previous controller would have left it.
func (c *cluster) writeState(topic string, partition int32, l zkpaths.LeaderAndIsr) {
	c.t.Helper()
	if err := c.admin.CreateIfMissing(zkpaths.PartitionStatePath(topic, partition), l.Encode()); err != nil {
		c.t.Fatal(err)
	}
}

// state reads a partition state znode.
func (c *cluster) state(topic string, partition int32) (l zkpaths.LeaderAndIsr, version int32, ok bool) {
	c.t.Helper()
	data, stat, err := c.admin.Get(zkpaths.PartitionStatePath(topic, partition))
	if errors.Is(err, zk.ErrNoNode) {
		return zkpaths.LeaderAndIsr{}, 0, false
	}
	if err != nil {
		c.t.Fatal(err)
	}
	l, err = zkpaths.DecodeLeaderAndIsr(data)
	if err != nil {
		c.t.Fatal(err)
	}
	return l, stat.Version, true
}

// waitState waits until the partition's state znode holds want.
func (c *cluster) waitState(topic string, partition int32, want zkpaths.LeaderAndIsr) {
	c.t.Helper()
	wait.For(c.t, waitTimeout, fmt.Sprintf("state of %s-%d to be %+v", topic, partition, want), func() bool {
		got, _, ok := c.state(topic, partition)
		return ok && got.Leader == want.Leader && got.LeaderEpoch == want.LeaderEpoch &&
			slices.Equal(got.ISR, want.ISR) && got.ControllerEpoch == want.ControllerEpoch
	})
}

// controllerZnode reads /controller and /controller_epoch.
func (c *cluster) controllerZnode() (id, epoch int32) {
	c.t.Helper()
	id = -1
	if data, _, err := c.admin.Get(zkpaths.Controller); err == nil {
		reg, err := zkpaths.DecodeControllerRegistration(data)
		if err != nil {
			c.t.Fatal(err)
		}
		id = reg.BrokerID
	} else if !errors.Is(err, zk.ErrNoNode) {
		c.t.Fatal(err)
	}
	data, _, err := c.admin.Get(zkpaths.ControllerEpoch)
	if err != nil {
		c.t.Fatal(err)
	}
	if epoch, err = zkpaths.DecodeControllerEpoch(data); err != nil {
		c.t.Fatal(err)
	}
	return id, epoch
}

// logged reports whether some log line's message contains s.
func (c *cluster) logged(s string) bool {
	return c.logs.FilterMessageSnippet(s).Len() > 0
}

// sentRequest is one request a controller handed to a fake broker.
type sentRequest struct {
	to  int32
	req kmsg.Request
}

// recorder is the controllers' Dial: its clients record each request and answer it with an
// error-free response of the request's version.
type recorder struct {
	mu   sync.Mutex
	sent []sentRequest
}

func (r *recorder) dial(_ context.Context, addr string) (BrokerClient, error) {
	var port int32
	if _, err := fmt.Sscanf(addr[strings.LastIndexByte(addr, ':')+1:], "%d", &port); err != nil {
		return nil, err
	}
	return &recordingClient{r: r, to: port - brokerPort(0)}, nil
}

type recordingClient struct {
	r  *recorder
	to int32
}

func (c *recordingClient) Request(_ context.Context, req kmsg.Request) (kmsg.Response, error) {
	c.r.mu.Lock()
	c.r.sent = append(c.r.sent, sentRequest{to: c.to, req: req})
	c.r.mu.Unlock()
	resp := req.ResponseKind()
	resp.SetVersion(req.GetVersion())
	return resp, nil
}

func (c *recordingClient) Close() error { return nil }

// to returns the requests broker id received, in order.
func (r *recorder) to(id int32) []kmsg.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	var reqs []kmsg.Request
	for _, s := range r.sent {
		if s.to == id {
			reqs = append(reqs, s.req)
		}
	}
	return reqs
}

// leaderAndISR returns the partition's state in the last LeaderAndIsr broker id received that
// carried it, that request, and the topic id it gave the partition's topic.
func (r *recorder) leaderAndISR(id int32, topic string, partition int32) (*kmsg.LeaderAndISRRequest, [16]byte, *kmsg.LeaderAndISRRequestTopicPartition) {
	reqs := r.to(id)
	for i := len(reqs) - 1; i >= 0; i-- {
		req, ok := reqs[i].(*kmsg.LeaderAndISRRequest)
		if !ok {
			continue
		}
		for ti := range req.TopicStates {
			for pi := range req.TopicStates[ti].PartitionStates {
				if p := &req.TopicStates[ti].PartitionStates[pi]; req.TopicStates[ti].Topic == topic && p.Partition == partition {
					return req, req.TopicStates[ti].TopicID, p
				}
			}
		}
	}
	return nil, [16]byte{}, nil
}

// updateMetadata is leaderAndISR for UpdateMetadata.
func (r *recorder) updateMetadata(id int32, topic string, partition int32) (*kmsg.UpdateMetadataRequest, [16]byte, *kmsg.UpdateMetadataRequestTopicPartition) {
	reqs := r.to(id)
	for i := len(reqs) - 1; i >= 0; i-- {
		req, ok := reqs[i].(*kmsg.UpdateMetadataRequest)
		if !ok {
			continue
		}
		for ti := range req.TopicStates {
			for pi := range req.TopicStates[ti].PartitionStates {
				if p := &req.TopicStates[ti].PartitionStates[pi]; req.TopicStates[ti].Topic == topic && p.Partition == partition {
					return req, req.TopicStates[ti].TopicID, p
				}
			}
		}
	}
	return nil, [16]byte{}, nil
}
