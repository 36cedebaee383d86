package coordinator

// ConsumerGroupHeartbeat and ConsumerGroupDescribe (KIP-848, Kafka 4.0's
// GroupMetadataManager.consumerGroupHeartbeat): the consumer rebalance
// protocol, where a member's heartbeat carries its subscription and the
// partitions it owns, and the answer carries its epoch and assignment.
//
// A heartbeat, under the group's lock: validate → find or create the group
// and the member (static members by instance id) → check the member's epoch
// → update the member; a new group, a changed subscription or changed topic
// metadata bump the group epoch → a group epoch past the target's computes a
// new target with the group's assignor → the member reconciles one step
// toward its target (reconcile) → its session timer restarts → the answer.
// Members that leave or miss their session or rebalance timeout are fenced:
// removed, and the group epoch bumped, so the next heartbeat reassigns their
// partitions.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/kafka"
)

// TopicSource is the broker's topic metadata, which consumer groups are
// assigned from.
type TopicSource interface {
	// Topic returns a topic's id and partition count.
	Topic(name string) (id [16]byte, partitions int32, ok bool)
	// TopicName returns the name of the topic with id.
	TopicName(id [16]byte) (string, bool)
	// TopicNames lists every topic, for regex subscriptions.
	TopicNames() []string
}

// heartbeatError is a failed heartbeat: a Kafka error and its message.
type heartbeatError struct {
	err *kerr.Error
	msg string
}

func (e *heartbeatError) Error() string { return e.err.Message + ": " + e.msg }
func (e *heartbeatError) Unwrap() error { return e.err }

func hbErrorf(err *kerr.Error, format string, args ...any) error {
	return &heartbeatError{err: err, msg: fmt.Sprintf(format, args...)}
}

// validateHeartbeat is Kafka's throwIfConsumerGroupHeartbeatRequestIsInvalid.
func (c *Coordinator) validateHeartbeat(req *kmsg.ConsumerGroupHeartbeatRequest, version int16) error {
	blank := func(s string) bool { return strings.TrimSpace(s) == "" }
	switch {
	case (version >= 1 || req.MemberEpoch > 0 || req.MemberEpoch == leaveEpoch) && blank(req.MemberID):
		return hbErrorf(kerr.InvalidRequest, "MemberId can't be empty.")
	case blank(req.Group):
		return hbErrorf(kerr.InvalidRequest, "GroupId can't be empty.")
	case req.InstanceID != nil && blank(*req.InstanceID):
		return hbErrorf(kerr.InvalidRequest, "InstanceId can't be empty.")
	case req.RackID != nil && blank(*req.RackID):
		return hbErrorf(kerr.InvalidRequest, "RackId can't be empty.")
	case req.MemberEpoch == joinEpoch && req.RebalanceTimeoutMillis == -1:
		return hbErrorf(kerr.InvalidRequest, "RebalanceTimeoutMs must be provided in first request.")
	case req.MemberEpoch == joinEpoch && (req.Topics == nil || len(req.Topics) > 0):
		return hbErrorf(kerr.InvalidRequest, "TopicPartitions must be empty when (re-)joining.")
	case req.MemberEpoch == joinEpoch && req.SubscribedTopicNames == nil && req.SubscribedTopicRegex == nil:
		return hbErrorf(kerr.InvalidRequest, "Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining.")
	case req.MemberEpoch == staticLeaveEpoch && req.InstanceID == nil:
		return hbErrorf(kerr.InvalidRequest, "InstanceId can't be null.")
	case req.MemberEpoch < staticLeaveEpoch:
		return hbErrorf(kerr.InvalidRequest, "MemberEpoch is invalid.")
	case req.ServerAssignor != nil && !slices.Contains(c.cfg.ConsumerAssignors, *req.ServerAssignor):
		return hbErrorf(kerr.UnsupportedAssignor, "ServerAssignor %s is not supported. Supported assignors: %s.",
			*req.ServerAssignor, strings.Join(c.cfg.ConsumerAssignors, ", "))
	}
	if req.SubscribedTopicRegex != nil && *req.SubscribedTopicRegex != "" {
		if _, err := regexp.Compile(*req.SubscribedTopicRegex); err != nil {
			return hbErrorf(kerr.InvalidRegularExpression, "SubscribedTopicRegex `%s` is not a valid regular expression: %v.", *req.SubscribedTopicRegex, err)
		}
	}
	return nil
}

