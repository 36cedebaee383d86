package controller

import "slices"

// Leader selection: pure functions of a partition's assignment, ISR and the set of live brokers,
// as Kafka's PartitionLeaderElectionAlgorithms and Election. Each walks the assignment in its
// stored order, so the preferred (first) replica wins whenever it qualifies.

// election is the outcome of a leader election for one partition.
type election struct {
	leader  int32
	isr     []int32
	unclean bool // the leader was not in the ISR: records may be lost
}

// initialLeadership picks the leadership of a partition coming online for the first time
// (NewPartition → OnlinePartition): the first live replica leads and every live replica is in
// the ISR, in assignment order. ok is false when no replica is live.
func initialLeadership(assignment []int32, isLive func(int32) bool) (e election, ok bool) {
	var live []int32
	for _, r := range assignment {
		if isLive(r) {
			live = append(live, r)
		}
	}
	if len(live) == 0 {
		return election{}, false
	}
	return election{leader: live[0], isr: live}, true
}

// hasLiveISRMember says whether an offline election can pick a clean leader.
func hasLiveISRMember(assignment, isr []int32, isLive func(int32) bool) bool {
	return slices.ContainsFunc(assignment, func(r int32) bool { return isLive(r) && slices.Contains(isr, r) })
}

// offlineLeaderElection is Kafka's OfflinePartitionLeaderElectionStrategy: the first live replica
// in assignment order that is in the ISR leads, and the ISR shrinks to its live members. With no
// live ISR member and uncleanEnabled, the first live replica leads alone (an unclean election).
// ok is false when no replica qualifies; the partition then stays offline.
func offlineLeaderElection(assignment, isr []int32, isLive func(int32) bool, uncleanEnabled bool) (e election, ok bool) {
	for _, r := range assignment {
		if isLive(r) && slices.Contains(isr, r) {
			var newISR []int32
			for _, m := range isr {
				if isLive(m) {
					newISR = append(newISR, m)
				}
			}
			return election{leader: r, isr: newISR}, true
		}
	}
	if !uncleanEnabled {
		return election{}, false
	}
	for _, r := range assignment {
		if isLive(r) {
			return election{leader: r, isr: []int32{r}, unclean: true}, true
		}
	}
	return election{}, false
}

// withoutReplica is Kafka's removal of an offline replica from a partition's ISR: the leader
// becomes NoLeader if the replica led, and the replica leaves the ISR unless it is the last
// member (the ISR is never written empty). ok is false when the replica is not in the ISR, in
// which case nothing changes.
func withoutReplica(l leaderAndISR, replica int32) (next leaderAndISR, ok bool) {
	if !slices.Contains(l.isr, replica) {
		return l, false
	}
	leader := l.leader
	if leader == replica {
		leader = noLeader
	}
	isr := l.isr
	if len(isr) > 1 {
		isr = slices.DeleteFunc(slices.Clone(isr), func(r int32) bool { return r == replica })
	}
	return l.newLeaderAndISR(leader, isr), true
}

// preferredReplicaLeader is Kafka's PreferredReplicaPartitionLeaderElectionStrategy: the first
// assigned replica leads if it is online and in the ISR; the ISR is unchanged.
func preferredReplicaLeader(assignment, isr []int32, isOnline func(int32) bool) (e election, ok bool) {
	if len(assignment) == 0 {
		return election{}, false
	}
	preferred := assignment[0]
	if !isOnline(preferred) || !slices.Contains(isr, preferred) {
		return election{}, false
	}
	return election{leader: preferred, isr: isr}, true
}

// reassignPartitionLeader is Kafka's ReassignPartitionLeaderElectionStrategy: the first target
// replica that is online and in the ISR leads; the ISR is unchanged.
func reassignPartitionLeader(target, isr []int32, isOnline func(int32) bool) (e election, ok bool) {
	for _, r := range target {
		if isOnline(r) && slices.Contains(isr, r) {
			return election{leader: r, isr: isr}, true
		}
	}
	return election{}, false
}

// controlledShutdownLeader is Kafka's ControlledShutdownPartitionLeaderElectionStrategy: the
// first assigned replica that is live, in the ISR and not shutting down leads, and the ISR loses
// every shutting-down broker.
func controlledShutdownLeader(assignment, isr []int32, isLive func(int32) bool, shuttingDown func(int32) bool) (e election, ok bool) {
	for _, r := range assignment {
		if isLive(r) && !shuttingDown(r) && slices.Contains(isr, r) {
			return election{leader: r, isr: slices.DeleteFunc(slices.Clone(isr), shuttingDown)}, true
		}
	}
	return election{}, false
}
