package coordinator

import (
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/kafka"
)

// GroupState is a group's state in the rebalance protocol (Kafka's
// GroupState); doc.go draws the machine.
type GroupState int8

// The states of a group.
const (
	Empty GroupState = iota
	PreparingRebalance
	CompletingRebalance
	Stable
	Dead
)

func (s GroupState) String() string {
	switch s {
	case Empty:
		return "Empty"
	case PreparingRebalance:
		return "PreparingRebalance"
	case CompletingRebalance:
		return "CompletingRebalance"
	case Stable:
		return "Stable"
	case Dead:
		return "Dead"
	}
	return "Unknown"
}

// validPreviousStates is Kafka's table: a transition to a state is legal only
// from these.
var validPreviousStates = map[GroupState][]GroupState{
	Empty:               {PreparingRebalance},
	PreparingRebalance:  {Stable, CompletingRebalance, Empty},
	CompletingRebalance: {PreparingRebalance},
	Stable:              {CompletingRebalance},
	Dead:                {Stable, PreparingRebalance, CompletingRebalance, Empty, Dead},
}

// consumerProtocolType is the protocol type of Kafka's consumer groups, whose
// subscriptions the coordinator reads for OffsetDelete and offset expiry.
const consumerProtocolType = "consumer"

type protocol struct {
	name     string
	metadata []byte
}

// joinResult is what a waiting JoinGroup is answered with.
type joinResult struct {
	members      []kmsg.JoinGroupResponseMember
	memberID     string
	generation   int32
	protocolType string
	protocolName string
	leaderID     string
	err          error
}

// syncResult is what a waiting SyncGroup is answered with.
type syncResult struct {
	protocolType, protocolName string
	assignment                 []byte
	err                        error
}

// member is one group member (Kafka's MemberMetadata).
type member struct {
	id               string
	instanceID       string // group.instance.id; empty for a dynamic member
	clientID         string
	clientHost       string
	rebalanceTimeout time.Duration
	sessionTimeout   time.Duration
	protocolType     string
	protocols        []protocol
	assignment       []byte
	// awaitingJoin and awaitingSync answer the member's parked JoinGroup or
	// SyncGroup; nil when none is parked.
	awaitingJoin func(joinResult)
	awaitingSync func(syncResult)
	// isNew marks a member added in the current rebalance: its session
	// timer is the new-member join timeout and waiting does not count as a
	// heartbeat.
	isNew bool
	// heartbeat is the member's session expiration timer; a firing timer
	// that is not the current one is stale.
	heartbeat kafka.Timer
}

func (m *member) metadata(protocolName string) []byte {
	for _, p := range m.protocols {
		if p.name == protocolName {
			return p.metadata
		}
	}
	return nil
}

// matches reports whether a rejoin carries the same protocols and metadata.
func (m *member) matches(protocols []protocol) bool {
	return slices.EqualFunc(m.protocols, protocols, func(a, b protocol) bool {
		return a.name == b.name && string(a.metadata) == string(b.metadata)
	})
}

// vote is the member's first preference among the candidates.
func (m *member) vote(candidates map[string]bool) string {
	for _, p := range m.protocols {
		if candidates[p.name] {
			return p.name
		}
	}
	return ""
}

// delayedJoin is the pending completion of the join phase: Kafka's
// DelayedJoin, or InitialDelayedJoin when the group was Empty.
type delayedJoin struct {
	initial   bool
	remaining time.Duration
	timer     kafka.Timer
}

// committedOffset is a committed offset and where its record is in the log,
// so a slower acknowledgement of an older commit does not overwrite a newer
// one.
type committedOffset struct {
	OffsetAndMetadata
	recordOffset int64
}

// putIfNewer makes o the offset of tp in offsets unless the one there has
// a later record.
func putIfNewer(offsets map[kafka.TopicPartition]committedOffset, tp kafka.TopicPartition, o committedOffset) {
	if cur, ok := offsets[tp]; !ok || cur.recordOffset < o.recordOffset {
		offsets[tp] = o
	}
}

// OffsetAndMetadata is one committed offset as stored.
type OffsetAndMetadata struct {
	Offset          int64
	LeaderEpoch     int32
	Metadata        string
	CommitTimestamp int64
	ExpireTimestamp int64 // -1 unless the client set a retention time
}

