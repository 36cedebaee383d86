package lab

import (
	"context"
	"fmt"
	"maps"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/consumer"
)

// The clients a run's members can be (Options.Client).
const (
	ClientZkafka = "zkafka" // the consumer package, both kinds of mode
	ClientKgo    = "kgo"    // franz-go's kgo consumer, coordinator modes only
)

// memberClient is a member's consumer: zkafka's consumer.Consumer or a
// kgoMember.
type memberClient interface {
	// Poll returns the next batch; a coordinator member rejoins a
	// rebalance only from Poll, once the batch before was processed.
	Poll(ctx context.Context) ([]consumer.Record, error)
	// Commit commits the positions of what Poll returned.
	Commit(ctx context.Context) error
	Stats() consumer.Stats
	CutNetwork(d time.Duration)
	Kill()
	Close(ctx context.Context) error
}

// kgoMember is a coordinator-mode member run by franz-go's kgo consumer.
// kgo has no event stream, so its rebalance callbacks, its hooks and the
// member's Poll and Commit are turned into the events zkafka's consumer
// emits, and every figure is computed the same way for both:
//
//	OnPartitionsRevoked, eager (before JoinGroup)  rebalance-started, fetching-paused, partitions-revoked
//	OnPartitionsRevoked, cooperative, none         rebalance-started (kgo ends a session before each JoinGroup)
//	OnPartitionsRevoked, cooperative, some         partitions-revoked; a second round follows
//	OnPartitionsAssigned (after SyncGroup)         partitions-assigned, joined; unless a second round is owed,
//	                                               rebalance-done and fetching-resumed
//	OnPartitionsLost                               partitions-lost
//	HookGroupManageError (kgo rejoins)             rebalance-failed if one was under way, rebalance-started
//	Commit                                         offsets-committed
//
// BlockRebalanceOnPoll makes kgo run the callbacks only between Polls, so
// it too rejoins only once the batch in hand is processed.
type kgoMember struct {
	cl       *kgo.Client
	topic    string
	eager    bool
	maxPoll  int
	emit     func(consumer.Event)
	log      *zap.Logger
	net      *cuttableDialer
	joined   chan struct{} // closed at the first assignment
	joinOnce sync.Once
	// killed silences the callbacks: a killed member commits nothing and
	// says nothing; closing marks the revocation of a graceful close.
	killed, closing atomic.Bool

	requests, joinGroups, syncGroups, heartbeats, rebalances, records atomic.Int64

	mu          sync.Mutex // the rebalance state below; kgo calls back from its own goroutines
	rebalancing bool
	paused      bool
	secondRound bool // a cooperative member revoked partitions: it joins again at once
}

// kgoBalancers are the kgo balancers of the modes' strategies.
var kgoBalancers = map[string]func() kgo.GroupBalancer{
	"range":              kgo.RangeBalancer,
	"roundrobin":         kgo.RoundRobinBalancer,
	"sticky":             kgo.StickyBalancer,
	"cooperative-sticky": kgo.CooperativeStickyBalancer,
}

// newKgoMember starts a kgo member and waits for its first assignment, as
// consumer.New waits for its first join.
func newKgoMember(ctx context.Context, mr *modeRun, name string) (*kgoMember, error) {
	r := mr.r
	balancer, ok := kgoBalancers[mr.mode.Strategy]
	if !ok {
		return nil, fmt.Errorf("no kgo balancer for strategy %s", mr.mode.Strategy)
	}
	k := &kgoMember{
		topic: r.o.Topic, eager: mr.mode.Strategy != "cooperative-sticky", maxPoll: r.o.MaxPollRecords,
		emit: func(ev consumer.Event) { r.consumerEvent(mr.mode.Name, name, ev) },
		log:  r.log.With(zap.String("mode", mr.mode.Name), zap.String("member", name), zap.String("client", ClientKgo)),
		net:  &cuttableDialer{conns: map[*trackedConn]bool{}}, joined: make(chan struct{}),
	}
	opts := []kgo.Opt{
		kgo.SeedBrokers(r.o.Bootstrap...), kgo.ClientID(name), kgo.Dialer(k.net.DialContext),
		kgo.ConsumerGroup(mr.group), kgo.ConsumeTopics(r.o.Topic), kgo.Balancers(balancer()),
		kgo.SessionTimeout(r.o.SessionTimeout), kgo.HeartbeatInterval(r.o.HeartbeatInterval),
		kgo.RebalanceTimeout(r.o.MaxPollInterval),
		// The application commits what it processed, after each batch and
		// before giving partitions up, as the zkafka members do.
		kgo.DisableAutoCommit(), kgo.BlockRebalanceOnPoll(),
		kgo.OnPartitionsAssigned(k.assigned), kgo.OnPartitionsRevoked(k.revoked), kgo.OnPartitionsLost(k.lost),
		kgo.WithHooks(k), kgo.WithLogger(kgoLogger{k.log.Sugar()}),
	}
	if mr.mode.Static {
		opts = append(opts, kgo.InstanceID(name))
	}
	k.mu.Lock()
	k.startRebalanceLocked()
	k.mu.Unlock()
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("kgo client: %w", err)
	}
	k.cl = cl
	select {
	case <-k.joined:
		return k, nil
	case <-ctx.Done():
		k.Kill()
		return nil, fmt.Errorf("join group %s: %w", mr.group, ctx.Err())
	}
}

