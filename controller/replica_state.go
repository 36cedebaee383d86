package controller

import (
	"fmt"
	"maps"
	"slices"

	"go.uber.org/zap"

	"github.com/zkafka/zkafka/kafka"
)

// replicaState is a replica's state in the controller's replica state machine (Kafka's
// ReplicaState). Like partition states it lives only in memory.
type replicaState int8

// The values are Kafka's state bytes.
const (
	newReplica                replicaState = 1 // assigned during partition creation or reassignment
	onlineReplica             replicaState = 2 // started; may lead or follow
	offlineReplica            replicaState = 3 // its broker died or is stopping it
	replicaDeletionStarted    replicaState = 4 // StopReplica with delete sent
	replicaDeletionSuccessful replicaState = 5 // the broker deleted it
	replicaDeletionIneligible replicaState = 6 // deletion failed or its broker is down
	nonExistentReplica        replicaState = 7 // not known (the zero state of a replica's lifetime)
)

func (s replicaState) String() string {
	switch s {
	case newReplica:
		return "NewReplica"
	case onlineReplica:
		return "OnlineReplica"
	case offlineReplica:
		return "OfflineReplica"
	case replicaDeletionStarted:
		return "ReplicaDeletionStarted"
	case replicaDeletionSuccessful:
		return "ReplicaDeletionSuccessful"
	case replicaDeletionIneligible:
		return "ReplicaDeletionIneligible"
	case nonExistentReplica:
		return "NonExistentReplica"
	}
	return "UnknownReplicaState"
}

// validPreviousReplicaStates is Kafka's replica transition table.
var validPreviousReplicaStates = map[replicaState][]replicaState{
	newReplica:                {nonExistentReplica},
	onlineReplica:             {newReplica, onlineReplica, offlineReplica, replicaDeletionIneligible},
	offlineReplica:            {newReplica, onlineReplica, offlineReplica, replicaDeletionIneligible},
	replicaDeletionStarted:    {offlineReplica},
	replicaDeletionSuccessful: {replicaDeletionStarted},
	replicaDeletionIneligible: {offlineReplica, replicaDeletionStarted},
	nonExistentReplica:        {replicaDeletionSuccessful},
}

func validReplicaTransition(from, to replicaState) bool {
	return slices.Contains(validPreviousReplicaStates[to], from)
}

// replicaState returns the replica's state; unknown replicas are NonExistentReplica.
func (c *Controller) replicaState(pr partitionReplica) replicaState {
	if s, ok := c.cc.replicaStates[pr]; ok {
		return s
	}
	return nonExistentReplica
}

// startReplicaStateMachine sets every assigned replica's initial state after a failover: online
// if its broker is, otherwise ReplicaDeletionIneligible (Kafka's choice: a replica on a dead
// broker cannot be deleted yet). It then moves the online ones to OnlineReplica, which sends
// every live broker LeaderAndIsr for its partitions, and the others to OfflineReplica, which
// takes them out of ISRs.
func (c *Controller) startReplicaStateMachine(b *requestBatch) error {
	cc := c.cc
	var online, offline []partitionReplica
	for _, pr := range cc.replicasOf(cc.allPartitions()) {
		if cc.isOnline(pr.replica) {
			cc.replicaStates[pr] = onlineReplica
			online = append(online, pr)
		} else {
			cc.replicaStates[pr] = replicaDeletionIneligible
			offline = append(offline, pr)
		}
	}
	if err := c.changeReplicaStates(b, online, onlineReplica); err != nil {
		return err
	}
	return c.changeReplicaStates(b, offline, offlineReplica)
}

