package consumer

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/kafka"
)

// coordinatorGroup is the coordinator mode: the classic group protocol on
// kmsg. The run goroutine heartbeats on its own timer and runs JoinGroup and
// SyncGroup, but a rejoin starts only from the application's Poll, as in
// Java's consumer since KIP-62: the heartbeat only learns that the group
// rebalances, and the next Poll revokes (eager) and hands the join to the
// run goroutine. A rebalance therefore waits for every member to finish the
// batch in hand: eager members, having revoked everything, wait for the
// slowest, while cooperative members keep processing what they own. The
// leader balances with franz-go's kgo balancers, which read and write the
// ConsumerProtocol bytes Java clients use.
type coordinatorGroup struct {
	coordinatorConn
	balancers []kgo.GroupBalancer

	mu         sync.Mutex
	member     string
	generation int32
	protocol   string
	// balanced holds the partition counts the leader last assigned; nil
	// when we are not the leader.
	balanced map[string]int32
	// rejoin asks the application's next Poll to prepare a rejoin; lost
	// makes it drop the partitions as lost first (the coordinator removed
	// us, or we left on max.poll.interval.ms), forgetting the member id
	// too if forget is set.
	rejoin, lost, forget bool
	// fatal is set when the member stops for good (another member took its
	// group.instance.id); Poll returns it.
	fatal error

	// joinNow is signalled by Poll once it prepared the rejoin.
	joinNow chan struct{}
}

// retryBackoff is retry.backoff.ms: the wait before retrying a failed
// FindCoordinator or JoinGroup.
const retryBackoff = 100 * time.Millisecond

func newCoordinatorGroup(c *Consumer) *coordinatorGroup {
	g := &coordinatorGroup{coordinatorConn: coordinatorConn{c: c, log: c.log.Named("coordinator")}, generation: -1, joinNow: make(chan struct{}, 1)}
	for _, s := range c.cfg.PartitionAssignmentStrategy {
		switch s {
		case "range":
			g.balancers = append(g.balancers, kgo.RangeBalancer())
		case "roundrobin":
			g.balancers = append(g.balancers, kgo.RoundRobinBalancer())
		case "sticky":
			g.balancers = append(g.balancers, kgo.StickyBalancer())
		case "cooperative-sticky":
			g.balancers = append(g.balancers, kgo.CooperativeStickyBalancer())
		}
	}
	return g
}

func (g *coordinatorGroup) memberID() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.member
}

// retriable reports errors after which finding the coordinator again and
// retrying is what Kafka's clients do.
func retriable(err error) bool {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Retriable || errors.Is(err, kerr.NotCoordinator) || errors.Is(err, kerr.CoordinatorNotAvailable) ||
			errors.Is(err, kerr.CoordinatorLoadInProgress)
	}
	return true // I/O errors
}

// reconnectBackoffMax is reconnect.backoff.ms's ceiling (reconnect.backoff.max.ms): retries after
// failures double their wait up to it, as the Java client's reconnects do.
const reconnectBackoffMax = time.Second

// start joins the group (JoinGroup and SyncGroup), retrying as
// startRetrying does.
func (g *coordinatorGroup) start(ctx context.Context) error { return g.startRetrying(ctx, g.join) }

