package consumer

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/kafka"
)

// Member epochs with a meaning of their own in ConsumerGroupHeartbeat.
const (
	joinEpoch        = 0  // (re)joining
	leaveEpoch       = -1 // a dynamic member leaves
	leaveStaticEpoch = -2 // a static member leaves; its instance id may come back
)

// ErrConsumerProtocolUnsupported means the coordinator does not serve
// ConsumerGroupHeartbeat: its group.coordinator.rebalance.protocols lacks
// consumer.
var ErrConsumerProtocolUnsupported = fmt.Errorf("the cluster does not support the consumer group protocol; set group.protocol=classic: %w", kerr.UnsupportedVersion)

// consumerProtocolGroup is KIP-848's consumer group protocol
// (group.protocol=consumer). The run goroutine sends ConsumerGroupHeartbeat
// at the interval the coordinator gives; the coordinator computes the
// assignment and hands each member, in the answer, the partitions it may
// own now. A partition another member still owns is handed over only after
// that member revoked it and said so in a heartbeat, so no partition is ever
// owned twice and a member keeps fetching every partition it keeps.
//
// As in Java's consumer, the application's thread reconciles (the rebalance
// callbacks run there): the run goroutine stores the latest assignment and
// wakes Poll, and Poll revokes what is gone (committing first with
// auto-commit on), fetches the committed offsets of what is new, takes it,
// and has the run goroutine acknowledge the owned partitions at once.
// FENCED_MEMBER_EPOCH and UNKNOWN_MEMBER_ID, and max.poll.interval.ms
// passing without a Poll (the member then leaves), make the next Poll drop
// the partitions as lost before the member joins again with epoch 0.
type consumerProtocolGroup struct {
	coordinatorConn

	mu       sync.Mutex
	member   string // chosen by the member, as clients of version 1 do
	epoch    int32
	interval time.Duration // the coordinator's heartbeat interval
	// full makes the next heartbeat carry every field: after a join, an
	// error or a coordinator move, as Java's consumer resends its state.
	full bool
	// target is the assignment the coordinator last gave, waiting for Poll
	// to reconcile it; nil when none waits.
	target map[kafka.TopicPartition]bool
	// pending holds an assignment whose topic ids Metadata has not all
	// named yet; the next heartbeat tick tries again. Meanwhile, as in
	// Java's consumer, the partitions of the topics it could name go to Poll
	// (revoking what the assignment no longer holds); handed is the last
	// such target (nil until one is), so that the same partial target is not
	// handed over twice.
	pending *kmsg.ConsumerGroupHeartbeatResponseAssignment
	handed  map[kafka.TopicPartition]bool
	// ack makes the next heartbeat carry the owned partitions, at once.
	ack bool
	// lost asks Poll to drop the partitions as lost and join again; until
	// it has, the run goroutine sends nothing.
	lost bool
	// rebalancing is set from a new epoch or assignment until the member
	// has reconciled; joined is the last member epoch reconciled. They make
	// the events: rebalance-started, then joined (a new epoch) and
	// rebalance-done, or rebalance-failed.
	rebalancing bool
	joined      int32
	// reconciling is set while Poll reconciles, so that a heartbeat
	// answered meanwhile does not end the rebalance under it.
	reconciling bool
	// notBefore holds the next join back after the coordinator fenced the
	// member: rejoins that keep being fenced wait longer each time.
	notBefore    time.Time
	fenceBackoff time.Duration
	// fatal is the error the group refused the member with for good; Poll
	// returns it.
	fatal error

	kick chan struct{} // heartbeat now
	// pollMu keeps Polls on several goroutines from reconciling at once.
	pollMu sync.Mutex
}

func newConsumerProtocolGroup(c *Consumer) *consumerProtocolGroup {
	return &consumerProtocolGroup{
		coordinatorConn: coordinatorConn{c: c, log: c.log.Named("consumer-protocol")},
		member:          kafka.NewUUID(),
		interval:        time.Second,
		full:            true,
		kick:            make(chan struct{}, 1),
	}
}

