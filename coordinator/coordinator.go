package coordinator

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/kafka"
)

// Coordinator is the group coordinator of one broker (Kafka's
// GroupCoordinator with its GroupMetadataManager): it owns the groups whose
// __consumer_offsets partition this broker leads.
//
// Each group has its own lock (group.mu); mu guards only the table of
// partitions and their groups, and is always the last lock taken. doc.go
// gives the whole lock order.
type Coordinator struct {
	cfg   Config
	log   *zap.Logger
	clock kafka.Clock
	store Log

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu         sync.Mutex
	active     bool
	partitions map[int32]*ownedPartition
	expiry     kafka.Timer
}

// ownedPartition is an __consumer_offsets partition this broker leads:
// loading until its groups are read back from the log, then serving them.
type ownedPartition struct {
	leaderEpoch int32
	loading     bool
	groups      map[string]*group
}

// New returns a coordinator over the given partitions; Start activates it.
func New(cfg Config, store Log) *Coordinator {
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	if cfg.Clock == nil {
		cfg.Clock = kafka.SystemClock{}
	}
	if cfg.OffsetsTopicPartitions <= 0 {
		cfg.OffsetsTopicPartitions = 50
	}
	def := DefaultConfig()
	if cfg.ConsumerSessionTimeout <= 0 {
		cfg.ConsumerSessionTimeout = def.ConsumerSessionTimeout
	}
	if cfg.ConsumerHeartbeatInterval <= 0 {
		cfg.ConsumerHeartbeatInterval = def.ConsumerHeartbeatInterval
	}
	if cfg.ConsumerMaxSize <= 0 {
		cfg.ConsumerMaxSize = def.ConsumerMaxSize
	}
	if len(cfg.ConsumerAssignors) == 0 {
		cfg.ConsumerAssignors = def.ConsumerAssignors
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Coordinator{
		cfg: cfg, log: cfg.Logger, clock: cfg.Clock, store: store, ctx: ctx, cancel: cancel,
		partitions: map[int32]*ownedPartition{},
	}
}

// Start begins serving and schedules the offset expiration check.
func (c *Coordinator) Start() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.active = true
	c.scheduleExpiryLocked()
	c.log.Info("Started group coordinator")
}

// Shutdown unloads every group (parked requests get NOT_COORDINATOR), stops
// the timers and waits for loads and writes in flight.
func (c *Coordinator) Shutdown() {
	c.mu.Lock()
	c.active = false
	if c.expiry != nil {
		c.expiry.Stop()
	}
	detached := map[int32][]*group{}
	for p := range c.partitions {
		detached[p] = c.detachLocked(p)
	}
	c.mu.Unlock()
	for p, groups := range detached {
		c.unload(p, groups)
	}
	c.cancel()
	c.wg.Wait()
	c.log.Info("Shut down group coordinator")
}

// PartitionFor returns the __consumer_offsets partition of a group:
// Kafka's Utils.abs(groupId.hashCode) % offsets.topic.num.partitions.
func (c *Coordinator) PartitionFor(groupID string) int32 {
	return PartitionFor(groupID, c.cfg.OffsetsTopicPartitions)
}

// PartitionFor is Kafka's group → partition hash with Java's
// String.hashCode over UTF-16 code units and Kafka's Utils.abs, which maps
// Integer.MIN_VALUE to 0.
func PartitionFor(groupID string, partitions int32) int32 {
	var h int32
	for _, u := range utf16Units(groupID) {
		h = 31*h + int32(u)
	}
	if h == -1<<31 {
		h = 0
	} else if h < 0 {
		h = -h
	}
	return h % partitions
}

func utf16Units(s string) []uint16 {
	var out []uint16
	for _, r := range s {
		switch {
		case r >= 0x10000:
			r -= 0x10000
			out = append(out, uint16(0xD800+(r>>10)), uint16(0xDC00+(r&0x3FF)))
		default:
			out = append(out, uint16(r))
		}
	}
	return out
}

// apiKind decides which group ids are valid: the group management APIs
// refuse an empty id, the offset and admin APIs only a missing one.
type apiKind int

const (
	membershipAPI apiKind = iota
	offsetAPI
)