// run heartbeats, and rejoins when the application's Poll asks it to, until
// ctx is done.
func (g *coordinatorGroup) run(ctx context.Context) {
	t := time.NewTicker(g.c.cfg.HeartbeatInterval)
	defer t.Stop()
	md := time.NewTicker(g.c.cfg.MetadataMaxAge)
	defer md.Stop()
	for {
		var err error
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if g.c.pollExpired() {
				g.pollTimeout(ctx)
				err = errPollTimeout
				break
			}
			err = g.heartbeat(ctx)
		case <-md.C:
			if !g.partitionsChanged(ctx) {
				continue
			}
			err = errPartitionsChanged
		}
		if err == nil || ctx.Err() != nil {
			continue
		}
		switch {
		case errors.Is(err, errPartitionsChanged):
			g.log.Info("partition counts changed, rejoining to rebalance")
		case errors.Is(err, errPollTimeout):
		case errors.Is(err, kerr.RebalanceInProgress):
			g.log.Info("rebalance in progress, rejoining at the next poll")
		case errors.Is(err, kerr.FencedInstanceID):
			// Another consumer runs with our group.instance.id. Rejoining
			// would fence it in turn; like Java's consumer, stop: the next
			// Poll drops the partitions as lost and returns the error.
			g.log.Error("fenced by another member with our group.instance.id; leaving the group loop", zap.Error(err))
			g.c.emit(Event{Type: EventRebalanceFailed, Err: err})
			g.reset(true)
			g.mu.Lock()
			g.fatal = err
			g.mu.Unlock()
			g.c.wake()
			return
		case errors.Is(err, kerr.UnknownMemberID), errors.Is(err, kerr.IllegalGeneration):
			g.log.Warn("fenced by the coordinator, rejoining at the next poll", zap.Error(err))
			g.fenced(errors.Is(err, kerr.UnknownMemberID))
		default:
			// A moved coordinator keeps the generation: find it and go on
			// heartbeating; it says whether we must rejoin.
			g.log.Info("heartbeat failed, finding the coordinator", zap.Error(err))
			if err := g.findCoordinator(ctx); err != nil {
				g.log.Info("find coordinator failed", zap.Error(err))
			}
			continue
		}
		if !g.awaitPoll(ctx, t.C) {
			return
		}
		for ctx.Err() == nil {
			err := g.join(ctx)
			if err == nil {
				break
			}
			g.log.Info("rejoin failed", zap.Error(err))
			if retriable(err) {
				if ferr := g.findCoordinator(ctx); ferr != nil {
					g.log.Info("find coordinator failed", zap.Error(ferr))
				}
			}
			select {
			case <-ctx.Done():
			case <-time.After(retryBackoff):
			}
		}
	}
}

// fenced records that the coordinator no longer knows our generation (and
// our member id if forget): the next Poll drops the partitions as lost.
func (g *coordinatorGroup) fenced(forget bool) {
	g.mu.Lock()
	g.lost, g.forget = true, g.forget || forget
	g.mu.Unlock()
}

// awaitPoll asks the application's next Poll to prepare a rejoin and waits
// until it has, heartbeating meanwhile (the answer is REBALANCE_IN_PROGRESS;
// the heartbeat keeps the session alive). A member that stops polling for
// max.poll.interval.ms leaves, and one the coordinator removes is told so
// at that Poll. It returns false if ctx ended first.
func (g *coordinatorGroup) awaitPoll(ctx context.Context, tick <-chan time.Time) bool {
	g.mu.Lock()
	g.rejoin = true
	g.mu.Unlock()
	g.c.wake()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-g.joinNow:
			return true
		case <-tick:
			g.mu.Lock()
			left := g.lost && g.forget
			g.mu.Unlock()
			switch {
			case left:
			case g.c.pollExpired():
				g.pollTimeout(ctx)
			default:
				err := g.heartbeat(ctx)
				if errors.Is(err, kerr.UnknownMemberID) || errors.Is(err, kerr.IllegalGeneration) {
					g.log.Warn("fenced by the coordinator while waiting for the next poll", zap.Error(err))
					g.fenced(errors.Is(err, kerr.UnknownMemberID))
				}
			}
		}
	}
}

// poll runs on the application's goroutine at each round of Poll: if the
// group asked for a rejoin, it drops lost partitions, revokes everything
// when eager (committing first with auto-commit on, then OnRevoked), and
// hands the JoinGroup to the run goroutine. Poll then goes on fetching
// what is still owned. A member fenced for good drops its partitions as
// lost and gets the error.
func (g *coordinatorGroup) poll(ctx context.Context) error {
	g.mu.Lock()
	rejoin, lost, forget, fatal := g.rejoin, g.lost, g.forget, g.fatal
	g.rejoin, g.lost, g.forget = false, false, false
	g.mu.Unlock()
	if fatal != nil {
		g.c.remove(g.c.owned(), true)
		return fatal
	}
	if !rejoin {
		return nil
	}
	if lost {
		g.c.remove(g.c.owned(), true)
		g.reset(forget)
	}
	if !g.c.cfg.cooperative() {
		g.c.pauseFetching()
		if owned := g.c.owned(); len(owned) > 0 {
			if !g.c.cfg.DisableAutoCommit {
				if err := g.c.commitPositions(ctx, commitOnce); err != nil {
					g.log.Warn("commit before revoking failed", zap.Error(err))
				}
			}
			g.c.remove(owned, false)
		}
	}
	signal(g.joinNow)
	return nil
}

// errPollTimeout makes a member that left on max.poll.interval.ms rejoin.
var errPollTimeout = errors.New("poll timeout expired")