func (g *consumerProtocolGroup) memberID() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.member
}

// start joins the group (a heartbeat with epoch 0), retrying as
// startRetrying does. The first assignment may come later; Poll takes it.
func (g *consumerProtocolGroup) start(ctx context.Context) error {
	return g.startRetrying(ctx, g.heartbeat)
}

// run heartbeats at the coordinator's interval, and at once when Poll has
// reconciled or asks to join again, until ctx is done.
func (g *consumerProtocolGroup) run(ctx context.Context) {
	g.mu.Lock()
	wait := g.interval
	g.mu.Unlock()
	t := time.NewTimer(wait)
	defer t.Stop()
	backoff := retryBackoff
	rediscovered := false // the last attempt followed a coordinator found again
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-g.kick:
			t.Stop()
		}
		g.mu.Lock()
		lost, interval, waiting, hold := g.lost, g.interval, g.target != nil, time.Until(g.notBefore)
		g.mu.Unlock()
		switch {
		case lost: // waiting for Poll to drop the partitions
			g.c.wake()
			t.Reset(interval)
			continue
		case hold > 0:
			t.Reset(hold)
			continue
		case waiting:
			// An assignment still waits for Poll (one whose offsets could
			// not be fetched is put back): make a Poll with nothing to fetch
			// look again.
			g.c.wake()
		}
		if g.c.pollExpired() {
			g.pollTimeout(ctx)
			t.Reset(interval)
			continue
		}
		g.resolvePending(ctx)
		err := g.heartbeat(ctx)
		switch {
		case err == nil:
			backoff, rediscovered = retryBackoff, false
			g.mu.Lock()
			wait, g.fenceBackoff = g.interval, 0
			g.mu.Unlock()
		case ctx.Err() != nil:
			return
		case errors.Is(err, kerr.FencedMemberEpoch), errors.Is(err, kerr.UnknownMemberID):
			g.log.Warn("fenced by the coordinator, joining again at the next poll", zap.Error(err))
			g.fenced()
			wait = 0
		case errors.Is(err, kerr.CoordinatorLoadInProgress):
			wait, backoff = backoff, min(2*backoff, reconnectBackoffMax)
		case retriable(err):
			// A moved coordinator keeps the member and its epoch: find it
			// and tell it everything again. Retries wait longer each time
			// (retry.backoff.ms doubling up to retry.backoff.max.ms), but a
			// coordinator found again hears from the member at once, as
			// its session is running out: once, so one that keeps refusing
			// is not asked in a loop.
			g.log.Info("heartbeat failed, finding the coordinator", zap.Error(err))
			wait, backoff = backoff, min(2*backoff, reconnectBackoffMax)
			if ferr := g.findCoordinator(ctx); ferr != nil {
				g.log.Info("find coordinator failed", zap.Error(ferr))
			} else if !rediscovered {
				wait, rediscovered = 0, true
				break
			}
			rediscovered = false
		default:
			// GROUP_AUTHORIZATION_FAILED, UNRELEASED_INSTANCE_ID,
			// GROUP_MAX_SIZE_REACHED, UNSUPPORTED_ASSIGNOR, INVALID_REQUEST:
			// fatal for Kafka's consumer too.
			// Poll drops the partitions as lost and returns the error.
			g.log.Error("the group refused this member; leaving the group loop", zap.Error(err))
			g.mu.Lock()
			g.fatal, g.pending, g.target = err, nil, nil
			g.mu.Unlock()
			g.endRebalance(err)
			g.c.wake()
			return
		}
		t.Reset(wait)
	}
}