// changeReplicaStates moves replicas to target (Kafka's ZkReplicaStateMachine
// handleStateChanges), queuing the requests the transitions need in b. Replicas whose current
// state may not lead to target are logged and skipped. Only ErrControllerMoved is returned.
func (c *Controller) changeReplicaStates(b *requestBatch, replicas []partitionReplica, target replicaState) error {
	cc := c.cc
	var valid []partitionReplica
	for _, pr := range replicas {
		from := c.replicaState(pr)
		if !validReplicaTransition(from, target) {
			c.stateLog.Error("Invalid replica state transition; skipped",
				zap.Stringer("replica", pr), zap.Stringer("from", from), zap.Stringer("to", target))
			continue
		}
		valid = append(valid, pr)
	}
	if len(valid) == 0 {
		return nil
	}
	// Bulk transitions (failover, broker failure) log a summary; single replicas are logged
	// one by one, as Kafka's state-change log does.
	verbose := len(valid) <= 100
	record := func(pr partitionReplica) {
		if verbose {
			c.stateLog.Info(fmt.Sprintf("Changed state of replica %d for partition %s from %s to %s",
				pr.replica, pr.tp, c.replicaState(pr), target), zap.Stringer("partition", pr.tp))
		}
		cc.replicaStates[pr] = target
	}
	switch target {
	case newReplica:
		for _, pr := range valid {
			if l, ok := cc.leadership[pr.tp]; ok {
				if l.leader == pr.replica {
					c.stateLog.Error("Replica cannot move to NewReplica: it is the partition's leader",
						zap.Stringer("replica", pr))
					continue
				}
				b.addLeaderAndISR([]int32{pr.replica}, pr.tp, true)
			}
			record(pr)
		}
	case onlineReplica:
		for _, pr := range valid {
			if c.replicaState(pr) != newReplica {
				if _, ok := cc.leadership[pr.tp]; ok {
					b.addLeaderAndISR([]int32{pr.replica}, pr.tp, false)
				}
			}
			record(pr)
		}
	case offlineReplica:
		byBroker := map[int32][]kafka.TopicPartition{}
		for _, pr := range valid {
			b.addStopReplica(pr.replica, pr.tp, false)
			byBroker[pr.replica] = append(byBroker[pr.replica], pr.tp)
		}
		for _, id := range slices.Sorted(maps.Keys(byBroker)) {
			if err := c.removeReplicaFromISR(b, id, byBroker[id]); err != nil {
				return err
			}
		}
		for _, pr := range valid {
			record(pr)
		}
	case replicaDeletionStarted:
		for _, pr := range valid {
			b.addStopReplica(pr.replica, pr.tp, true)
			record(pr)
		}
	case replicaDeletionSuccessful, replicaDeletionIneligible:
		for _, pr := range valid {
			record(pr)
		}
	case nonExistentReplica:
		for _, pr := range valid {
			if t, ok := cc.topics[pr.tp.Topic]; ok {
				if rs, ok := t.assignment.Partitions[pr.tp.Partition]; ok {
					t.assignment.Partitions[pr.tp.Partition] = slices.DeleteFunc(slices.Clone(rs), func(r int32) bool { return r == pr.replica })
				}
			}
			if verbose {
				c.stateLog.Info(fmt.Sprintf("Changed state of replica %d for partition %s from %s to %s",
					pr.replica, pr.tp, c.replicaState(pr), target), zap.Stringer("partition", pr.tp))
			}
			delete(cc.replicaStates, pr)
		}
	}
	if !verbose {
		c.stateLog.Info("Changed replica states", zap.Int("replicas", len(valid)), zap.Stringer("to", target))
	}
	return nil
}

// replicasInState returns the replicas of the topic in any of states.
func (c *Controller) replicasInState(topic string, states ...replicaState) []partitionReplica {
	var out []partitionReplica
	for _, pr := range c.cc.replicasOf(c.cc.partitionsOfTopic(topic)) {
		if slices.Contains(states, c.replicaState(pr)) {
			out = append(out, pr)
		}
	}
	return out
}

// areAllReplicasInState reports whether every replica of the topic is in state.
func (c *Controller) areAllReplicasInState(topic string, state replicaState) bool {
	for _, pr := range c.cc.replicasOf(c.cc.partitionsOfTopic(topic)) {
		if c.replicaState(pr) != state {
			return false
		}
	}
	return true
}