// pollTimeout is what Java's heartbeat thread does when the application has
// not polled within max.poll.interval.ms: stop heartbeating and leave (a
// static member only stops, and is removed at the session timeout), so the
// group rebalances the member's partitions to the others. The member id and
// generation are kept until the next Poll: a commit before it reaches the
// coordinator and is refused with UNKNOWN_MEMBER_ID ("The coordinator is not
// aware of this member"), the failure a slow consumer sees. That Poll drops
// the partitions as lost and rejoins.
func (g *coordinatorGroup) pollTimeout(ctx context.Context) {
	g.log.Warn("consumer poll timeout has expired: the time between polls exceeded max.poll.interval.ms, leaving the group",
		zap.Duration("max.poll.interval.ms", g.c.cfg.RebalanceTimeout))
	g.c.pauseFetching()
	if err := g.sendLeave(ctx); err != nil {
		g.log.Info("leave group after poll timeout failed", zap.Error(err))
	}
	g.fenced(true)
}

// errPartitionsChanged makes the leader rejoin: a subscribed topic's
// partition count is not the one it assigned.
var errPartitionsChanged = errors.New("partition counts changed")

// partitionsChanged is the leader's metadata check (Java's
// ConsumerCoordinator compares its metadata snapshot on each poll): it
// refreshes Metadata and compares partition counts with those it assigned.
func (g *coordinatorGroup) partitionsChanged(ctx context.Context) bool {
	g.mu.Lock()
	balanced := g.balanced
	g.mu.Unlock()
	if balanced == nil {
		return false
	}
	names := slices.Sorted(maps.Keys(balanced))
	if err := g.c.cluster.refresh(ctx, names); err != nil {
		g.log.Info("metadata refresh failed", zap.Error(err))
		return false
	}
	return !maps.Equal(balanced, g.c.cluster.partitionCounts(names))
}

// reset forgets the generation, and the member id if the coordinator did.
func (g *coordinatorGroup) reset(memberToo bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.generation = -1
	if memberToo {
		g.member = ""
	}
}

func (g *coordinatorGroup) heartbeat(ctx context.Context) error {
	conn := g.groupConn()
	if conn == nil {
		return fmt.Errorf("no coordinator connection: %w", kerr.CoordinatorNotAvailable)
	}
	g.mu.Lock()
	req := kmsg.NewPtrHeartbeatRequest()
	req.Group, req.Generation, req.MemberID, req.InstanceID = g.c.cfg.GroupID, g.generation, g.member, g.instanceID()
	g.mu.Unlock()
	resp, err := g.request(ctx, conn, req)
	if err != nil {
		return err
	}
	return kerr.ErrorForCode(resp.(*kmsg.HeartbeatResponse).ErrorCode)
}

// join runs JoinGroup and SyncGroup until a generation is reached, and
// applies the assignment (an eager member revoked everything in poll,
// before); cooperative revokes only what moved and then joins again at
// once, as Java's joinGroupIfNeeded loops within one poll.
func (g *coordinatorGroup) join(ctx context.Context) error {
	cfg := &g.c.cfg
	g.c.stats.rebalances.Add(1)
	g.c.emit(Event{Type: EventRebalanceStarted})
	defer g.c.resumeFetching()
	for {
		assigned, err := g.joinSync(ctx)
		if err != nil {
			g.c.emit(Event{Type: EventRebalanceFailed, Err: err})
			return err
		}
		owned := g.c.owned()
		var revoked []kafka.TopicPartition
		for _, tp := range owned {
			if _, keep := assigned[tp]; !keep {
				revoked = append(revoked, tp)
			}
		}
		added := map[kafka.TopicPartition]int64{}
		for tp := range assigned {
			if !slices.Contains(owned, tp) {
				added[tp] = -1
			}
		}
		if len(revoked) > 0 && !cfg.DisableAutoCommit {
			if err := g.c.commitPositions(ctx, commitOnce); err != nil {
				g.log.Warn("commit before revoking failed", zap.Error(err))
			}
		}
		g.c.remove(revoked, false)
		if err := g.fetchOffsets(ctx, added); err != nil {
			g.c.emit(Event{Type: EventRebalanceFailed, Err: err})
			return err
		}
		g.mu.Lock()
		gen := g.generation
		g.mu.Unlock()
		g.c.add(added, gen)
		g.c.emit(Event{Type: EventJoined, Generation: gen})
		if len(revoked) == 0 {
			g.c.emit(Event{Type: EventRebalanceDone, Generation: gen})
			return nil
		}
		// KIP-429: partitions revoked now can be assigned to their new
		// owners only in a follow-up rebalance.
		g.log.Info("revoked partitions that moved, rejoining", zap.Any("revoked", byTopic(revoked)))
	}
}