// lockGroup is Kafka's validateGroupStatus followed by getGroup (or
// getOrMaybeCreateGroup when create is set): it checks that this broker
// coordinates the group and returns it with its lock held, or nil when
// there is no such group. The group returned is live (not Dead): one
// removed from the table while the request waited for its lock is looked
// up again, so a request sees the table as it is once it holds the lock.
func (c *Coordinator) lockGroup(groupID string, kind apiKind, create bool) (*group, error) {
	if kind == membershipAPI && groupID == "" {
		return nil, kerr.InvalidGroupID
	}
	partition := c.PartitionFor(groupID)
	for {
		leader := c.store.IsLeader(partition)
		c.mu.Lock()
		if !c.active {
			c.mu.Unlock()
			return nil, kerr.CoordinatorNotAvailable
		}
		p, ok := c.partitions[partition]
		switch {
		case !ok:
			c.mu.Unlock()
			return nil, kerr.NotCoordinator
		case p.loading:
			c.mu.Unlock()
			return nil, kerr.CoordinatorLoadInProgress
		case !leader:
			groups := c.detachLocked(partition)
			c.mu.Unlock()
			c.unload(partition, groups)
			return nil, kerr.NotCoordinator
		}
		g, ok := p.groups[groupID]
		if !ok {
			if create {
				// Taken under mu, against the lock order, but it
				// cannot wait: nobody else can reach g before it is
				// published.
				g = newGroup(groupID, partition, c.clock.Now())
				g.mu.Lock()
				p.groups[groupID] = g
			}
			c.mu.Unlock()
			return g, nil
		}
		c.mu.Unlock()
		g.mu.Lock()
		if !g.is(Dead) {
			return g, nil
		}
		g.mu.Unlock()
	}
}

// removeGroupLocked takes a group that has just turned Dead out of the
// table, with the group's lock held.
func (c *Coordinator) removeGroupLocked(g *group) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p, ok := c.partitions[g.partition]; ok && p.groups[g.id] == g {
		delete(p.groups, g.id)
	}
}

func (c *Coordinator) transitionLocked(g *group, to GroupState) {
	if !g.canTransitionTo(to) {
		c.log.Error("Illegal group state transition", zap.String("group", g.id), zap.Stringer("from", g.state), zap.Stringer("to", to))
		return
	}
	g.state, g.stateTime = to, c.clock.Now()
}

// newMemberID is Kafka's clientId + "-" + UUID.randomUUID(): a version-4 UUID.
func newMemberID(clientID string) string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40 // version 4
	b[8] = b[8]&0x3f | 0x80 // the RFC 4122 variant
	return clientID + "-" + hex.EncodeToString(b[:4]) + "-" + hex.EncodeToString(b[4:6]) + "-" +
		hex.EncodeToString(b[6:8]) + "-" + hex.EncodeToString(b[8:10]) + "-" + hex.EncodeToString(b[10:])
}

// scheduleHeartbeatLocked is Kafka's completeAndScheduleNextHeartbeatExpiration:
// the member's session restarts now.
func (c *Coordinator) scheduleHeartbeatLocked(g *group, m *member, timeout time.Duration) {
	if m.heartbeat != nil {
		m.heartbeat.Stop()
	}
	var t kafka.Timer
	t = c.clock.AfterFunc(timeout, func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		if m.heartbeat != t || g.is(Dead) {
			return
		}
		m.heartbeat = nil
		c.expireHeartbeatLocked(g, m)
	})
	m.heartbeat = t
}

// expireHeartbeatLocked: the session ended without a heartbeat. A member
// parked in a rebalance counts as alive, unless it is new (its JoinGroup may
// have been abandoned by a client that timed out).
func (c *Coordinator) expireHeartbeatLocked(g *group, m *member) {
	if !g.has(m.id) {
		return
	}
	if !m.isNew && (m.awaitingJoin != nil || m.awaitingSync != nil) {
		c.scheduleHeartbeatLocked(g, m, m.sessionTimeout)
		return
	}
	c.log.Info("Member has failed, removing it from the group", zap.String("group", g.id), zap.String("member-id", m.id))
	c.removeMemberAndUpdateLocked(g, m, "removing member "+m.id+" on heartbeat expiration")
}

func (c *Coordinator) removeHeartbeatLocked(m *member) {
	if m.heartbeat != nil {
		m.heartbeat.Stop()
		m.heartbeat = nil
	}
}