// ConsumerGroupHeartbeat answers a ConsumerGroupHeartbeat of version from a
// client with clientID on clientHost ("/ip", as Kafka shows it).
func (c *Coordinator) ConsumerGroupHeartbeat(req *kmsg.ConsumerGroupHeartbeatRequest, version int16, clientID, clientHost string) *kmsg.ConsumerGroupHeartbeatResponse {
	resp := req.ResponseKind().(*kmsg.ConsumerGroupHeartbeatResponse)
	resp.MemberEpoch = -1
	err := c.validateHeartbeat(req, version)
	if err == nil {
		var await func(context.Context) error
		if req.MemberEpoch == leaveEpoch || req.MemberEpoch == staticLeaveEpoch {
			await, err = c.consumerGroupLeave(req, resp)
		} else {
			await, err = c.consumerGroupHeartbeat(req, clientID, clientHost, resp)
		}
		if await != nil {
			// The answer waits for its records to be replicated (acks=all),
			// outside the group's lock.
			ctx, cancel := context.WithTimeout(c.ctx, c.cfg.OffsetCommitTimeout)
			if werr := await(ctx); werr != nil && err == nil {
				err = consumerStoreError(werr)
			}
			cancel()
		}
	}
	if err != nil {
		resp.ErrorCode, resp.MemberEpoch, resp.Assignment, resp.HeartbeatIntervalMillis = errCode(err), -1, nil, 0
		if he, ok := err.(*heartbeatError); ok {
			resp.ErrorMessage = kmsg.StringPtr(he.msg)
		}
	}
	return resp
}

// lockHeartbeatGroup is lockGroup for a heartbeat, creating the group for
// a join: a group that does not exist is GROUP_ID_NOT_FOUND.
func (c *Coordinator) lockHeartbeatGroup(groupID string, create bool) (*group, error) {
	g, err := c.lockGroup(groupID, membershipAPI, create)
	if err == nil && g == nil {
		err = hbErrorf(kerr.GroupIDNotFound, "Consumer group %s not found.", groupID)
	}
	return g, err
}

func (c *Coordinator) consumerGroupHeartbeat(req *kmsg.ConsumerGroupHeartbeatRequest, clientID, clientHost string, resp *kmsg.ConsumerGroupHeartbeatResponse) (func(context.Context) error, error) {
	g, err := c.lockHeartbeatGroup(req.Group, req.MemberEpoch == joinEpoch)
	if err != nil {
		return nil, err
	}
	defer g.mu.Unlock()
	var converted []Record
	if g.modern == nil {
		if req.MemberEpoch != joinEpoch || !g.is(Empty) || len(g.members) > 0 || len(g.pending) > 0 {
			return nil, hbErrorf(kerr.GroupIDNotFound, "Group %s is not a consumer group.", req.Group)
		}
		// An empty classic group becomes a consumer group; its offsets stay,
		// and its stored metadata, if any, goes.
		g.modern = newConsumerGroup()
		if g.generation > 0 {
			converted = []Record{{Key: groupMetadataKey(g.id)}}
		}
	}
	before := g.modern.snapshot()
	err = c.consumerHeartbeatLocked(g, req, clientID, clientHost, resp)
	if err != nil && len(g.modern.members) == 0 && before.epoch == 0 {
		// A new group that took no member is not stored.
		g.modern = nil
		if !g.hasOffsets() {
			c.transitionLocked(g, Dead)
			c.removeGroupLocked(g)
		}
		return nil, err
	}
	await, perr := c.persistConsumerLocked(g, before, converted...)
	if err == nil {
		err = perr
	}
	return await, err
}