// joinSync does one JoinGroup/SyncGroup round and returns the assignment.
func (g *coordinatorGroup) joinSync(ctx context.Context) (map[kafka.TopicPartition]bool, error) {
	cfg := &g.c.cfg
	conn := g.groupConn()
	if conn == nil {
		return nil, fmt.Errorf("no coordinator connection: %w", kerr.CoordinatorNotAvailable)
	}
	topics := slices.Sorted(slices.Values(cfg.Topics))
	current := map[string][]int32{}
	for t, ps := range byTopic(g.c.owned()) {
		current[t] = ps
	}
	for {
		g.mu.Lock()
		req := kmsg.NewPtrJoinGroupRequest()
		req.Group, req.MemberID, req.InstanceID = cfg.GroupID, g.member, g.instanceID()
		req.SessionTimeoutMillis = int32(cfg.SessionTimeout / time.Millisecond)
		req.RebalanceTimeoutMillis = int32(cfg.RebalanceTimeout / time.Millisecond)
		req.ProtocolType = "consumer"
		for _, b := range g.balancers {
			p := kmsg.NewJoinGroupRequestProtocol()
			p.Name = b.ProtocolName()
			p.Metadata = b.JoinGroupMetadata(topics, current, g.generation)
			req.Protocols = append(req.Protocols, p)
		}
		g.mu.Unlock()
		// JoinGroup waits for the whole group, up to the rebalance timeout.
		jctx, cancel := context.WithTimeout(ctx, cfg.RebalanceTimeout+5*time.Second)
		resp, err := g.request(jctx, conn, req)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("join group: %w", err)
		}
		jr := resp.(*kmsg.JoinGroupResponse)
		switch err := kerr.ErrorForCode(jr.ErrorCode); {
		case err == nil:
		case errors.Is(err, kerr.MemberIDRequired): // KIP-394: join again with the id given
			g.mu.Lock()
			g.member = jr.MemberID
			g.mu.Unlock()
			continue
		case errors.Is(err, kerr.UnknownMemberID):
			g.reset(true)
			continue
		case errors.Is(err, kerr.RebalanceInProgress):
			continue
		default:
			return nil, fmt.Errorf("join group: %w", err)
		}
		g.mu.Lock()
		g.member, g.generation = jr.MemberID, jr.Generation
		if jr.Protocol != nil {
			g.protocol = *jr.Protocol
		}
		g.mu.Unlock()
		balancer := g.balancer(g.protocol)
		if balancer == nil {
			return nil, fmt.Errorf("join group: the coordinator chose protocol %q, which we did not offer: %w", g.protocol, kerr.InconsistentGroupProtocol)
		}
		sreq := kmsg.NewPtrSyncGroupRequest()
		sreq.Group, sreq.Generation, sreq.MemberID, sreq.InstanceID = cfg.GroupID, jr.Generation, jr.MemberID, g.instanceID()
		sreq.ProtocolType, sreq.Protocol = kmsg.StringPtr("consumer"), kmsg.StringPtr(g.protocol)
		g.mu.Lock()
		g.balanced = nil
		g.mu.Unlock()
		if jr.LeaderID == jr.MemberID && !jr.SkipAssignment {
			plan, err := g.balance(ctx, balancer, jr)
			if err != nil {
				return nil, err
			}
			sreq.GroupAssignment = plan
		}
		// SyncGroup waits for the leader's assignment, within the rebalance timeout.
		sctx, cancel := context.WithTimeout(ctx, cfg.RebalanceTimeout+5*time.Second)
		resp, err = g.request(sctx, conn, sreq)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("sync group: %w", err)
		}
		sr := resp.(*kmsg.SyncGroupResponse)
		switch err := kerr.ErrorForCode(sr.ErrorCode); {
		case err == nil:
		case errors.Is(err, kerr.RebalanceInProgress):
			continue
		case errors.Is(err, kerr.UnknownMemberID), errors.Is(err, kerr.IllegalGeneration):
			g.reset(errors.Is(err, kerr.UnknownMemberID))
			continue
		default:
			return nil, fmt.Errorf("sync group: %w", err)
		}
		assignment := map[kafka.TopicPartition]bool{}
		if len(sr.MemberAssignment) > 0 {
			parsed, err := balancer.ParseSyncAssignment(sr.MemberAssignment)
			if err != nil {
				return nil, fmt.Errorf("sync group: assignment: %w", err)
			}
			for t, ps := range parsed {
				for _, p := range ps {
					assignment[kafka.TopicPartition{Topic: t, Partition: p}] = true
				}
			}
		}
		g.log.Info("joined group", zap.Int32("generation", jr.Generation), zap.String("member-id", jr.MemberID),
			zap.String("protocol", g.protocol), zap.Bool("leader", jr.LeaderID == jr.MemberID),
			zap.Any("assignment", byTopic(slices.Collect(maps.Keys(assignment)))))
		return assignment, nil
	}
}