// startRebalanceLocked marks a rebalance under way, once; k.mu is held.
func (k *kgoMember) startRebalanceLocked() {
	if k.rebalancing {
		return
	}
	k.rebalancing = true
	k.rebalances.Add(1)
	k.emit(consumer.Event{Type: consumer.EventRebalanceStarted})
}

func (k *kgoMember) revoked(ctx context.Context, cl *kgo.Client, parts map[string][]int32) {
	if k.killed.Load() {
		return
	}
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	_ = k.commit(cctx, cl) // a refusal is in the event log
	cancel()
	ps := parts[k.topic]
	k.mu.Lock()
	defer k.mu.Unlock()
	switch {
	case k.closing.Load():
	case k.eager:
		k.startRebalanceLocked()
		if !k.paused {
			k.paused = true
			k.emit(consumer.Event{Type: consumer.EventFetchingPaused})
		}
	default:
		k.startRebalanceLocked()
		k.secondRound = k.secondRound || len(ps) > 0
	}
	if len(ps) > 0 {
		k.emit(consumer.Event{Type: consumer.EventPartitionsRevoked, Partitions: map[string][]int32{k.topic: ps}})
	}
}

func (k *kgoMember) assigned(_ context.Context, cl *kgo.Client, parts map[string][]int32) {
	if k.killed.Load() {
		return
	}
	_, gen := cl.GroupMetadata()
	ps := parts[k.topic]
	k.mu.Lock()
	defer k.mu.Unlock()
	k.startRebalanceLocked()
	if len(ps) > 0 {
		k.emit(consumer.Event{Type: consumer.EventPartitionsAssigned, Partitions: map[string][]int32{k.topic: ps}, Generation: gen})
	}
	k.emit(consumer.Event{Type: consumer.EventJoined, Generation: gen})
	if !k.secondRound {
		k.rebalancing = false
		k.emit(consumer.Event{Type: consumer.EventRebalanceDone, Generation: gen})
		if k.paused {
			k.paused = false
			k.emit(consumer.Event{Type: consumer.EventFetchingResumed})
		}
	}
	k.secondRound = false
	k.joinOnce.Do(func() { close(k.joined) })
}