// persistConsumerLocked appends the records of a consumer group's change
// since before (after extra), under the group's lock so the group's records
// reach the log in the order it decided them. It returns a wait for their
// replication, nil when nothing changed.
func (c *Coordinator) persistConsumerLocked(g *group, before consumerSnapshot, extra ...Record) (func(context.Context) error, error) {
	recs := append(extra, consumerRecords(g.id, before, g.modern.snapshot())...)
	if len(recs) == 0 {
		return nil, nil
	}
	_, await, err := c.store.Append(g.partition, EncodeBatch(recs, c.clock.Now().UnixMilli()))
	if err != nil {
		return nil, consumerStoreError(err)
	}
	return await, nil
}

// persistConsumerInBackgroundLocked is persistConsumerLocked for changes
// nobody waits on (a timer's fencing): a failure is logged.
func (c *Coordinator) persistConsumerInBackgroundLocked(g *group, before consumerSnapshot) {
	await, err := c.persistConsumerLocked(g, before)
	if err != nil {
		c.log.Warn("Storing a consumer group change failed", zap.String("group", g.id), zap.Error(err))
	}
	if await == nil {
		return
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		ctx, cancel := context.WithTimeout(c.ctx, c.cfg.OffsetCommitTimeout)
		defer cancel()
		if err := await(ctx); err != nil {
			c.log.Warn("Storing a consumer group change failed", zap.String("group", g.id), zap.Error(err))
		}
	}()
}

// consumerStoreError is Kafka 4.0's mapping of a coordinator write's
// failure (CoordinatorOperationExceptionHelper).
func consumerStoreError(err error) error {
	switch {
	case errors.Is(err, kerr.UnknownTopicOrPartition), errors.Is(err, kerr.NotEnoughReplicas),
		errors.Is(err, kerr.NotEnoughReplicasAfterAppend), errors.Is(err, kerr.RequestTimedOut), errors.Is(err, context.DeadlineExceeded):
		return kerr.CoordinatorNotAvailable
	case errors.Is(err, kerr.NotLeaderForPartition), errors.Is(err, kerr.KafkaStorageError), errors.Is(err, context.Canceled):
		return kerr.NotCoordinator
	}
	return kerr.UnknownServerError
}