func (g *coordinatorGroup) balancer(name string) kgo.GroupBalancer {
	for _, b := range g.balancers {
		if b.ProtocolName() == name {
			return b
		}
	}
	return nil
}

// balance runs the chosen assignor over the members' subscriptions.
func (g *coordinatorGroup) balance(ctx context.Context, b kgo.GroupBalancer, jr *kmsg.JoinGroupResponse) ([]kmsg.SyncGroupRequestGroupAssignment, error) {
	members := slices.Clone(jr.Members)
	// kgo's balancers expect members sorted: static members first by
	// instance id, then dynamic ones by member id.
	slices.SortFunc(members, func(a, b kmsg.JoinGroupResponseMember) int {
		switch {
		case a.InstanceID != nil && b.InstanceID != nil:
			return strings.Compare(*a.InstanceID, *b.InstanceID)
		case a.InstanceID != nil:
			return -1
		case b.InstanceID != nil:
			return 1
		}
		return strings.Compare(a.MemberID, b.MemberID)
	})
	mb, topics, err := b.MemberBalancer(members)
	if err != nil {
		return nil, fmt.Errorf("balance: %w", err)
	}
	names := slices.Sorted(maps.Keys(topics))
	if err := g.c.cluster.refresh(ctx, names); err != nil {
		return nil, fmt.Errorf("balance: %w", err)
	}
	counts := g.c.cluster.partitionCounts(names)
	g.mu.Lock()
	g.balanced = counts
	g.mu.Unlock()
	if mbe, ok := mb.(kgo.GroupMemberBalancerOrError); ok {
		plan, err := mbe.BalanceOrError(counts)
		if err != nil {
			return nil, fmt.Errorf("balance: %w", err)
		}
		return plan.IntoSyncAssignment(), nil
	}
	return mb.Balance(counts).IntoSyncAssignment(), nil
}

// commit sends OffsetCommit with our generation and member id: a member the
// coordinator fenced gets UNKNOWN_MEMBER_ID or ILLEGAL_GENERATION back.
func (g *coordinatorGroup) commit(ctx context.Context, offsets map[kafka.TopicPartition]int64) error {
	g.mu.Lock()
	member, generation := g.member, g.generation
	g.mu.Unlock()
	return g.commitOffsets(ctx, member, generation, g.instanceID(), offsets, -1)
}

// leave sends LeaveGroup, except for a static member: its partitions wait
// for it until the session timeout, so a restart causes no rebalance.
func (g *coordinatorGroup) leave(ctx context.Context) error {
	defer g.closeConns()
	return g.sendLeave(ctx)
}

// abandon drops the connections: the coordinator waits for the session
// timeout.
func (g *coordinatorGroup) abandon() { g.closeConns() }

// sendLeave sends LeaveGroup unless the member is static.
func (g *coordinatorGroup) sendLeave(ctx context.Context) error {
	conn := g.groupConn()
	member := g.memberID()
	if conn == nil || member == "" || g.instanceID() != nil {
		return nil
	}
	req := kmsg.NewPtrLeaveGroupRequest()
	req.Group, req.MemberID = g.c.cfg.GroupID, member
	m := kmsg.NewLeaveGroupRequestMember()
	m.MemberID = member
	req.Members = append(req.Members, m)
	resp, err := g.groupRequestOnce(ctx, req)
	if err != nil {
		return fmt.Errorf("leave group: %w", err)
	}
	lr := resp.(*kmsg.LeaveGroupResponse)
	if err := kerr.ErrorForCode(lr.ErrorCode); err != nil {
		return fmt.Errorf("leave group: %w", err)
	}
	g.log.Info("left group")
	return nil
}
