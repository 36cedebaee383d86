package consumer

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/zkafka/zkafka/kafka"
)

// Consumer is a member of a consumer group in either mode. Poll, Commit and
// Close may be called from any goroutine; records come back in offset order
// per partition.
type Consumer struct {
	cfg     Config
	log     *zap.Logger
	stats   counters
	events  eventStream
	cluster *cluster
	group   group

	mu        sync.Mutex
	assigned  map[kafka.TopicPartition]int64 // position: next offset to deliver, -1 = reset
	committed map[kafka.TopicPartition]int64 // last offsets stored, to skip unchanged commits
	paused    bool                           // a rebalance is running: fetch nothing
	changed   chan struct{}                  // closed when assigned or paused changes
	closed    bool

	// lastPoll (unix nanoseconds) is when Poll was last entered or left and
	// inPoll how many Polls run: together they tell max.poll.interval.ms
	// whether the application still polls.
	lastPoll atomic.Int64
	inPoll   atomic.Int32

	ctx    context.Context // cancelled by Close: stops every goroutine
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// group is what a mode does: join or register, keep membership, store offsets.
type group interface {
	// start joins the group; the first rebalance may finish later.
	start(ctx context.Context) error
	// run keeps the membership until ctx is done.
	run(ctx context.Context)
	// commit stores offsets (next offsets to consume).
	commit(ctx context.Context, offsets map[kafka.TopicPartition]int64) error
	// leave ends the membership.
	leave(ctx context.Context) error
	// memberID is the consumer id (legacy) or member id (coordinator).
	memberID() string
	// abandon drops the membership's connections with no goodbye, as a
	// killed process would.
	abandon()
	// poll runs on the application's goroutine at each round of Poll,
	// before fetching: the coordinator modes rejoin and reconcile from
	// there. An error ends the Poll.
	poll(ctx context.Context) error
}

// New starts a consumer: it registers with ZooKeeper or joins through the
// group coordinator, depending on cfg. It returns once the consumer is a
// member; its first assignment may follow (watch EventPartitionsAssigned).
func New(ctx context.Context, cfg Config) (*Consumer, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	c := &Consumer{
		cfg:       cfg,
		log:       cfg.Logger.Named("consumer").With(zap.String("group", cfg.GroupID)),
		assigned:  map[kafka.TopicPartition]int64{},
		committed: map[kafka.TopicPartition]int64{},
		changed:   make(chan struct{}),
	}
	c.events.onEvent = cfg.OnEvent
	c.ctx, c.cancel = context.WithCancel(context.Background())
	if cfg.legacy() {
		g := newZKGroup(c)
		c.group = g
		c.cluster = newCluster(cfg.ClientID, cfg.Security, &c.stats, g.brokerAddrs, c.log)
	} else {
		c.cluster = newCluster(cfg.ClientID, cfg.Security, &c.stats, func(context.Context) ([]string, error) {
			return cfg.BootstrapServers, nil
		}, c.log)
		if cfg.consumerProtocol() {
			c.group = newConsumerProtocolGroup(c)
		} else {
			c.group = newCoordinatorGroup(c)
		}
	}
	if err := c.group.start(ctx); err != nil {
		c.cancel()
		c.cluster.close()
		return nil, err
	}
	// max.poll.interval.ms counts from the join: joining may take long.
	c.lastPoll.Store(time.Now().UnixNano())
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		c.group.run(c.ctx)
	}()
	if !cfg.DisableAutoCommit {
		c.wg.Add(1)
		go c.autoCommit()
	}
	return c, nil
}

// Subscribe returns a channel of this consumer's events, buffered to
// buffer; events that find it full are dropped. Call stop to unsubscribe.
func (c *Consumer) Subscribe(buffer int) (events <-chan Event, stop func()) {
	return c.events.subscribe(buffer)
}

// Stats returns the consumer's counters.
func (c *Consumer) Stats() Stats { return c.stats.snapshot() }

// MemberID is the legacy consumer id or the coordinator's member id.
func (c *Consumer) MemberID() string { return c.group.memberID() }

// Assignment returns the partitions the consumer owns now.
func (c *Consumer) Assignment() map[string][]int32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return byTopic(slices.Collect(maps.Keys(c.assigned)))
}

func (c *Consumer) emit(ev Event) {
	if !c.events.active() {
		return
	}
	ev.Consumer = c.group.memberID()
	c.events.emit(ev)
}

// notifyLocked wakes Polls waiting for a change. c.mu is held.
func (c *Consumer) notifyLocked() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// wake makes a Poll waiting for a change look again.
func (c *Consumer) wake() {
	c.mu.Lock()
	c.notifyLocked()
	c.mu.Unlock()
}

// pauseFetching stops Poll from fetching until resumeFetching.
func (c *Consumer) pauseFetching() {
	c.mu.Lock()
	was := c.paused
	c.paused = true
	c.notifyLocked()
	c.mu.Unlock()
	if !was {
		c.emit(Event{Type: EventFetchingPaused})
	}
}