func (c *Coordinator) consumerHeartbeatLocked(g *group, req *kmsg.ConsumerGroupHeartbeatRequest, clientID, clientHost string, resp *kmsg.ConsumerGroupHeartbeatResponse) error {
	cg := g.modern
	memberID := req.MemberID
	if len(cg.members) >= c.cfg.ConsumerMaxSize && (memberID == "" || cg.members[memberID] == nil) {
		return hbErrorf(kerr.GroupMaxSizeReached, "The consumer group has reached its maximum capacity of %d members.", c.cfg.ConsumerMaxSize)
	}
	if memberID == "" {
		memberID = kafka.NewUUID()
	}
	m, replaced, err := c.consumerMemberFor(g, memberID, req)
	if err != nil {
		return err
	}
	bump := cg.epoch == 0
	updated := *m
	updated.clientID, updated.clientHost = clientID, clientHost
	if req.InstanceID != nil {
		updated.instanceID = *req.InstanceID
	}
	if req.RackID != nil {
		updated.rackID = *req.RackID
	}
	if req.RebalanceTimeoutMillis != -1 {
		updated.rebalanceTimeout = time.Duration(req.RebalanceTimeoutMillis) * time.Millisecond
	}
	if req.ServerAssignor != nil {
		updated.serverAssignor = *req.ServerAssignor
	}
	if req.SubscribedTopicNames != nil {
		updated.subscribedNames = slices.Sorted(slices.Values(req.SubscribedTopicNames))
		updated.subscribedNames = slices.Compact(updated.subscribedNames)
	}
	if req.SubscribedTopicRegex != nil {
		updated.subscribedRegex = *req.SubscribedTopicRegex
	}
	if !slices.Equal(updated.subscribedNames, m.subscribedNames) || updated.subscribedRegex != m.subscribedRegex {
		bump = true
	}
	*m = updated
	if replaced != nil {
		c.removeConsumerMemberLocked(cg, replaced)
	}
	cg.members[m.id] = m
	if m.instanceID != "" {
		cg.static[m.instanceID] = m.id
	}

	resolved := c.resolveSubscriptions(cg)
	if metadata := c.subscriptionMetadata(resolved); !maps.Equal(metadata, cg.metadata) {
		cg.metadata, bump = metadata, true
	}
	if bump {
		cg.epoch++
	}
	if cg.epoch > cg.assignmentEpoch {
		if err := c.computeTargetLocked(g, resolved); err != nil {
			return hbErrorf(kerr.UnknownServerError, "Failed to compute a new target assignment for epoch %d: %v", cg.epoch, err)
		}
	}

	var owned assignment
	if req.Topics != nil {
		owned = assignment{}
		for _, t := range req.Topics {
			for _, p := range t.Partitions {
				owned.add(t.TopicID, p)
			}
		}
	}
	before := m.current()
	if !m.reconciledTo(cg.assignmentEpoch) {
		epochs := cg.partitionEpochs(m.id)
		next, err := reconcile(before, cg.assignmentEpoch, cg.target[m.id], func(t topicID, p int32) bool {
			_, held := epochs[t][p]
			return held
		}, owned)
		if err != nil {
			c.fenceConsumerMembersLocked(g, "its state is unknown", m)
			return hbErrorf(kerr.FencedMemberEpoch, "The consumer group member has a member epoch (%d) in a unknown state.", req.MemberEpoch)
		}
		if !next.equal(before) {
			m.epoch, m.previousEpoch, m.state, m.assigned, m.pendingRevocation = next.epoch, next.previousEpoch, next.state, next.assigned, next.pending
			if m.state == memberUnrevokedPartitions {
				c.scheduleRebalanceTimeoutLocked(g, m)
			} else if m.rebalance != nil {
				m.rebalance.Stop()
				m.rebalance = nil
			}
		}
	}
	c.scheduleConsumerSessionLocked(g, m)

	resp.MemberID = kmsg.StringPtr(m.id)
	resp.MemberEpoch = m.epoch
	resp.HeartbeatIntervalMillis = int32(c.cfg.ConsumerHeartbeatInterval.Milliseconds())
	full := req.RebalanceTimeoutMillis != -1 && (req.SubscribedTopicNames != nil || req.SubscribedTopicRegex != nil) && req.Topics != nil
	if req.MemberEpoch == joinEpoch || full || !m.assigned.equal(before.assigned) {
		a := kmsg.NewConsumerGroupHeartbeatResponseAssignment()
		for _, t := range slices.SortedFunc(maps.Keys(m.assigned), compareTopicIDs) {
			a.Topics = append(a.Topics, kmsg.ConsumerGroupHeartbeatResponseAssignmentTopic{TopicID: t, Partitions: slices.Clone(m.assigned[t])})
		}
		resp.Assignment = &a
	}
	if before.epoch != m.epoch || !before.assigned.equal(m.assigned) {
		c.log.Info("Consumer group member reconciled", zap.String("group", g.id), zap.String("member-id", m.id),
			zap.Int32("member-epoch", m.epoch), zap.Int32("group-epoch", cg.epoch), zap.Stringer("state", m.state),
			zap.Int("assigned", m.assigned.size()), zap.Int("pending-revocation", m.pendingRevocation.size()))
	}
	return nil
}