// removeMemberAndUpdateLocked removes a member and moves the group on: a
// rebalance when it was settled, a check of the join phase when it was
// rebalancing.
func (c *Coordinator) removeMemberAndUpdateLocked(g *group, m *member, reason string) {
	g.invokeJoin(m, joinResult{memberID: m.id, generation: -1, err: kerr.UnknownMemberID})
	c.removeHeartbeatLocked(m)
	g.remove(m.id)
	switch g.state {
	case Stable, CompletingRebalance:
		c.maybePrepareRebalanceLocked(g, reason)
	case PreparingRebalance:
		c.checkJoinLocked(g)
	}
}

func (c *Coordinator) maybePrepareRebalanceLocked(g *group, reason string) {
	if g.canRebalance() {
		c.prepareRebalanceLocked(g, reason)
	}
}

// prepareRebalanceLocked enters PreparingRebalance: members waiting for
// their assignment are told REBALANCE_IN_PROGRESS, and the join phase ends
// when every member rejoined or the rebalance timeout passes — or, for an
// Empty group, after group.initial.rebalance.delay.ms, extended while new
// members keep arriving, up to the rebalance timeout.
func (c *Coordinator) prepareRebalanceLocked(g *group, reason string) {
	if g.is(CompletingRebalance) {
		c.resetAndPropagateAssignmentErrorLocked(g, kerr.RebalanceInProgress)
	}
	initial := g.is(Empty)
	c.log.Info("Preparing to rebalance group", zap.String("group", g.id), zap.Stringer("current-state", g.state),
		zap.Int32("generation", g.generation), zap.String("reason", reason))
	c.transitionLocked(g, PreparingRebalance)
	if initial {
		delay := c.cfg.InitialRebalanceDelay
		c.scheduleJoinLocked(g, true, delay, max(g.rebalanceTimeout()-delay, 0))
		return
	}
	c.scheduleJoinLocked(g, false, g.rebalanceTimeout(), 0)
	c.checkJoinLocked(g)
}

func (c *Coordinator) scheduleJoinLocked(g *group, initial bool, delay, remaining time.Duration) {
	if g.join != nil {
		g.join.timer.Stop()
	}
	dj := &delayedJoin{initial: initial, remaining: remaining}
	g.join = dj
	dj.timer = c.clock.AfterFunc(delay, func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.join != dj || g.is(Dead) {
			return
		}
		g.join = nil
		if dj.initial && g.newMemberAdded && dj.remaining > 0 {
			g.newMemberAdded = false
			d := min(c.cfg.InitialRebalanceDelay, dj.remaining)
			c.scheduleJoinLocked(g, true, d, max(dj.remaining-d, 0))
			return
		}
		c.completeJoinLocked(g)
	})
}

// checkJoinLocked completes the join phase early once every member has
// rejoined (the initial delay is never cut short).
func (c *Coordinator) checkJoinLocked(g *group) {
	if !g.is(PreparingRebalance) || g.join == nil || g.join.initial || !g.hasAllMembersJoined() {
		return
	}
	g.join.timer.Stop()
	g.join = nil
	c.completeJoinLocked(g)
}

// completeJoinLocked ends the join phase (Kafka's onCompleteJoin): dynamic
// members that did not rejoin are dropped, a leader is chosen among those
// that did, the generation moves on, and every parked JoinGroup is answered
// — the leader's with every member's metadata.
func (c *Coordinator) completeJoinLocked(g *group) {
	for _, id := range append([]string(nil), g.order...) {
		m := g.members[id]
		if m.awaitingJoin == nil && m.instanceID == "" {
			c.log.Info("Removing member that did not rejoin", zap.String("group", g.id), zap.String("member-id", id))
			c.removeHeartbeatLocked(m)
			g.remove(id)
		}
	}
	if g.is(Dead) {
		return
	}
	if !g.electNewJoinedLeader() && len(g.members) > 0 {
		c.log.Error("Group could not complete rebalance because no members rejoined", zap.String("group", g.id))
		c.scheduleJoinLocked(g, false, g.rebalanceTimeout(), 0)
		return
	}
	g.generation++
	if len(g.members) > 0 {
		g.protocolName = g.selectProtocol()
		g.computeSubscribedTopics()
		c.transitionLocked(g, CompletingRebalance)
	} else {
		g.protocolName = ""
		g.computeSubscribedTopics()
		c.transitionLocked(g, Empty)
	}
	if g.is(Empty) {
		c.log.Info("Group is now empty", zap.String("group", g.id), zap.Int32("generation", g.generation), zap.Int32("partition", g.partition))
		c.storeGroupLocked(g, nil, func(err error) {
			if err != nil {
				c.log.Warn("Failed to write the empty group's metadata", zap.String("group", g.id), zap.Error(err))
			}
		})
		return
	}
	c.log.Info("Stabilized group", zap.String("group", g.id), zap.Int32("generation", g.generation),
		zap.Int32("partition", g.partition), zap.Int("members", len(g.members)))
	for _, id := range g.order {
		m := g.members[id]
		r := joinResult{memberID: id, generation: g.generation, protocolType: g.protocolType, protocolName: g.protocolName, leaderID: g.leaderID}
		if g.isLeader(id) {
			r.members = g.currentMemberMetadata()
		}
		g.invokeJoin(m, r)
		c.scheduleHeartbeatLocked(g, m, m.sessionTimeout)
		m.isNew = false
	}
}

