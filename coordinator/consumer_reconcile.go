package coordinator

import "github.com/twmb/franz-go/pkg/kerr"

// memberAssignment is the part of a member reconciliation moves: Kafka's
// CurrentAssignmentBuilder output.
type memberAssignment struct {
	epoch, previousEpoch int32
	state                memberState
	assigned, pending    assignment
}

func (m *consumerMember) current() memberAssignment {
	return memberAssignment{epoch: m.epoch, previousEpoch: m.previousEpoch, state: m.state, assigned: m.assigned, pending: m.pendingRevocation}
}

func (a memberAssignment) equal(b memberAssignment) bool {
	return a.epoch == b.epoch && a.previousEpoch == b.previousEpoch && a.state == b.state &&
		a.assigned.equal(b.assigned) && a.pending.equal(b.pending)
}

// reconcile moves a member one step toward its target of epoch
// targetEpoch, as Kafka's CurrentAssignmentBuilder: a member first revokes
// what it must give up (staying at its epoch until a heartbeat no longer
// lists those partitions as owned), then moves to the target epoch with the
// target partitions that no other member holds (held: assigned to or being
// revoked by another member, whose epochs held gives) and waits for the
// rest. owned is what the member's request says it owns, nil when the
// request did not say. A member in an unknown state is fenced unless it
// owns nothing. Unlike Kafka 4.0.0 (fixed in 4.0.x, KAFKA-19449), a
// partition the member is itself revoking can come straight back to it.
func reconcile(m memberAssignment, targetEpoch int32, target assignment, held func(t topicID, p int32) bool, owned assignment) (memberAssignment, error) {
	ownsAny := func(s assignment) bool { return owned == nil || owned.overlaps(s) }
	switch m.state {
	case memberStable:
		if m.epoch == targetEpoch {
			return m, nil
		}
		return computeNext(m, m.epoch, targetEpoch, target, held, ownsAny), nil
	case memberUnrevokedPartitions:
		if ownsAny(m.pending) {
			return m, nil
		}
		return computeNext(m, min(m.epoch+1, targetEpoch), targetEpoch, target, held, ownsAny), nil
	case memberUnreleasedPartitions:
		return computeNext(m, m.epoch, targetEpoch, target, held, ownsAny), nil
	}
	if owned == nil || owned.size() > 0 {
		return m, kerr.FencedMemberEpoch
	}
	return computeNext(m, targetEpoch, targetEpoch, target, held, ownsAny), nil
}

func computeNext(m memberAssignment, epoch, targetEpoch int32, target assignment, held func(topicID, int32) bool, ownsAny func(assignment) bool) memberAssignment {
	keep := m.assigned.filter(target.has)
	revoke := m.assigned.filter(func(t topicID, p int32) bool { return !target.has(t, p) })
	unreleased := false
	toAssign := target.filter(func(t topicID, p int32) bool {
		if keep.has(t, p) {
			return false
		}
		if held(t, p) {
			unreleased = true
			return false
		}
		return true
	})
	next := memberAssignment{previousEpoch: m.epoch, assigned: keep, pending: assignment{}}
	switch {
	case revoke.size() > 0 && ownsAny(revoke):
		next.epoch, next.state, next.pending = epoch, memberUnrevokedPartitions, revoke
	case toAssign.size() > 0:
		for t, ps := range toAssign {
			for _, p := range ps {
				next.assigned.add(t, p)
			}
		}
		next.epoch, next.state = targetEpoch, memberStable
		if unreleased {
			next.state = memberUnreleasedPartitions
		}
	case unreleased:
		next.epoch, next.state = targetEpoch, memberUnreleasedPartitions
	default:
		next.epoch, next.state = targetEpoch, memberStable
	}
	return next
}
