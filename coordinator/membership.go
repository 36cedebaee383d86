package coordinator

// The membership APIs: JoinGroup, SyncGroup, Heartbeat, LeaveGroup. Each
// decides under the group's lock; a JoinGroup or SyncGroup that must wait
// for the rest of the group parks a callback and waits outside it.

import (
	"context"
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/internal/reqclock"
	"github.com/zkafka/zkafka/kafka"
)

// newMemberJoinTimeout is how long a new member's parked JoinGroup keeps it
// in the group (Kafka's NewMemberJoinTimeoutMs): a client that gave up is
// not waited for forever.
const newMemberJoinTimeout = 5 * time.Minute

// JoinGroup answers a JoinGroup request (all versions); it blocks until the
// join phase completes or ctx ends (then it returns nil).
func (c *Coordinator) JoinGroup(ctx context.Context, req *kmsg.JoinGroupRequest, clientID, clientHost string) *kmsg.JoinGroupResponse {
	ch := make(chan joinResult, 1)
	c.joinGroup(req, clientID, clientHost, func(r joinResult) { ch <- r })
	defer reqclock.Waited(ctx, time.Now())
	select {
	case r := <-ch:
		return joinResponse(req, r)
	case <-ctx.Done():
		return nil
	}
}

func joinResponse(req *kmsg.JoinGroupRequest, r joinResult) *kmsg.JoinGroupResponse {
	resp := req.ResponseKind().(*kmsg.JoinGroupResponse)
	resp.ErrorCode = errCode(r.err)
	resp.Generation = r.generation
	resp.MemberID = r.memberID
	resp.LeaderID = r.leaderID
	resp.Members = r.members
	if r.protocolType != "" {
		resp.ProtocolType = kmsg.StringPtr(r.protocolType)
	}
	if r.protocolName != "" || req.Version < 7 {
		resp.Protocol = kmsg.StringPtr(r.protocolName)
	}
	return resp
}

func errCode(err error) int16 {
	if err == nil {
		return 0
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Code
	}
	return kerr.UnknownServerError.Code
}

func protocolsOf(req *kmsg.JoinGroupRequest) []protocol {
	out := make([]protocol, 0, len(req.Protocols))
	for _, p := range req.Protocols {
		out = append(out, protocol{name: p.Name, metadata: p.Metadata})
	}
	return out
}