func (c *Consumer) resumeFetching() {
	c.mu.Lock()
	was := c.paused
	c.paused = false
	c.notifyLocked()
	c.mu.Unlock()
	if was {
		c.emit(Event{Type: EventFetchingResumed})
	}
}

// owned returns the partitions assigned now.
func (c *Consumer) owned() []kafka.TopicPartition {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Collect(maps.Keys(c.assigned))
}

// positions returns the positions of the assigned partitions that have one.
func (c *Consumer) positions() map[kafka.TopicPartition]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[kafka.TopicPartition]int64{}
	for tp, pos := range c.assigned {
		if pos >= 0 {
			out[tp] = pos
		}
	}
	return out
}

// remove drops partitions from the assignment, calling OnRevoked (lost
// false) or OnLost first, and emits the event.
func (c *Consumer) remove(tps []kafka.TopicPartition, lost bool) {
	if len(tps) == 0 {
		return
	}
	parts := byTopic(tps)
	typ, cb := EventPartitionsRevoked, c.cfg.OnRevoked
	if lost {
		typ, cb = EventPartitionsLost, c.cfg.OnLost
	}
	if cb != nil {
		cb(parts)
	}
	c.mu.Lock()
	for _, tp := range tps {
		delete(c.assigned, tp)
		delete(c.committed, tp)
	}
	c.notifyLocked()
	c.mu.Unlock()
	c.emit(Event{Type: typ, Partitions: parts})
}

// add assigns partitions at their committed offsets (-1: none, reset per
// auto.offset.reset) and calls OnAssigned.
func (c *Consumer) add(offsets map[kafka.TopicPartition]int64, generation int32) {
	if len(offsets) == 0 {
		return
	}
	c.mu.Lock()
	for tp, off := range offsets {
		c.assigned[tp] = off
		if off >= 0 {
			c.committed[tp] = off
		}
	}
	c.notifyLocked()
	c.mu.Unlock()
	parts := byTopic(slices.Collect(maps.Keys(offsets)))
	if c.cfg.OnAssigned != nil {
		c.cfg.OnAssigned(parts)
	}
	c.emit(Event{Type: EventPartitionsAssigned, Partitions: parts, Generation: generation})
}

// Commit stores the positions of the owned partitions (the offsets after
// the last records Poll returned) and waits for the result, retrying while
// the coordinator moves (see commitPositions).
func (c *Consumer) Commit(ctx context.Context) error {
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return ErrClosed
	}
	return c.commitPositions(ctx, commitRetry)
}

// CommitAsync commits as Commit does without waiting; done, if not nil, gets
// the result.
func (c *Consumer) CommitAsync(done func(error)) {
	c.mu.Lock()
	closed := c.closed
	if !closed {
		c.wg.Add(1) // under c.mu: Close cannot be waiting yet
	}
	c.mu.Unlock()
	if closed {
		if done != nil {
			done(ErrClosed)
		}
		return
	}
	go func() {
		defer c.wg.Done()
		err := c.commitPositions(c.ctx, commitOnce)
		if done != nil {
			done(err)
		}
	}()
}

// commit modes of commitPositions.
const (
	commitOnce  = false // CommitAsync, the auto-commit timer, the commit before a revocation
	commitRetry = true  // Commit and Close, which wait for the result
)

// commitPositions commits the positions that changed since the last
// commit, as 0.8 skipped offsets equal to those last written. With
// commitRetry, a commit to a coordinator that fails only because the
// coordinator moved, is loading or cannot be reached is sent again (retryBackingOff; the run
// goroutine finds the coordinator meanwhile) until ctx ends or default.api.timeout.ms passes, as
// Kafka's commitSync; other commits are sent once, as its commitAsync:
// retried, an older position could land after a newer one.
func (c *Consumer) commitPositions(ctx context.Context, retry bool) error {
	offsets := c.positions()
	c.mu.Lock()
	for tp, off := range offsets {
		if c.committed[tp] == off {
			delete(offsets, tp)
		}
	}
	c.mu.Unlock()
	if len(offsets) == 0 {
		return nil
	}
	commit := func() error { return c.group.commit(ctx, offsets) }
	var err error
	if retry && !c.cfg.legacy() {
		deadline, ok := ctx.Deadline()
		if !ok {
			deadline = time.Now().Add(defaultAPITimeout)
		}
		err = retryBackingOff(ctx, deadline, commit, func(backoff time.Duration, err error) {
			c.log.Info("offset commit failed, retrying", zap.Duration("backoff", backoff), zap.Error(err))
		})
	} else {
		err = commit()
	}
	if err == nil {
		c.mu.Lock()
		for tp, off := range offsets {
			if _, ok := c.assigned[tp]; ok {
				c.committed[tp] = off
			}
		}
		c.mu.Unlock()
	}
	c.emit(Event{Type: EventOffsetsCommitted, Partitions: byTopic(slices.Collect(maps.Keys(offsets))), Err: err})
	return err
}