// heartbeat sends one ConsumerGroupHeartbeat and takes in its answer.
func (g *consumerProtocolGroup) heartbeat(ctx context.Context) error {
	conn := g.groupConn()
	if conn == nil {
		return fmt.Errorf("no coordinator connection: %w", kerr.CoordinatorNotAvailable)
	}
	version, ok := conn.MaxVersion(kmsg.ConsumerGroupHeartbeat.Int16())
	if !ok {
		return ErrConsumerProtocolUnsupported
	}
	cfg := &g.c.cfg
	if cfg.filter != nil && version < 1 {
		return fmt.Errorf("the coordinator's ConsumerGroupHeartbeat v%d has no regex subscriptions (v1 has): %w", version, kerr.UnsupportedVersion)
	}
	g.mu.Lock()
	req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	req.Group, req.MemberID, req.MemberEpoch, req.InstanceID = cfg.GroupID, g.member, g.epoch, g.instanceID()
	// The flag is cleared before the owned partitions are read: a Poll
	// that reconciles meanwhile sets it again for the next heartbeat. A
	// failed heartbeat makes the next one full, owned partitions included.
	full, acked := g.full, g.full || g.ack
	g.ack = false
	if full {
		req.RebalanceTimeoutMillis = int32(cfg.RebalanceTimeout / time.Millisecond)
		if cfg.filter != nil {
			req.SubscribedTopicRegex = kmsg.StringPtr(cfg.filter.regex)
		} else {
			req.SubscribedTopicNames = slices.Sorted(slices.Values(cfg.Topics))
		}
		if cfg.GroupRemoteAssignor != "" {
			req.ServerAssignor = kmsg.StringPtr(cfg.GroupRemoteAssignor)
		}
	}
	g.mu.Unlock()
	switch {
	case req.MemberEpoch == joinEpoch:
		// A joining member owns nothing: Poll dropped what it had.
		req.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	case acked:
		req.Topics = g.ownedTopics()
	}
	resp, err := g.request(ctx, conn, req)
	if err != nil {
		g.mu.Lock()
		g.full = true
		g.mu.Unlock()
		return fmt.Errorf("consumer group heartbeat: %w", err)
	}
	hr := resp.(*kmsg.ConsumerGroupHeartbeatResponse)
	if err := kerr.ErrorForCode(hr.ErrorCode); err != nil {
		g.mu.Lock()
		g.full = true
		g.mu.Unlock()
		if hr.ErrorMessage != nil {
			return fmt.Errorf("consumer group heartbeat: %w: %s", err, *hr.ErrorMessage)
		}
		return fmt.Errorf("consumer group heartbeat: %w", err)
	}
	g.mu.Lock()
	if hr.MemberID != nil && *hr.MemberID != "" {
		g.member = *hr.MemberID
	}
	newEpoch := hr.MemberEpoch != g.epoch
	g.epoch = hr.MemberEpoch
	if hr.HeartbeatIntervalMillis > 0 {
		g.interval = time.Duration(hr.HeartbeatIntervalMillis) * time.Millisecond
	}
	g.full = false
	if hr.Assignment != nil {
		g.pending, g.handed = hr.Assignment, nil
	}
	// A new epoch with the same partitions needs no reconciling.
	settled := g.pending == nil && g.target == nil && !g.reconciling
	g.mu.Unlock()
	if newEpoch {
		g.beginRebalance()
		if settled {
			g.endRebalance(nil)
		}
	}
	if hr.Assignment != nil {
		g.resolvePending(ctx)
	}
	return nil
}

// beginRebalance marks the start of a change of epoch or assignment.
func (g *consumerProtocolGroup) beginRebalance() {
	g.mu.Lock()
	was := g.rebalancing
	g.rebalancing = true
	epoch := g.epoch
	g.mu.Unlock()
	if !was {
		g.c.stats.rebalances.Add(1)
		g.c.emit(Event{Type: EventRebalanceStarted, Generation: epoch})
	}
}