// consumerMemberFor finds the heartbeat's member, or makes a new one for a
// join (epoch 0), applying Kafka's epoch checks and static membership
// (KIP-345 over KIP-848): a static member rejoining under a new id replaces
// the old member once that one left with epoch -2, and takes its
// partitions. The member returned is not yet in the group when new;
// replaced is the member it replaces.
func (c *Coordinator) consumerMemberFor(g *group, memberID string, req *kmsg.ConsumerGroupHeartbeatRequest) (m, replaced *consumerMember, err error) {
	cg := g.modern
	if req.MemberEpoch != joinEpoch {
		if m, err = cg.existingMember(g.id, memberID, req.InstanceID); err != nil {
			return nil, nil, err
		}
		return m, nil, checkMemberEpoch(m, req)
	}
	if req.InstanceID != nil {
		if holderID, held := cg.static[*req.InstanceID]; held {
			holder := cg.members[holderID]
			if holder.epoch != staticLeaveEpoch {
				return nil, nil, hbErrorf(kerr.UnreleasedInstanceID, "Static member %s with instance id %s cannot join the group because the instance id is owned by %s member.", memberID, *req.InstanceID, holderID)
			}
			// The replacement takes the old member's place: its partitions, what
			// it is revoking, its subscription and its target.
			m = &consumerMember{id: memberID, instanceID: *req.InstanceID, rackID: holder.rackID, previousEpoch: 0, state: holder.state,
				assigned: holder.assigned, pendingRevocation: holder.pendingRevocation,
				subscribedNames: holder.subscribedNames, subscribedRegex: holder.subscribedRegex,
				serverAssignor: holder.serverAssignor, rebalanceTimeout: holder.rebalanceTimeout}
			if t, ok := cg.target[holderID]; ok {
				cg.target[memberID] = t
			}
			return m, holder, nil
		}
	}
	if m = cg.members[memberID]; m != nil {
		return m, nil, checkMemberEpoch(m, req)
	}
	return &consumerMember{id: memberID, previousEpoch: -1, assigned: assignment{}, pendingRevocation: assignment{}}, nil, nil
}

// existingMember finds a member the heartbeat does not create: by member
// id, or a static member by its instance id, which must still be held by
// that member id (FENCED_INSTANCE_ID otherwise).
func (cg *consumerGroup) existingMember(groupID, memberID string, instanceID *string) (*consumerMember, error) {
	if instanceID == nil {
		if m := cg.members[memberID]; m != nil {
			return m, nil
		}
		return nil, hbErrorf(kerr.UnknownMemberID, "Member %s is not a member of group %s.", memberID, groupID)
	}
	holderID, held := cg.static[*instanceID]
	switch {
	case !held:
		return nil, hbErrorf(kerr.UnknownMemberID, "Instance id %s is unknown.", *instanceID)
	case holderID != memberID:
		return nil, hbErrorf(kerr.FencedInstanceID, "Static member %s with instance id %s was fenced by member %s.", memberID, *instanceID, holderID)
	}
	return cg.members[holderID], nil
}

// checkMemberEpoch fences a heartbeat from an epoch the member is not at,
// except its previous epoch when it reports only partitions it still has (a
// lost response, Kafka's throwIfMemberEpochIsInvalid).
func checkMemberEpoch(m *consumerMember, req *kmsg.ConsumerGroupHeartbeatRequest) error {
	switch {
	case req.MemberEpoch > m.epoch:
		return hbErrorf(kerr.FencedMemberEpoch, "The consumer group member has a greater member epoch (%d) than the one known by the group coordinator (%d). The member must abandon all its partitions and rejoin.", req.MemberEpoch, m.epoch)
	case req.MemberEpoch < m.epoch:
		if req.MemberEpoch == m.previousEpoch && req.Topics != nil && ownedSubsetOf(req.Topics, m.assigned) {
			return nil
		}
		return hbErrorf(kerr.FencedMemberEpoch, "The consumer group member has a smaller member epoch (%d) than the one known by the group coordinator (%d). The member must abandon all its partitions and rejoin.", req.MemberEpoch, m.epoch)
	}
	return nil
}