// defaultAPITimeout is Kafka's default.api.timeout.ms: how long Commit
// retries when its ctx has no deadline.
const defaultAPITimeout = 60 * time.Second

// defaultCloseTimeout is how long Close takes at most when its ctx has no
// deadline (Kafka's consumer closes within 30 s by default).
const defaultCloseTimeout = 30 * time.Second

func (c *Consumer) autoCommit() {
	defer c.wg.Done()
	t := time.NewTicker(c.cfg.AutoCommitInterval)
	defer t.Stop()
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-t.C:
			if err := c.commitPositions(c.ctx, commitOnce); err != nil && c.ctx.Err() == nil {
				c.log.Warn("auto-commit failed", zap.Error(err))
			}
		}
	}
}

// Close commits (with auto-commit on), leaves the group and stops every
// goroutine of the consumer, within ctx or, without a deadline, 30 s.
func (c *Consumer) Close(ctx context.Context) error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return ErrClosed
	}
	c.closed = true
	c.notifyLocked()
	c.mu.Unlock()
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, defaultCloseTimeout)
		defer cancel()
	}
	var errs []error
	if !c.cfg.DisableAutoCommit {
		// The commit may wait for a moved coordinator, but only for three
		// quarters of Close's time: the rest is for LeaveGroup, without
		// which the group waits for the session timeout.
		deadline, _ := ctx.Deadline()
		commitCtx, cancel := context.WithDeadline(ctx, time.Now().Add(time.Until(deadline)*3/4))
		err := c.commitPositions(commitCtx, commitRetry)
		cancel()
		if err != nil {
			errs = append(errs, fmt.Errorf("commit on close: %w", err))
		}
	}
	c.cancel()
	c.wg.Wait()
	// As the Java consumer does on close, the owned partitions are revoked
	// before leaving.
	c.remove(c.owned(), false)
	if err := c.group.leave(ctx); err != nil {
		errs = append(errs, err)
	}
	c.cluster.close()
	return errors.Join(errs...)
}

// Kill stops the consumer as SIGKILL would stop its process: no commit, no
// LeaveGroup, no callbacks; connections are dropped and, in legacy mode, the
// ZooKeeper session is abandoned rather than closed. The group notices only
// when the session times out (session.timeout.ms or
// zookeeper.session.timeout.ms), which is what a crash costs.
func (c *Consumer) Kill() {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	c.notifyLocked()
	c.mu.Unlock()
	c.cancel()
	c.wg.Wait()
	c.group.abandon()
	c.cluster.close()
}

// ExpireSession makes ZooKeeper expire a legacy consumer's session, as a
// long pause or a network partition longer than zookeeper.session.timeout.ms
// would: its ids and owner znodes disappear, it drops its partitions as
// lost, registers again under the same id and rebalances. It is for labs
// and tests; a coordinator-mode consumer returns ErrNotLegacy.
func (c *Consumer) ExpireSession(ctx context.Context) error {
	g, ok := c.group.(*zkGroup)
	if !ok {
		return ErrNotLegacy
	}
	return g.zk.ForceExpire(ctx)
}

// CutNetwork makes every request the consumer sends to Kafka fail with
// ErrNetworkCut for d, as a network partition between it and the cluster
// would: a coordinator-mode member stops heartbeating, and the coordinator
// removes it if d outlasts session.timeout.ms. A legacy member keeps its
// ZooKeeper session (ExpireSession is its counterpart). It is for labs and
// tests.
func (c *Consumer) CutNetwork(d time.Duration) {
	c.cluster.cutUntil.Store(time.Now().Add(d).UnixNano())
}

// pollStarted and pollDone keep the time of the application's last Poll.
func (c *Consumer) pollStarted() {
	c.inPoll.Add(1)
	c.lastPoll.Store(time.Now().UnixNano())
}

func (c *Consumer) pollDone() {
	c.lastPoll.Store(time.Now().UnixNano())
	c.inPoll.Add(-1)
}

// pollExpired reports whether the application has not called Poll for
// longer than max.poll.interval.ms.
func (c *Consumer) pollExpired() bool {
	return c.inPoll.Load() == 0 && time.Since(time.Unix(0, c.lastPoll.Load())) > c.cfg.RebalanceTimeout
}

// byTopic groups partitions by topic, each list sorted.
func byTopic(tps []kafka.TopicPartition) map[string][]int32 {
	out := map[string][]int32{}
	for _, tp := range tps {
		out[tp.Topic] = append(out[tp.Topic], tp.Partition)
	}
	for _, ps := range out {
		slices.Sort(ps)
	}
	return out
}