// endRebalance marks the member reconciled with its epoch, or failing to.
func (g *consumerProtocolGroup) endRebalance(err error) {
	g.mu.Lock()
	was := g.rebalancing
	g.rebalancing = false
	epoch, newEpoch := g.epoch, g.epoch > g.joined
	if err == nil && newEpoch {
		g.joined = epoch
	}
	g.mu.Unlock()
	switch {
	case !was:
	case err != nil:
		g.c.emit(Event{Type: EventRebalanceFailed, Err: err})
	default:
		if newEpoch {
			g.c.emit(Event{Type: EventJoined, Generation: epoch})
		}
		g.c.emit(Event{Type: EventRebalanceDone, Generation: epoch})
	}
}

// ownedTopics is the owned partitions by topic id, for a heartbeat: empty,
// not null, when nothing is owned.
func (g *consumerProtocolGroup) ownedTopics() []kmsg.ConsumerGroupHeartbeatRequestTopic {
	out := []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	for t, ps := range byTopic(g.c.owned()) {
		id, ok := g.c.cluster.topicID(t)
		if !ok {
			continue // owned partitions were named by id: the id is known
		}
		rt := kmsg.NewConsumerGroupHeartbeatRequestTopic()
		rt.TopicID, rt.Partitions = id, ps
		out = append(out, rt)
	}
	return out
}

// resolvePending names the pending assignment's topics, asking Metadata
// for ids it does not know, and hands the result to Poll. Partitions of
// topics still unnamed wait for a later tick; the others are handed over now,
// so that one unknown topic id (a topic this consumer's broker has not heard
// of yet, or one being deleted) holds back neither the rest of the
// assignment nor the revocations the coordinator waits for.
func (g *consumerProtocolGroup) resolvePending(ctx context.Context) {
	g.mu.Lock()
	pending, handed := g.pending, g.handed
	g.mu.Unlock()
	if pending == nil {
		return
	}
	target, unnamed := g.nameAssignment(pending)
	if unnamed > 0 {
		// A regex subscription names no topics: ask for all of them.
		if err := g.c.cluster.refresh(ctx, g.c.cfg.Topics); err != nil {
			g.log.Info("cannot name the assignment's topic ids; waiting", zap.Error(err))
		}
		target, unnamed = g.nameAssignment(pending)
	}
	complete := unnamed == 0
	if !complete && handed != nil && maps.Equal(target, handed) {
		return // handed over already
	}
	if !complete {
		g.log.Info("assignment names topic ids Metadata does not know yet; reconciling the others meanwhile",
			zap.Int("topics-unnamed", unnamed))
	}
	g.mu.Lock()
	if g.pending == pending { // not replaced meanwhile
		g.target, g.handed = target, target
		if complete {
			g.pending = nil
		}
	}
	g.mu.Unlock()
	// The coordinator repeats an assignment after a full heartbeat (a
	// coordinator move, say): only a different one is a rebalance.
	if owned := g.c.owned(); len(owned) != len(target) || slices.ContainsFunc(owned, func(tp kafka.TopicPartition) bool { return !target[tp] }) {
		g.beginRebalance()
	}
	g.c.wake()
}

// nameAssignment is the assignment's partitions of the topics whose ids
// Metadata names, and how many of its topics it does not name.
func (g *consumerProtocolGroup) nameAssignment(a *kmsg.ConsumerGroupHeartbeatResponseAssignment) (target map[kafka.TopicPartition]bool, unnamed int) {
	target = map[kafka.TopicPartition]bool{}
	for _, t := range a.Topics {
		name, ok := g.c.cluster.topicName(t.TopicID)
		if !ok {
			unnamed++
			continue
		}
		for _, p := range t.Partitions {
			target[kafka.TopicPartition{Topic: name, Partition: p}] = true
		}
	}
	return target, unnamed
}