func ownedSubsetOf(topics []kmsg.ConsumerGroupHeartbeatRequestTopic, a assignment) bool {
	for _, t := range topics {
		for _, p := range t.Partitions {
			if !a.has(t.TopicID, p) {
				return false
			}
		}
	}
	return true
}

// resolveSubscriptions returns each member's subscribed topic names: its
// names and the topics its regex matches in full (Kafka resolves regexes on
// the side, at most every 10 seconds; here each heartbeat does).
func (c *Coordinator) resolveSubscriptions(cg *consumerGroup) map[string][]string {
	var all []string
	compiled := map[string]*regexp.Regexp{}
	out := make(map[string][]string, len(cg.members))
	for id, m := range cg.members {
		names := slices.Clone(m.subscribedNames)
		if m.subscribedRegex != "" {
			re, ok := compiled[m.subscribedRegex]
			if !ok {
				re, _ = regexp.Compile("^(?:" + m.subscribedRegex + ")$")
				compiled[m.subscribedRegex] = re
				if all == nil && c.cfg.Topics != nil {
					all = c.cfg.Topics.TopicNames()
				}
			}
			for _, t := range all {
				if re != nil && re.MatchString(t) {
					names = append(names, t)
				}
			}
		}
		slices.Sort(names)
		out[id] = slices.Compact(names)
	}
	return out
}

// subscriptionMetadata is the id and partition count of every subscribed
// topic that exists.
func (c *Coordinator) subscriptionMetadata(resolved map[string][]string) map[string]topicMetadata {
	out := map[string]topicMetadata{}
	if c.cfg.Topics == nil {
		return out
	}
	for _, names := range resolved {
		for _, name := range names {
			if _, ok := out[name]; ok {
				continue
			}
			if id, n, ok := c.cfg.Topics.Topic(name); ok {
				out[name] = topicMetadata{id: id, partitions: n}
			}
		}
	}
	return out
}

// groupAssignor is the assignor most members ask for (ties to the first by
// name), else the configured default.
func (c *Coordinator) groupAssignor(cg *consumerGroup) string {
	votes := map[string]int{}
	for _, m := range cg.members {
		if m.serverAssignor != "" {
			votes[m.serverAssignor]++
		}
	}
	best := ""
	for _, name := range slices.Sorted(maps.Keys(votes)) {
		if best == "" || votes[name] > votes[best] {
			best = name
		}
	}
	if best == "" {
		best = c.cfg.ConsumerAssignors[0]
	}
	return best
}

// computeTargetLocked computes the group's target assignment at its epoch
// with its assignor, from each member's current target.
func (c *Coordinator) computeTargetLocked(g *group, resolved map[string][]string) error {
	cg := g.modern
	spec := assignorSpec{partitions: map[topicID]int32{}, homogeneous: true}
	for _, md := range cg.metadata {
		spec.partitions[md.id] = md.partitions
	}
	var first []topicID
	for i, id := range cg.sortedMemberIDs() {
		m := cg.members[id]
		var topics []topicID
		for _, name := range resolved[id] {
			if md, ok := cg.metadata[name]; ok {
				topics = append(topics, md.id)
			}
		}
		slices.SortFunc(topics, compareTopicIDs)
		if i == 0 {
			first = topics
		} else if !slices.Equal(first, topics) {
			spec.homogeneous = false
		}
		current := cg.target[id]
		if current == nil {
			current = assignment{}
		}
		spec.members = append(spec.members, assignorMember{id: id, instanceID: m.instanceID, topics: topics, current: current})
	}
	name := c.groupAssignor(cg)
	target, err := assignors[name](spec)
	if err != nil {
		return err
	}
	cg.target, cg.assignmentEpoch = target, cg.epoch
	c.log.Info("Computed a new target assignment", zap.String("group", g.id), zap.Int32("group-epoch", cg.epoch),
		zap.String("assignor", name), zap.Int("members", len(spec.members)), zap.Bool("homogeneous", spec.homogeneous))
	return nil
}