func (c *Coordinator) joinGroup(req *kmsg.JoinGroupRequest, clientID, clientHost string, respond func(joinResult)) {
	fail := func(memberID string, err error) { respond(joinResult{memberID: memberID, generation: -1, err: err}) }
	memberID, instanceID := req.MemberID, deref(req.InstanceID)
	session := time.Duration(req.SessionTimeoutMillis) * time.Millisecond
	rebalance := time.Duration(req.RebalanceTimeoutMillis) * time.Millisecond
	if req.Version == 0 {
		rebalance = session
	}
	validSession := session >= c.cfg.MinSessionTimeout && session <= c.cfg.MaxSessionTimeout
	unknown := memberID == ""
	g, err := c.lockGroup(req.Group, membershipAPI, unknown && validSession)
	switch {
	case err != nil:
		fail(memberID, err)
		return
	case !validSession:
		if g != nil {
			g.mu.Unlock()
		}
		fail(memberID, kerr.InvalidSessionTimeout)
		return
	case g == nil:
		fail(memberID, kerr.UnknownMemberID)
		return
	}
	defer g.mu.Unlock()
	if g.modern != nil {
		// Kafka 4.0 lets a classic member into a consumer group and runs it
		// through the server-side assignment (online migration); this
		// broker does not, and converts only an empty group back.
		if len(g.modern.members) > 0 {
			fail(memberID, kerr.InconsistentGroupProtocol)
			return
		}
		g.modern = nil
	}
	if unknown && len(g.members) >= c.cfg.MaxGroupSize {
		fail("", kerr.GroupMaxSizeReached)
		return
	}
	if !unknown && g.has(memberID) && len(g.members) > c.cfg.MaxGroupSize && g.members[memberID].awaitingJoin == nil {
		// The group grew past group.max.size (the limit was lowered):
		// members that have not rejoined yet are shed.
		c.removeHeartbeatLocked(g.members[memberID])
		g.remove(memberID)
		fail("", kerr.GroupMaxSizeReached)
		return
	}
	protocols := protocolsOf(req)
	switch {
	case !g.supportsProtocols(req.ProtocolType, protocols):
		fail(memberID, kerr.InconsistentGroupProtocol)
	case unknown:
		c.unknownMemberJoinLocked(g, req, instanceID, clientID, clientHost, session, rebalance, protocols, respond)
	default:
		c.currentMemberJoinLocked(g, memberID, instanceID, clientID, clientHost, session, rebalance, req.ProtocolType, protocols, respond)
	}
	if g.is(PreparingRebalance) {
		c.checkJoinLocked(g)
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func (c *Coordinator) unknownMemberJoinLocked(g *group, req *kmsg.JoinGroupRequest, instanceID, clientID, clientHost string,
	session, rebalance time.Duration, protocols []protocol, respond func(joinResult)) {
	newID := newMemberID(clientID)
	switch {
	case instanceID != "":
		if oldID, ok := g.static[instanceID]; ok {
			c.updateStaticMemberLocked(g, oldID, newID, instanceID, session, rebalance, protocols, respond)
			return
		}
		c.addMemberAndRebalanceLocked(g, newID, instanceID, clientID, clientHost, session, rebalance, req.ProtocolType, protocols, respond)
	case req.Version >= 4:
		// KIP-394: the member learns its id first and rejoins with it, so
		// a client that times out does not leave a stray member behind.
		var t kafka.Timer
		t = c.clock.AfterFunc(session, func() {
			g.mu.Lock()
			defer g.mu.Unlock()
			if g.pending[newID] != t || g.is(Dead) {
				return
			}
			c.log.Info("Pending member has been removed after session timeout expiration", zap.String("group", g.id), zap.String("member-id", newID))
			delete(g.pending, newID)
			c.checkJoinLocked(g)
		})
		g.pending[newID] = t
		respond(joinResult{memberID: newID, generation: -1, err: kerr.MemberIDRequired})
	default:
		c.addMemberAndRebalanceLocked(g, newID, "", clientID, clientHost, session, rebalance, req.ProtocolType, protocols, respond)
	}
}

func (c *Coordinator) currentMemberJoinLocked(g *group, memberID, instanceID, clientID, clientHost string,
	session, rebalance time.Duration, protocolType string, protocols []protocol, respond func(joinResult)) {
	fail := func(err error) { respond(joinResult{memberID: memberID, generation: -1, err: err}) }
	if t, ok := g.pending[memberID]; ok {
		if instanceID != "" {
			fail(kerr.UnknownServerError)
			return
		}
		t.Stop()
		delete(g.pending, memberID)
		c.addMemberAndRebalanceLocked(g, memberID, "", clientID, clientHost, session, rebalance, protocolType, protocols, respond)
		return
	}
	if g.isStaticMemberFenced(memberID, instanceID) {
		c.log.Info("Fenced static member on join", zap.String("group", g.id), zap.String("member-id", memberID), zap.String("group-instance-id", instanceID))
		fail(kerr.FencedInstanceID)
		return
	}
	if !g.has(memberID) || (instanceID != "" && g.static[instanceID] == "") {
		fail(kerr.UnknownMemberID)
		return
	}
	m := g.members[memberID]
	switch g.state {
	case PreparingRebalance:
		c.updateMemberAndRebalanceLocked(g, m, protocols, session, rebalance, "member "+memberID+" joining group during PreparingRebalance", respond)
	case CompletingRebalance:
		if m.matches(protocols) {
			// The member lost its JoinGroup response: send it again.
			r := joinResult{memberID: memberID, generation: g.generation, protocolType: g.protocolType, protocolName: g.protocolName, leaderID: g.leaderID}
			if g.isLeader(memberID) {
				r.members = g.currentMemberMetadata()
			}
			respond(r)
			return
		}
		c.updateMemberAndRebalanceLocked(g, m, protocols, session, rebalance, "updating metadata for member "+memberID+" during CompletingRebalance", respond)
	case Stable:
		if g.isLeader(memberID) || !m.matches(protocols) {
			// The leader rejoining means it wants a new assignment (new
			// topics, say); anyone with new metadata too.
			c.updateMemberAndRebalanceLocked(g, m, protocols, session, rebalance, "leader "+memberID+" re-joining group during Stable", respond)
			return
		}
		respond(joinResult{memberID: memberID, generation: g.generation, protocolType: g.protocolType, protocolName: g.protocolName, leaderID: g.leaderID})
	default:
		fail(kerr.UnknownMemberID)
	}
}

func (c *Coordinator) addMemberAndRebalanceLocked(g *group, memberID, instanceID, clientID, clientHost string,
	session, rebalance time.Duration, protocolType string, protocols []protocol, respond func(joinResult)) {
	m := &member{
		id: memberID, instanceID: instanceID, clientID: clientID, clientHost: clientHost,
		rebalanceTimeout: rebalance, sessionTimeout: session, protocolType: protocolType, protocols: protocols, isNew: true,
	}
	if g.is(PreparingRebalance) && g.generation == 0 {
		g.newMemberAdded = true
	}
	g.add(m, respond)
	c.scheduleHeartbeatLocked(g, m, newMemberJoinTimeout)
	if instanceID != "" {
		c.log.Info("Adding new static member", zap.String("group", g.id), zap.String("group-instance-id", instanceID), zap.String("member-id", memberID))
		g.static[instanceID] = memberID
	}
	c.maybePrepareRebalanceLocked(g, "adding new member "+memberID)
}

func (c *Coordinator) updateMemberAndRebalanceLocked(g *group, m *member, protocols []protocol, session, rebalance time.Duration, reason string, respond func(joinResult)) {
	g.updateMember(m, protocols, rebalance, session, respond)
	c.maybePrepareRebalanceLocked(g, reason)
}

// updateStaticMemberLocked is a known group.instance.id joining with a new
// member id: the old id is fenced. In a Stable group whose protocol would
// not change the member takes its old assignment without a rebalance.
func (c *Coordinator) updateStaticMemberLocked(g *group, oldID, newID, instanceID string, session, rebalance time.Duration, protocols []protocol, respond func(joinResult)) {
	currentLeader := g.leaderID
	old := g.members[oldID]
	// A request parked under the old id is answered: that client is fenced.
	g.invokeJoin(old, joinResult{memberID: oldID, generation: -1, err: kerr.FencedInstanceID})
	g.invokeSync(old, syncResult{err: kerr.FencedInstanceID})
	c.removeHeartbeatLocked(old)
	oldProtocols, oldSession, oldRebalance := old.protocols, old.sessionTimeout, old.rebalanceTimeout
	c.replaceMemberIDLocked(g, old, newID)
	c.scheduleHeartbeatLocked(g, old, old.sessionTimeout)
	g.updateMember(old, protocols, rebalance, session, respond)
	m := old
	switch g.state {
	case Stable:
		if g.selectProtocol() != g.protocolName {
			c.prepareRebalanceLocked(g, "updating metadata for static member "+newID)
			return
		}
		c.log.Info("Static member joined during Stable without changing the protocol: no rebalance",
			zap.String("group", g.id), zap.String("group-instance-id", instanceID), zap.String("member-id", newID))
		assignment := map[string][]byte{}
		for id, x := range g.members {
			assignment[id] = x.assignment
		}
		c.storeGroupLocked(g, assignment, func(err error) {
			if err != nil {
				// Undo: the old member id stands again.
				if g.members[newID] == m {
					c.replaceMemberIDLocked(g, m, oldID)
					g.updateMember(m, oldProtocols, oldRebalance, oldSession, nil)
				}
				g.invokeJoin(m, joinResult{memberID: "", generation: -1, err: err})
				return
			}
			// The old leader id is returned so that a rejoining leader does
			// not compute an assignment a Stable group would not send.
			g.invokeJoin(m, joinResult{memberID: m.id, generation: g.generation, protocolType: g.protocolType, protocolName: g.protocolName, leaderID: currentLeader})
		})
	case CompletingRebalance:
		// The leader may be assigning to the old id: start over.
		c.prepareRebalanceLocked(g, "updating metadata for static member "+newID)
	}
}

// replaceMemberIDLocked renames a static member (its group.instance.id is
// kept), keeping its place, leadership and assignment.
func (c *Coordinator) replaceMemberIDLocked(g *group, m *member, newID string) {
	oldID := m.id
	delete(g.members, oldID)
	m.id = newID
	g.members[newID] = m
	for i, id := range g.order {
		if id == oldID {
			g.order[i] = newID
		}
	}
	if g.leaderID == oldID {
		g.leaderID = newID
	}
	g.static[m.instanceID] = newID
}

// SyncGroup answers a SyncGroup request; the leader's carries the
// assignment. It blocks until the assignment is stored or ctx ends.
func (c *Coordinator) SyncGroup(ctx context.Context, req *kmsg.SyncGroupRequest) *kmsg.SyncGroupResponse {
	ch := make(chan syncResult, 1)
	c.syncGroup(req, func(r syncResult) { ch <- r })
	defer reqclock.Waited(ctx, time.Now())
	select {
	case r := <-ch:
		resp := req.ResponseKind().(*kmsg.SyncGroupResponse)
		resp.ErrorCode = errCode(r.err)
		resp.MemberAssignment = r.assignment
		if resp.MemberAssignment == nil {
			resp.MemberAssignment = []byte{}
		}
		if r.err == nil {
			resp.ProtocolType, resp.Protocol = kmsg.StringPtr(r.protocolType), kmsg.StringPtr(r.protocolName)
		}
		return resp
	case <-ctx.Done():
		return nil
	}
}

func (c *Coordinator) syncGroup(req *kmsg.SyncGroupRequest, respond func(syncResult)) {
	fail := func(err error) { respond(syncResult{err: err}) }
	memberID, instanceID := req.MemberID, deref(req.InstanceID)
	g, err := c.lockGroup(req.Group, membershipAPI, false)
	switch {
	case err == kerr.CoordinatorLoadInProgress:
		// The rebalance state is lost with the old coordinator: the
		// member rejoins without looking the coordinator up again.
		fail(kerr.RebalanceInProgress)
		return
	case err != nil:
		fail(err)
		return
	case g == nil:
		fail(kerr.UnknownMemberID)
		return
	}
	defer g.mu.Unlock()
	switch {
	case g.isStaticMemberFenced(memberID, instanceID):
		fail(kerr.FencedInstanceID)
	case !g.has(memberID):
		fail(kerr.UnknownMemberID)
	case req.Generation != g.generation:
		fail(kerr.IllegalGeneration)
	case req.ProtocolType != nil && *req.ProtocolType != g.protocolType,
		req.Protocol != nil && *req.Protocol != g.protocolName:
		fail(kerr.InconsistentGroupProtocol)
	case g.is(Empty):
		fail(kerr.UnknownMemberID)
	case g.is(PreparingRebalance):
		fail(kerr.RebalanceInProgress)
	case g.is(Stable):
		m := g.members[memberID]
		respond(syncResult{protocolType: g.protocolType, protocolName: g.protocolName, assignment: m.assignment})
		c.scheduleHeartbeatLocked(g, m, m.sessionTimeout)
	case g.is(CompletingRebalance):
		g.members[memberID].awaitingSync = respond
		if !g.isLeader(memberID) {
			return
		}
		c.log.Info("Assignment received from leader", zap.String("group", g.id), zap.Int32("generation", g.generation))
		assignment := map[string][]byte{}
		for _, a := range req.GroupAssignment {
			assignment[a.MemberID] = a.MemberAssignment
		}
		for id := range g.members {
			if _, ok := assignment[id]; !ok {
				assignment[id] = []byte{}
			}
		}
		generation := g.generation
		c.storeGroupLocked(g, assignment, func(err error) {
			// Another member may have joined meanwhile.
			if !g.is(CompletingRebalance) || g.generation != generation {
				return
			}
			if err != nil {
				c.resetAndPropagateAssignmentErrorLocked(g, err)
				c.maybePrepareRebalanceLocked(g, "error storing the group assignment")
				return
			}
			for id, m := range g.members {
				m.assignment = assignment[id]
			}
			c.propagateAssignmentLocked(g, nil)
			c.transitionLocked(g, Stable)
		})
	}
}

// Heartbeat answers a Heartbeat request.
func (c *Coordinator) Heartbeat(req *kmsg.HeartbeatRequest) *kmsg.HeartbeatResponse {
	resp := req.ResponseKind().(*kmsg.HeartbeatResponse)
	resp.ErrorCode = errCode(c.heartbeat(req))
	return resp
}

func (c *Coordinator) heartbeat(req *kmsg.HeartbeatRequest) error {
	memberID, instanceID := req.MemberID, deref(req.InstanceID)
	g, err := c.lockGroup(req.Group, membershipAPI, false)
	switch {
	case err == kerr.CoordinatorLoadInProgress:
		// The group is loading: answer blindly.
		return nil
	case err != nil:
		return err
	case g == nil:
		return kerr.UnknownMemberID
	}
	defer g.mu.Unlock()
	switch {
	case g.isStaticMemberFenced(memberID, instanceID):
		return kerr.FencedInstanceID
	case !g.has(memberID):
		return kerr.UnknownMemberID
	case req.Generation != g.generation:
		return kerr.IllegalGeneration
	case g.is(Empty):
		return kerr.UnknownMemberID
	}
	m := g.members[memberID]
	c.scheduleHeartbeatLocked(g, m, m.sessionTimeout)
	if g.is(PreparingRebalance) {
		return kerr.RebalanceInProgress
	}
	return nil
}

// LeaveGroup answers a LeaveGroup request: one member (v0-v2) or a batch
// (v3+, by member id or group.instance.id).
func (c *Coordinator) LeaveGroup(req *kmsg.LeaveGroupRequest) *kmsg.LeaveGroupResponse {
	resp := req.ResponseKind().(*kmsg.LeaveGroupResponse)
	type leaving struct{ memberID, instanceID string }
	var members []leaving
	if req.Version < 3 {
		members = append(members, leaving{memberID: req.MemberID})
	}
	for _, m := range req.Members {
		members = append(members, leaving{m.MemberID, deref(m.InstanceID)})
	}
	errs := make([]error, len(members))
	g, err := c.lockGroup(req.Group, membershipAPI, false)
	switch {
	case err != nil:
		resp.ErrorCode = errCode(err)
		return resp
	case g == nil:
		for i := range errs {
			errs[i] = kerr.UnknownMemberID
		}
	default:
		for i, l := range members {
			errs[i] = c.leaveLocked(g, l.memberID, l.instanceID)
		}
		g.mu.Unlock()
	}
	if req.Version < 3 {
		resp.ErrorCode = errCode(errs[0])
		return resp
	}
	for i, l := range members {
		rm := kmsg.NewLeaveGroupResponseMember()
		rm.MemberID = l.memberID
		if l.instanceID != "" {
			rm.InstanceID = kmsg.StringPtr(l.instanceID)
		}
		rm.ErrorCode = errCode(errs[i])
		resp.Members = append(resp.Members, rm)
	}
	return resp
}

func (c *Coordinator) leaveLocked(g *group, memberID, instanceID string) error {
	if t, ok := g.pending[memberID]; ok && memberID != "" {
		t.Stop()
		delete(g.pending, memberID)
		c.checkJoinLocked(g)
		return nil
	}
	if memberID != "" && g.isStaticMemberFenced(memberID, instanceID) {
		return kerr.FencedInstanceID
	}
	if id, ok := g.static[instanceID]; ok && instanceID != "" {
		memberID = id
	}
	m, ok := g.members[memberID]
	if !ok {
		return kerr.UnknownMemberID
	}
	c.log.Info("Member is leaving the group", zap.String("group", g.id), zap.String("member-id", memberID), zap.String("group-instance-id", instanceID))
	c.removeMemberAndUpdateLocked(g, m, "removing member "+memberID+" on LeaveGroup")
	return nil
}