// fenced records that the coordinator dropped the member: the next Poll
// drops the partitions as lost and has it join again.
func (g *consumerProtocolGroup) fenced() {
	g.mu.Lock()
	g.lost, g.pending, g.target = true, nil, nil
	g.notBefore = time.Now().Add(g.fenceBackoff)
	g.fenceBackoff = min(max(2*g.fenceBackoff, retryBackoff), reconnectBackoffMax)
	g.mu.Unlock()
	g.c.wake()
}

// pollTimeout is what Java's consumer does when the application has not
// polled within max.poll.interval.ms: stop fetching and leave the group (a
// static member with epoch −2, keeping its instance id's place until the
// session timeout), so its partitions go to the others; the next Poll drops
// them as lost and joins again. A commit before that Poll is refused: the
// coordinator no longer knows the member.
func (g *consumerProtocolGroup) pollTimeout(ctx context.Context) {
	g.log.Warn("consumer poll timeout has expired: the time between polls exceeded max.poll.interval.ms, leaving the group",
		zap.Duration("max.poll.interval.ms", g.c.cfg.RebalanceTimeout))
	g.c.pauseFetching()
	if err := g.sendLeave(ctx); err != nil {
		g.log.Info("leave group after poll timeout failed", zap.Error(err))
	}
	g.fenced()
}

// poll runs on the application's goroutine at each round of Poll: it drops
// lost partitions and has the member join again, or reconciles the latest
// assignment. Once the group refused the member for good, it drops the
// partitions as lost and returns the error.
func (g *consumerProtocolGroup) poll(ctx context.Context) error {
	g.pollMu.Lock()
	defer g.pollMu.Unlock()
	g.mu.Lock()
	lost, target, fatal := g.lost, g.target, g.fatal
	g.target = nil
	g.reconciling = target != nil
	g.mu.Unlock()
	switch {
	case fatal != nil:
		g.c.remove(g.c.owned(), true)
		return fatal
	case lost:
		g.beginRebalance()
		g.c.remove(g.c.owned(), true)
		g.c.resumeFetching() // paused if the member left on max.poll.interval.ms
		g.mu.Lock()
		g.lost, g.epoch, g.joined, g.full = false, joinEpoch, joinEpoch, true
		g.mu.Unlock()
		signal(g.kick)
	case target != nil:
		g.reconcile(ctx, target)
	}
	return nil
}

// reconcile moves the owned partitions to target: revoke what is gone
// (committing it first with auto-commit on), take what is new at its
// committed offsets, and acknowledge at once.
func (g *consumerProtocolGroup) reconcile(ctx context.Context, target map[kafka.TopicPartition]bool) {
	g.mu.Lock()
	epoch := g.epoch
	g.mu.Unlock()
	owned := g.c.owned()
	var revoked []kafka.TopicPartition
	for _, tp := range owned {
		if !target[tp] {
			revoked = append(revoked, tp)
		}
	}
	added := map[kafka.TopicPartition]int64{}
	for tp := range target {
		if !slices.Contains(owned, tp) {
			added[tp] = -1
		}
	}
	if len(revoked) == 0 && len(added) == 0 {
		g.reconciled(nil) // a new epoch's, if one is open
		return
	}
	g.beginRebalance()
	if len(revoked) > 0 && !g.c.cfg.DisableAutoCommit {
		if err := g.c.commitPositions(ctx, commitOnce); err != nil {
			g.log.Warn("commit before revoking failed", zap.Error(err))
		}
	}
	g.c.remove(revoked, false)
	if err := g.fetchOffsets(ctx, added); err != nil {
		// Acknowledge the revocation; the additions wait for the next Poll.
		g.mu.Lock()
		if g.target == nil && !g.lost {
			g.target = target
		}
		g.ack = true
		g.mu.Unlock()
		signal(g.kick)
		g.reconciled(err)
		return
	}
	g.mu.Lock()
	lost := g.lost // fenced while the offsets were fetched: take nothing
	g.ack = true
	g.mu.Unlock()
	if !lost {
		g.c.add(added, epoch)
	}
	signal(g.kick)
	g.log.Info("reconciled assignment", zap.Int32("member-epoch", epoch),
		zap.Any("revoked", byTopic(revoked)), zap.Any("assigned", byTopic(slices.Collect(maps.Keys(added)))))
	g.reconciled(nil)
}