// consumerGroupLeave handles member epoch -1 (leave) and -2 (a static
// member leaving for a while: it keeps its partitions until it rejoins
// under its instance id or its session expires).
func (c *Coordinator) consumerGroupLeave(req *kmsg.ConsumerGroupHeartbeatRequest, resp *kmsg.ConsumerGroupHeartbeatResponse) (func(context.Context) error, error) {
	g, err := c.lockHeartbeatGroup(req.Group, false)
	if err != nil {
		return nil, err
	}
	defer g.mu.Unlock()
	cg := g.modern
	if cg == nil {
		return nil, hbErrorf(kerr.GroupIDNotFound, "Group %s is not a consumer group.", req.Group)
	}
	before := cg.snapshot()
	if err := c.consumerLeaveLocked(g, req, resp); err != nil {
		return nil, err
	}
	return c.persistConsumerLocked(g, before)
}

func (c *Coordinator) consumerLeaveLocked(g *group, req *kmsg.ConsumerGroupHeartbeatRequest, resp *kmsg.ConsumerGroupHeartbeatResponse) error {
	m, err := g.modern.existingMember(g.id, req.MemberID, req.InstanceID)
	if err != nil {
		return err
	}
	resp.MemberID = kmsg.StringPtr(req.MemberID)
	resp.MemberEpoch = req.MemberEpoch
	if req.MemberEpoch == staticLeaveEpoch && req.InstanceID != nil {
		// Its partitions stay held at epoch -2, for the instance's return.
		m.epoch, m.pendingRevocation = staticLeaveEpoch, assignment{}
		c.log.Info("Static consumer group member left temporarily", zap.String("group", g.id), zap.String("member-id", m.id), zap.String("instance-id", m.instanceID))
		return nil
	}
	c.fenceConsumerMembersLocked(g, "it left the group", m)
	return nil
}

// fenceConsumerMembersLocked removes members and bumps the group epoch, so
// the next heartbeat assigns their partitions to the others.
func (c *Coordinator) fenceConsumerMembersLocked(g *group, reason string, members ...*consumerMember) {
	cg := g.modern
	for _, m := range members {
		c.removeConsumerMemberLocked(cg, m)
		c.log.Info("Fenced consumer group member", zap.String("group", g.id), zap.String("member-id", m.id), zap.String("reason", reason))
	}
	cg.metadata = c.subscriptionMetadata(c.resolveSubscriptions(cg))
	cg.epoch++
}

// removeConsumerMemberLocked takes a member, its target and its timers out
// of the group.
func (c *Coordinator) removeConsumerMemberLocked(cg *consumerGroup, m *consumerMember) {
	m.stopTimers()
	if cg.members[m.id] == m {
		delete(cg.members, m.id)
		delete(cg.target, m.id)
	}
	if m.instanceID != "" && cg.static[m.instanceID] == m.id {
		delete(cg.static, m.instanceID)
	}
}

// scheduleConsumerSessionLocked restarts a member's session: a member that
// does not heartbeat within group.consumer.session.timeout.ms is fenced.
func (c *Coordinator) scheduleConsumerSessionLocked(g *group, m *consumerMember) {
	if m.session != nil {
		m.session.Stop()
	}
	var t kafka.Timer
	t = c.clock.AfterFunc(c.cfg.ConsumerSessionTimeout, func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.is(Dead) || g.modern == nil || g.modern.members[m.id] != m || m.session != t {
			return
		}
		before := g.modern.snapshot()
		c.fenceConsumerMembersLocked(g, "the member session expired", m)
		c.persistConsumerInBackgroundLocked(g, before)
	})
	m.session = t
}

