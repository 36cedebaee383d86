package coordinator

// The state of a group on the consumer rebalance protocol (KIP-848, Kafka
// 4.0's ConsumerGroup and ConsumerGroupMember): the coordinator computes
// every member's partitions itself, and members converge to that target one
// heartbeat at a time. consumer_heartbeat.go drives it.

import (
	"maps"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/zkafka/zkafka/kafka"
)

// topicID is a topic's id (KIP-516), as the consumer protocol names topics.
type topicID = [16]byte

// assignment is a set of partitions by topic id; each topic's partitions are
// sorted and the map holds no empty topic. A member's and a target's
// assignments are replaced when they change, never changed in place, so
// they may be shared (snapshots, a static member's replacement).
type assignment map[topicID][]int32

func (a assignment) size() int {
	n := 0
	for _, ps := range a {
		n += len(ps)
	}
	return n
}

func (a assignment) has(t topicID, p int32) bool {
	_, ok := slices.BinarySearch(a[t], p)
	return ok
}

func (a assignment) add(t topicID, p int32) {
	ps := a[t]
	if i, ok := slices.BinarySearch(ps, p); !ok {
		a[t] = slices.Insert(ps, i, p)
	}
}

func (a assignment) equal(b assignment) bool {
	return maps.EqualFunc(a, b, slices.Equal[[]int32])
}

// filter is the partitions of a for which keep is true.
func (a assignment) filter(keep func(t topicID, p int32) bool) assignment {
	out := assignment{}
	for t, ps := range a {
		for _, p := range ps {
			if keep(t, p) {
				out[t] = append(out[t], p)
			}
		}
	}
	return out
}

// overlaps reports whether a and b share a partition.
func (a assignment) overlaps(b assignment) bool {
	for t, ps := range a {
		for _, p := range ps {
			if b.has(t, p) {
				return true
			}
		}
	}
	return false
}

// memberState is where a member is in its reconciliation with its target
// (Kafka's MemberState).
type memberState int8

const (
	memberStable               memberState = 0   // reconciled, or converging without waiting
	memberUnrevokedPartitions  memberState = 1   // must revoke before it moves to the next epoch
	memberUnreleasedPartitions memberState = 2   // at the target epoch, waiting for partitions others still hold
	memberUnknownState         memberState = 127 // read from a record this broker does not know
)

func (s memberState) String() string {
	switch s {
	case memberStable:
		return "STABLE"
	case memberUnrevokedPartitions:
		return "UNREVOKED_PARTITIONS"
	case memberUnreleasedPartitions:
		return "UNRELEASED_PARTITIONS"
	}
	return "UNKNOWN"
}

// The member epochs a heartbeat carries beside a current one.
const (
	joinEpoch        int32 = 0
	leaveEpoch       int32 = -1
	staticLeaveEpoch int32 = -2
)

// consumerMember is one member of a consumer-protocol group.
type consumerMember struct {
	id, instanceID, rackID, clientID, clientHost string
	epoch, previousEpoch                         int32
	state                                        memberState
	// assigned are the partitions the member may consume at its epoch;
	// pendingRevocation those it must give up before its next.
	assigned, pendingRevocation assignment
	subscribedNames             []string // sorted
	subscribedRegex             string   // "" for none
	serverAssignor              string   // "" for the group's default
	rebalanceTimeout            time.Duration
	// session and rebalance are the member's timers; a firing timer that
	// is no longer the member's is stale.
	session, rebalance kafka.Timer
}

// stopTimers stops the member's session and rebalance timers.
func (m *consumerMember) stopTimers() {
	for _, t := range []kafka.Timer{m.session, m.rebalance} {
		if t != nil {
			t.Stop()
		}
	}
}

// reconciledTo reports whether the member has converged to the target of
// epoch.
func (m *consumerMember) reconciledTo(epoch int32) bool {
	return m.state == memberStable && m.epoch == epoch
}

// topicMetadata is what the assignment knows of a subscribed topic.
type topicMetadata struct {
	id         topicID
	partitions int32
}

// consumerGroup is a group on the consumer protocol. Its fields are guarded
// by the enclosing group's lock.
type consumerGroup struct {
	// epoch is the group epoch, bumped by every change the target must
	// follow; assignmentEpoch the epoch the target was computed at.
	epoch, assignmentEpoch int32
	members                map[string]*consumerMember
	static                 map[string]string // instance id → member id
	target                 map[string]assignment
	// metadata is the subscribed topics as the target was (or will be)
	// computed from, by name.
	metadata map[string]topicMetadata
}

func newConsumerGroup() *consumerGroup {
	return &consumerGroup{members: map[string]*consumerMember{}, static: map[string]string{},
		target: map[string]assignment{}, metadata: map[string]topicMetadata{}}
}

// Consumer group states (Kafka 4.0's ConsumerGroupState names).
const (
	consumerEmpty       = "Empty"
	consumerAssigning   = "Assigning"
	consumerReconciling = "Reconciling"
	consumerStable      = "Stable"
)

// state derives the group's state from its members and epochs.
func (cg *consumerGroup) state() string {
	switch {
	case len(cg.members) == 0:
		return consumerEmpty
	case cg.epoch > cg.assignmentEpoch:
		return consumerAssigning
	}
	for _, m := range cg.members {
		if !m.reconciledTo(cg.assignmentEpoch) {
			return consumerReconciling
		}
	}
	return consumerStable
}

// sortedMemberIDs is the members' ids in order: the order assignors and
// descriptions walk them in (Kafka walks a hash map's).
func (cg *consumerGroup) sortedMemberIDs() []string {
	return slices.Sorted(maps.Keys(cg.members))
}

// partitionEpochs maps every partition a member other than except holds
// (assigned or pending revocation) to that member's epoch; a partition
// absent is free.
func (cg *consumerGroup) partitionEpochs(except string) map[topicID]map[int32]int32 {
	out := map[topicID]map[int32]int32{}
	for id, m := range cg.members {
		if id == except {
			continue
		}
		for _, a := range []assignment{m.assigned, m.pendingRevocation} {
			for t, ps := range a {
				if out[t] == nil {
					out[t] = map[int32]int32{}
				}
				for _, p := range ps {
					out[t][p] = m.epoch
				}
			}
		}
	}
	return out
}

// validateCommit is Kafka 4.0's ConsumerGroup.validateOffsetCommit: an
// admin's commit (a negative epoch) into a group without members is
// accepted; otherwise the member must exist, commit with OffsetCommit v9 or
// later, at its current epoch (STALE_MEMBER_EPOCH otherwise). Commits do not
// extend the session.
func (cg *consumerGroup) validateCommit(req *kmsg.OffsetCommitRequest) error {
	m := cg.members[req.MemberID]
	switch {
	case req.Generation < 0 && len(cg.members) == 0:
		return nil
	case m == nil:
		return kerr.UnknownMemberID
	case req.Version < 9:
		return kerr.UnsupportedVersion
	case req.Generation != m.epoch:
		return kerr.StaleMemberEpoch
	}
	return nil
}