// reconciled ends Poll's reconciliation: the rebalance ends (at the epoch
// the member has now: a later epoch with no new assignment keeps the same
// partitions) unless another assignment already waits, whose
// reconciliation will end it.
func (g *consumerProtocolGroup) reconciled(err error) {
	g.mu.Lock()
	g.reconciling = false
	waiting := g.pending != nil || g.target != nil
	g.mu.Unlock()
	if err != nil || !waiting {
		g.endRebalance(err)
	}
}

// commitVersion is the first OffsetCommit version that carries a member
// epoch in its generation field (KIP-848); the coordinator refuses older
// commits to a consumer-protocol group.
const commitVersion = 9

// commit sends OffsetCommit v9 with the member epoch: a member the
// coordinator fenced gets UNKNOWN_MEMBER_ID.
func (g *consumerProtocolGroup) commit(ctx context.Context, offsets map[kafka.TopicPartition]int64) error {
	g.mu.Lock()
	epoch := g.epoch
	g.mu.Unlock()
	return g.commitAt(ctx, epoch, offsets)
}

// commitAt commits at member epoch epoch. A heartbeat answered while the
// commit was on its way may have moved the epoch on, and the coordinator
// then refuses it with STALE_MEMBER_EPOCH: as Kafka's consumer does, it is
// sent again once with the epoch the member now has.
func (g *consumerProtocolGroup) commitAt(ctx context.Context, epoch int32, offsets map[kafka.TopicPartition]int64) error {
	g.mu.Lock()
	member := g.member
	g.mu.Unlock()
	err := g.commitOffsets(ctx, member, epoch, g.instanceID(), offsets, commitVersion)
	if !errors.Is(err, kerr.StaleMemberEpoch) {
		return err
	}
	g.mu.Lock()
	latest := g.epoch
	g.mu.Unlock()
	if latest == epoch {
		return err
	}
	g.log.Info("commit refused at a stale member epoch, sending it again", zap.Int32("epoch", epoch), zap.Int32("member-epoch", latest))
	return g.commitOffsets(ctx, member, latest, g.instanceID(), offsets, commitVersion)
}

// leave sends the leaving heartbeat: epoch −1, or −2 for a static member,
// whose partitions then wait for its instance id until the session timeout.
func (g *consumerProtocolGroup) leave(ctx context.Context) error {
	defer g.closeConns()
	return g.sendLeave(ctx)
}

// abandon drops the connections: the coordinator waits for the session
// timeout.
func (g *consumerProtocolGroup) abandon() { g.closeConns() }

func (g *consumerProtocolGroup) sendLeave(ctx context.Context) error {
	g.mu.Lock()
	req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	req.Group, req.MemberID, req.MemberEpoch, req.InstanceID = g.c.cfg.GroupID, g.member, int32(leaveEpoch), g.instanceID()
	if req.InstanceID != nil {
		req.MemberEpoch = leaveStaticEpoch
	}
	g.mu.Unlock()
	resp, err := g.groupRequestOnce(ctx, req)
	if err != nil {
		return fmt.Errorf("leave group: %w", err)
	}
	hr := resp.(*kmsg.ConsumerGroupHeartbeatResponse)
	// A member the coordinator already removed has nothing to leave.
	if err := kerr.ErrorForCode(hr.ErrorCode); err != nil && !errors.Is(err, kerr.UnknownMemberID) && !errors.Is(err, kerr.FencedMemberEpoch) {
		return fmt.Errorf("leave group: %w", err)
	}
	g.log.Info("left group")
	return nil
}