// group is one consumer group (Kafka's GroupMetadata). id and partition
// never change; mu guards everything else, including the group's members
// and their timers.
type group struct {
	id        string
	partition int32

	mu           sync.Mutex
	state        GroupState
	stateTime    time.Time
	protocolType string
	protocolName string
	generation   int32
	leaderID     string
	members      map[string]*member
	order        []string // member ids in join order: leader fallback and stored order
	// pending are member ids handed out with MEMBER_ID_REQUIRED (KIP-394),
	// each with its expiration timer.
	pending map[string]kafka.Timer
	// static maps group.instance.id to the current member id (KIP-345).
	static             map[string]string
	supportedProtocols map[string]int
	numAwaitingJoin    int
	newMemberAdded     bool
	join               *delayedJoin
	offsets            map[kafka.TopicPartition]committedOffset
	// pendingCommits counts commits appended and not yet acknowledged:
	// the group keeps its offsets until they are (Kafka's
	// pendingOffsetCommits).
	pendingCommits int
	// pendingTxnOffsets are TxnOffsetCommits by producer id, awaiting their
	// transaction's marker (Kafka's pendingTransactionalOffsetCommits); an
	// offset's recordOffset is -1 until its record is acknowledged.
	pendingTxnOffsets map[int64]map[kafka.TopicPartition]committedOffset
	// subscribed is the union of the consumer members' topics when known
	// (protocol type "consumer" and every subscription readable).
	subscribed      map[string]bool
	subscribedKnown bool
	// modern is the group's state on the consumer rebalance protocol
	// (KIP-848); nil for a classic group.
	modern *consumerGroup
}

func newGroup(id string, partition int32, now time.Time) *group {
	return &group{
		id: id, partition: partition, state: Empty, stateTime: now,
		members: map[string]*member{}, pending: map[string]kafka.Timer{}, static: map[string]string{},
		supportedProtocols: map[string]int{}, offsets: map[kafka.TopicPartition]committedOffset{},
		pendingTxnOffsets: map[int64]map[kafka.TopicPartition]committedOffset{},
		subscribed:        map[string]bool{}, subscribedKnown: true,
	}
}

func (g *group) is(s GroupState) bool { return g.state == s }

// empty reports whether the group has no members on either protocol.
func (g *group) empty() bool { return g.is(Empty) && (g.modern == nil || len(g.modern.members) == 0) }

// hasOffsets counts commits in flight and transactional commits awaiting
// their marker as offsets, so the expiry check does not remove a group
// whose first commit is being replicated or decided.
func (g *group) hasOffsets() bool {
	return len(g.offsets) > 0 || g.pendingCommits > 0 || len(g.pendingTxnOffsets) > 0
}

// hasPendingTxnOffset reports whether a transaction's commit of the
// partition awaits its marker (OffsetFetch's require_stable, KIP-447).
func (g *group) hasPendingTxnOffset(tp kafka.TopicPartition) bool {
	for _, offsets := range g.pendingTxnOffsets {
		if _, ok := offsets[tp]; ok {
			return true
		}
	}
	return false
}

// completePendingTxnOffsets settles a producer's transactional commits: on
// commit each becomes the group's offset unless a newer record already is,
// on abort they are dropped (Kafka's completePendingTxnOffsetCommit).
func (g *group) completePendingTxnOffsets(producerID int64, commit bool) {
	pending := g.pendingTxnOffsets[producerID]
	delete(g.pendingTxnOffsets, producerID)
	if !commit {
		return
	}
	for tp, o := range pending {
		if o.recordOffset < 0 {
			continue // never acknowledged: the commit failed
		}
		putIfNewer(g.offsets, tp, o)
	}
}

func (g *group) canTransitionTo(s GroupState) bool {
	return slices.Contains(validPreviousStates[s], g.state)
}

func (g *group) has(memberID string) bool { _, ok := g.members[memberID]; return ok }

func (g *group) isLeader(memberID string) bool { return g.leaderID == memberID }

func (g *group) canRebalance() bool {
	return slices.Contains(validPreviousStates[PreparingRebalance], g.state)
}

func (g *group) hasAllMembersJoined() bool {
	return len(g.members) == g.numAwaitingJoin && len(g.pending) == 0
}

// isStaticMemberFenced: the instance id belongs to another member id.
func (g *group) isStaticMemberFenced(memberID, instanceID string) bool {
	if instanceID == "" {
		return false
	}
	current, ok := g.static[instanceID]
	return ok && current != memberID
}

func (g *group) add(m *member, onJoin func(joinResult)) {
	if len(g.members) == 0 {
		g.protocolType = m.protocolType
	}
	if g.leaderID == "" {
		g.leaderID = m.id
	}
	g.members[m.id] = m
	g.order = append(g.order, m.id)
	for _, p := range m.protocols {
		g.supportedProtocols[p.name]++
	}
	m.awaitingJoin = onJoin
	if onJoin != nil {
		g.numAwaitingJoin++
	}
}

func (g *group) remove(memberID string) {
	m, ok := g.members[memberID]
	if !ok {
		return
	}
	for _, p := range m.protocols {
		g.supportedProtocols[p.name]--
	}
	if m.awaitingJoin != nil {
		g.numAwaitingJoin--
	}
	delete(g.members, memberID)
	g.order = slices.DeleteFunc(g.order, func(id string) bool { return id == memberID })
	if m.instanceID != "" && g.static[m.instanceID] == memberID {
		delete(g.static, m.instanceID)
	}
	if g.isLeader(memberID) {
		g.leaderID = ""
		if len(g.order) > 0 {
			g.leaderID = g.order[0]
		}
	}
}