// scheduleRebalanceTimeoutLocked gives a member that must revoke partitions
// its rebalance timeout to do so, or be fenced.
func (c *Coordinator) scheduleRebalanceTimeoutLocked(g *group, m *consumerMember) {
	if m.rebalance != nil {
		m.rebalance.Stop()
	}
	epoch := m.epoch
	var t kafka.Timer
	t = c.clock.AfterFunc(m.rebalanceTimeout, func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.is(Dead) || g.modern == nil || g.modern.members[m.id] != m || m.rebalance != t || m.epoch != epoch {
			return
		}
		before := g.modern.snapshot()
		c.fenceConsumerMembersLocked(g, fmt.Sprintf("it failed to transition from epoch %d within %v", epoch, m.rebalanceTimeout), m)
		c.persistConsumerInBackgroundLocked(g, before)
	})
	m.rebalance = t
}

// ConsumerGroupDescribe describes consumer-protocol groups (Kafka 4.0's
// ConsumerGroupDescribe): each group's state, epochs and assignor, and each
// member's subscription, assignment and target, topics named from the
// broker's metadata (a topic it no longer has is left out).
func (c *Coordinator) ConsumerGroupDescribe(groupIDs []string) []kmsg.ConsumerGroupDescribeResponseGroup {
	out := make([]kmsg.ConsumerGroupDescribeResponseGroup, 0, len(groupIDs))
	for _, id := range groupIDs {
		d := kmsg.NewConsumerGroupDescribeResponseGroup()
		d.Group = id
		fail := func(err error, msg string) {
			d.ErrorCode = errCode(err)
			if msg != "" {
				d.ErrorMessage = kmsg.StringPtr(msg)
			}
			out = append(out, d)
		}
		if id == "" {
			fail(kerr.InvalidGroupID, "")
			continue
		}
		g, err := c.lockGroup(id, offsetAPI, false)
		switch {
		case err != nil:
			fail(err, "")
			continue
		case g == nil:
			fail(kerr.GroupIDNotFound, fmt.Sprintf("Group %s not found.", id))
			continue
		case g.modern == nil:
			g.mu.Unlock()
			fail(kerr.GroupIDNotFound, fmt.Sprintf("Group %s is not a consumer group.", id))
			continue
		}
		cg := g.modern
		d.State, d.Epoch, d.AssignmentEpoch, d.AssignorName = cg.state(), cg.epoch, cg.assignmentEpoch, c.groupAssignor(cg)
		for _, mid := range cg.sortedMemberIDs() {
			m := cg.members[mid]
			dm := kmsg.NewConsumerGroupDescribeResponseGroupMember()
			dm.MemberID, dm.MemberEpoch, dm.ClientID, dm.ClientHost = m.id, m.epoch, m.clientID, m.clientHost
			if m.instanceID != "" {
				dm.InstanceID = kmsg.StringPtr(m.instanceID)
			}
			if m.rackID != "" {
				dm.RackID = kmsg.StringPtr(m.rackID)
			}
			dm.SubscribedTopics = slices.Clone(m.subscribedNames)
			dm.SubscribedTopicRegex = kmsg.StringPtr(m.subscribedRegex)
			dm.Assignment.TopicPartitions = c.describedAssignment(m.assigned)
			dm.TargetAssignment.TopicPartitions = c.describedAssignment(cg.target[m.id])
			dm.MemberType = 1 // the consumer protocol
			d.Members = append(d.Members, dm)
		}
		g.mu.Unlock()
		out = append(out, d)
	}
	return out
}

func (c *Coordinator) describedAssignment(a assignment) []kmsg.AssignmentTopicPartition {
	var out []kmsg.AssignmentTopicPartition
	for _, t := range slices.SortedFunc(maps.Keys(a), compareTopicIDs) {
		name, ok := "", false
		if c.cfg.Topics != nil {
			name, ok = c.cfg.Topics.TopicName(t)
		}
		if !ok {
			continue
		}
		out = append(out, kmsg.AssignmentTopicPartition{TopicID: t, Topic: name, Partitions: slices.Clone(a[t])})
	}
	return out
}