func (k *kgoMember) lost(_ context.Context, _ *kgo.Client, parts map[string][]int32) {
	if k.killed.Load() {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.eager && !k.paused {
		k.paused = true
		k.emit(consumer.Event{Type: consumer.EventFetchingPaused})
	}
	if ps := parts[k.topic]; len(ps) > 0 {
		k.emit(consumer.Event{Type: consumer.EventPartitionsLost, Partitions: map[string][]int32{k.topic: ps}})
	}
}

// OnGroupManageError is kgo's group loop failing (it called OnPartitionsLost
// just before): it backs off and joins again.
func (k *kgoMember) OnGroupManageError(err error) {
	if k.killed.Load() || k.closing.Load() {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.rebalancing {
		k.rebalancing, k.secondRound = false, false
		k.emit(consumer.Event{Type: consumer.EventRebalanceFailed, Err: err})
	}
	k.startRebalanceLocked()
}

// OnBrokerWrite counts the requests sent.
func (k *kgoMember) OnBrokerWrite(_ kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, err error) {
	if err != nil {
		return
	}
	k.requests.Add(1)
	switch key {
	case kmsg.JoinGroup.Int16():
		k.joinGroups.Add(1)
	case kmsg.SyncGroup.Int16():
		k.syncGroups.Add(1)
	case kmsg.Heartbeat.Int16():
		k.heartbeats.Add(1)
	}
}

// Poll allows the rebalance the batch before held back, then polls.
func (k *kgoMember) Poll(ctx context.Context) ([]consumer.Record, error) {
	k.cl.AllowRebalance()
	fs := k.cl.PollRecords(ctx, k.maxPoll)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if fs.IsClientClosed() {
		return nil, kgo.ErrClientClosed
	}
	fs.EachError(func(topic string, p int32, err error) {
		k.log.Info("fetch error", zap.String("topic", topic), zap.Int32("partition", p), zap.Error(err))
	})
	var out []consumer.Record
	fs.EachRecord(func(rec *kgo.Record) {
		out = append(out, consumer.Record{Topic: rec.Topic, Partition: rec.Partition, Offset: rec.Offset,
			LeaderEpoch: rec.LeaderEpoch, Timestamp: rec.Timestamp, Key: rec.Key, Value: rec.Value})
	})
	k.records.Add(int64(len(out)))
	return out, nil
}

// Commit commits the offsets after what Poll returned, if they moved.
func (k *kgoMember) Commit(ctx context.Context) error { return k.commit(ctx, k.cl) }

// commit is Commit with the client the caller has: kgo's callbacks may run
// before newKgoMember has stored k.cl.
func (k *kgoMember) commit(ctx context.Context, cl *kgo.Client) error {
	uncommitted := cl.UncommittedOffsets()[k.topic]
	if len(uncommitted) == 0 {
		return nil
	}
	err := cl.CommitUncommittedOffsets(ctx)
	ps := slices.Sorted(maps.Keys(uncommitted))
	k.emit(consumer.Event{Type: consumer.EventOffsetsCommitted, Partitions: map[string][]int32{k.topic: ps}, Err: err})
	return err
}

// Stats are the counters kgo's hooks and the callbacks give; kgo talks to
// no ZooKeeper.
func (k *kgoMember) Stats() consumer.Stats {
	return consumer.Stats{
		KafkaRequests: k.requests.Load(), JoinGroupRequests: k.joinGroups.Load(), SyncGroupRequests: k.syncGroups.Load(),
		HeartbeatRequests: k.heartbeats.Load(), Rebalances: k.rebalances.Load(), RecordsDelivered: k.records.Load(),
	}
}

// CutNetwork closes the member's connections and fails its dials for d.
func (k *kgoMember) CutNetwork(d time.Duration) { k.net.cut(time.Now().Add(d)) }

// Kill stops the member as SIGKILL would: the network goes first, so no
// commit and no LeaveGroup reach the cluster, and the callbacks say
// nothing.
func (k *kgoMember) Kill() {
	k.killed.Store(true)
	k.net.kill()
	k.cl.AllowRebalance()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_ = k.cl.LeaveGroupContext(ctx) // returns at once; Close waits for the group loop
	k.cl.Close()
}

// Close commits in the last revocation, leaves the group (a static member
// does not) and closes the client.
func (k *kgoMember) Close(ctx context.Context) error {
	k.closing.Store(true)
	k.cl.AllowRebalance()
	err := k.cl.LeaveGroupContext(ctx)
	k.cl.Close()
	if err != nil {
		return fmt.Errorf("leave group: %w", err)
	}
	return nil
}

// kgoLogger writes kgo's log lines to the run's logger.
type kgoLogger struct{ s *zap.SugaredLogger }

func (kgoLogger) Level() kgo.LogLevel { return kgo.LogLevelInfo }

func (l kgoLogger) Log(level kgo.LogLevel, msg string, keyvals ...any) {
	switch level {
	case kgo.LogLevelError:
		l.s.Errorw(msg, keyvals...)
	case kgo.LogLevelWarn:
		l.s.Warnw(msg, keyvals...)
	case kgo.LogLevelInfo:
		l.s.Infow(msg, keyvals...)
	default:
		l.s.Debugw(msg, keyvals...)
	}
}

// cuttableDialer dials as net.Dialer does until cut: then its connections
// close and dials fail with consumer.ErrNetworkCut until the cut ends, as
// consumer.CutNetwork does to zkafka's consumer; killed, for good.
type cuttableDialer struct {
	mu    sync.Mutex
	until time.Time
	dead  bool
	conns map[*trackedConn]bool
}

func (d *cuttableDialer) isCut() bool { return d.dead || time.Now().Before(d.until) }

// DialContext is kgo.Dialer's function.
func (d *cuttableDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	d.mu.Lock()
	cut := d.isCut()
	d.mu.Unlock()
	if cut {
		return nil, consumer.ErrNetworkCut
	}
	var nd net.Dialer
	c, err := nd.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.isCut() {
		c.Close()
		return nil, consumer.ErrNetworkCut
	}
	tc := &trackedConn{Conn: c, d: d}
	d.conns[tc] = true
	return tc, nil
}

func (d *cuttableDialer) cut(until time.Time) {
	d.mu.Lock()
	d.until = until
	conns := d.conns
	d.conns = map[*trackedConn]bool{}
	d.mu.Unlock()
	for c := range conns {
		c.Conn.Close()
	}
}

func (d *cuttableDialer) kill() {
	d.mu.Lock()
	d.dead = true
	d.mu.Unlock()
	d.cut(time.Time{})
}

// trackedConn is a connection its dialer can close.
type trackedConn struct {
	net.Conn
	d *cuttableDialer
}

func (c *trackedConn) Close() error {
	c.d.mu.Lock()
	delete(c.d.conns, c)
	c.d.mu.Unlock()
	return c.Conn.Close()
}