// propagateAssignmentLocked answers every parked SyncGroup and restarts each
// member's session.
func (c *Coordinator) propagateAssignmentLocked(g *group, err error) {
	for _, id := range g.order {
		m := g.members[id]
		if m.awaitingSync != nil {
			g.invokeSync(m, syncResult{protocolType: g.protocolType, protocolName: g.protocolName, assignment: m.assignment, err: err})
			c.scheduleHeartbeatLocked(g, m, m.sessionTimeout)
		}
	}
}

func (c *Coordinator) resetAndPropagateAssignmentErrorLocked(g *group, err error) {
	for _, m := range g.members {
		m.assignment = []byte{}
	}
	c.propagateAssignmentLocked(g, err)
}

// storeGroupLocked appends the group's metadata with this assignment and
// calls done (under the group's lock) once acks=all answered, with Kafka's
// mapping of append errors to group errors.
func (c *Coordinator) storeGroupLocked(g *group, assignment map[string][]byte, done func(error)) {
	now := c.clock.Now().UnixMilli()
	batch := EncodeBatch([]Record{{Key: groupMetadataKey(g.id), Value: groupMetadataValue(g, assignment, now)}}, now)
	c.appendLocked(g, batch, func(err error) { done(groupStoreError(err)) })
}

// appendLocked appends a batch of the group's records and calls done (under
// the group's lock) when acks=all answered, from a goroutine the
// coordinator waits for at shutdown.
func (c *Coordinator) appendLocked(g *group, batch []byte, done func(error)) {
	_, await, err := c.store.Append(g.partition, batch)
	if err != nil {
		done(err)
		return
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		ctx, cancel := context.WithTimeout(c.ctx, c.cfg.OffsetCommitTimeout)
		err := await(ctx)
		cancel()
		g.mu.Lock()
		defer g.mu.Unlock()
		done(err)
	}()
}

// groupStoreError is Kafka's mapping of a group metadata append's error.
func groupStoreError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, kerr.UnknownTopicOrPartition), errors.Is(err, kerr.NotEnoughReplicas), errors.Is(err, kerr.NotEnoughReplicasAfterAppend):
		return kerr.CoordinatorNotAvailable
	case errors.Is(err, kerr.NotLeaderForPartition), errors.Is(err, kerr.KafkaStorageError):
		return kerr.NotCoordinator
	case errors.Is(err, kerr.RequestTimedOut), errors.Is(err, context.DeadlineExceeded):
		return kerr.RebalanceInProgress
	case errors.Is(err, kerr.MessageTooLarge), errors.Is(err, kerr.RecordListTooLarge), errors.Is(err, kerr.InvalidFetchSize):
		return kerr.UnknownServerError
	case errors.Is(err, context.Canceled):
		return kerr.NotCoordinator
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke
	}
	return kerr.UnknownServerError
}

// offsetStoreError is Kafka's mapping of an offset commit append's error.
func offsetStoreError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, kerr.MessageTooLarge), errors.Is(err, kerr.RecordListTooLarge), errors.Is(err, kerr.InvalidFetchSize):
		return kerr.InvalidCommitOffsetSize
	case errors.Is(err, kerr.RequestTimedOut), errors.Is(err, context.DeadlineExceeded):
		return kerr.RequestTimedOut
	}
	return groupStoreError(err)
}