// updateMember takes a rejoin's protocols and timeouts and parks its
// JoinGroup.
func (g *group) updateMember(m *member, protocols []protocol, rebalanceTimeout, sessionTimeout time.Duration, onJoin func(joinResult)) {
	for _, p := range m.protocols {
		g.supportedProtocols[p.name]--
	}
	for _, p := range protocols {
		g.supportedProtocols[p.name]++
	}
	m.protocols, m.rebalanceTimeout, m.sessionTimeout = protocols, rebalanceTimeout, sessionTimeout
	if onJoin != nil {
		if m.awaitingJoin == nil {
			g.numAwaitingJoin++
		}
		m.awaitingJoin = onJoin
	}
}

func (g *group) invokeJoin(m *member, r joinResult) {
	if m.awaitingJoin == nil {
		return
	}
	m.awaitingJoin(r)
	m.awaitingJoin = nil
	g.numAwaitingJoin--
}

func (g *group) invokeSync(m *member, r syncResult) {
	if m.awaitingSync == nil {
		return
	}
	m.awaitingSync(r)
	m.awaitingSync = nil
}

// supportsProtocols: an empty group takes any non-empty protocol type and
// list; otherwise the type must match and one protocol must be supported by
// every member.
func (g *group) supportsProtocols(protocolType string, protocols []protocol) bool {
	if len(g.members) == 0 {
		return protocolType != "" && len(protocols) > 0
	}
	if g.protocolType != protocolType {
		return false
	}
	for _, p := range protocols {
		if g.supportedProtocols[p.name] == len(g.members) {
			return true
		}
	}
	return false
}

// selectProtocol is the vote: the candidates are the protocols every member
// supports, each member votes for its first candidate, the most votes win
// (ties go to the earliest member's preference).
func (g *group) selectProtocol() string {
	candidates := map[string]bool{}
	for name, n := range g.supportedProtocols {
		if n == len(g.members) {
			candidates[name] = true
		}
	}
	votes := map[string]int{}
	best := ""
	for _, id := range g.order {
		v := g.members[id].vote(candidates)
		votes[v]++
		if best == "" || votes[v] > votes[best] {
			best = v
		}
	}
	return best
}

// rebalanceTimeout is the longest rebalance timeout of the members.
func (g *group) rebalanceTimeout() time.Duration {
	var d time.Duration
	for _, m := range g.members {
		d = max(d, m.rebalanceTimeout)
	}
	return d
}

// electNewJoinedLeader keeps the leader if it rejoined, else takes any
// member that did; false when no member rejoined.
func (g *group) electNewJoinedLeader() bool {
	if g.leaderID == "" {
		return false
	}
	if g.members[g.leaderID].awaitingJoin != nil {
		return true
	}
	for _, id := range g.order {
		if g.members[id].awaitingJoin != nil {
			g.leaderID = id
			return true
		}
	}
	return false
}

// currentMemberMetadata is what the leader's JoinGroup response lists.
func (g *group) currentMemberMetadata() []kmsg.JoinGroupResponseMember {
	out := make([]kmsg.JoinGroupResponseMember, 0, len(g.members))
	for _, id := range g.order {
		m := g.members[id]
		jm := kmsg.NewJoinGroupResponseMember()
		jm.MemberID = m.id
		if m.instanceID != "" {
			jm.InstanceID = kmsg.StringPtr(m.instanceID)
		}
		jm.ProtocolMetadata = m.metadata(g.protocolName)
		out = append(out, jm)
	}
	return out
}

// computeSubscribedTopics reads the consumer subscriptions of the chosen
// protocol; unknown when the group is not a consumer group or one does not
// parse.
func (g *group) computeSubscribedTopics() {
	g.subscribed, g.subscribedKnown = map[string]bool{}, true
	if len(g.members) == 0 {
		return
	}
	if g.protocolType != consumerProtocolType {
		g.subscribedKnown = false
		return
	}
	for _, m := range g.members {
		var meta kmsg.ConsumerMemberMetadata
		if err := meta.ReadFrom(m.metadata(g.protocolName)); err != nil {
			g.subscribed, g.subscribedKnown = nil, false
			return
		}
		for _, t := range meta.Topics {
			g.subscribed[t] = true
		}
	}
}

// isSubscribedTo is conservative: an unknown subscription covers every
// topic.
func (g *group) isSubscribedTo(topic string) bool {
	if g.modern != nil {
		_, ok := g.modern.metadata[topic]
		return ok
	}
	return !g.subscribedKnown || g.subscribed[topic]
}
