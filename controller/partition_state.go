package controller

import (
	"errors"
	"fmt"
	"slices"

	"github.com/go-zookeeper/zk"
	"go.uber.org/zap"
)

// partitionState is a partition's state in the controller's partition state machine (Kafka's
// PartitionState). It lives only in memory: a new controller rebuilds it from ZooKeeper.
type partitionState int8

// The values are Kafka's state bytes.
const (
	newPartition         partitionState = 0 // assigned, never had a leader
	onlinePartition      partitionState = 1 // has a live leader
	offlinePartition     partitionState = 2 // its leader died and none has been elected yet
	nonExistentPartition partitionState = 3 // not known (the zero state of a partition's lifetime)
)

func (s partitionState) String() string {
	switch s {
	case newPartition:
		return "NewPartition"
	case onlinePartition:
		return "OnlinePartition"
	case offlinePartition:
		return "OfflinePartition"
	case nonExistentPartition:
		return "NonExistentPartition"
	}
	return "UnknownPartitionState"
}

// validPreviousPartitionStates is the transition table: a partition may enter a state only from
// the states listed for it.
var validPreviousPartitionStates = map[partitionState][]partitionState{
	newPartition:         {nonExistentPartition},
	onlinePartition:      {newPartition, onlinePartition, offlinePartition},
	offlinePartition:     {newPartition, onlinePartition, offlinePartition},
	nonExistentPartition: {offlinePartition},
}

func validPartitionTransition(from, to partitionState) bool {
	return slices.Contains(validPreviousPartitionStates[to], from)
}

// partitionState returns the partition's state; partitions the controller has not seen are
// NonExistentPartition.
func (c *Controller) partitionState(tp topicPartition) partitionState {
	if s, ok := c.cc.partitionStates[tp]; ok {
		return s
	}
	return nonExistentPartition
}

// changePartitionStates moves partitions to target (Kafka's PartitionStateMachine
// handleStateChanges with the offline leader election strategy), queuing the requests the
// changes need in b. Partitions whose current state may not lead to target are logged and
// skipped; partitions whose change fails keep their state. Only ErrControllerMoved is returned.
func (c *Controller) changePartitionStates(b *requestBatch, partitions []topicPartition, target partitionState) error {
	var valid []topicPartition
	for _, tp := range partitions {
		from := c.partitionState(tp)
		if !validPartitionTransition(from, target) {
			c.stateLog.Error("Invalid partition state transition; skipped",
				zap.Stringer("partition", tp), zap.Stringer("from", from), zap.Stringer("to", target))
			continue
		}
		valid = append(valid, tp)
	}
	switch target {
	case newPartition:
		for _, tp := range valid {
			c.stateLog.Info(fmt.Sprintf("Changed partition %s state from %s to %s with assigned replicas %s",
				tp, c.partitionState(tp), target, joinIDs(c.cc.replicas(tp))), zap.Stringer("partition", tp))
			c.cc.partitionStates[tp] = newPartition
		}
	case onlinePartition:
		var uninitialized, toElect []topicPartition
		for _, tp := range valid {
			if c.partitionState(tp) == newPartition {
				uninitialized = append(uninitialized, tp)
			} else {
				toElect = append(toElect, tp)
			}
		}
		if err := c.initializeLeaderAndISR(b, uninitialized); err != nil {
			return err
		}
		if err := c.electLeaders(b, toElect); err != nil {
			return err
		}
	case offlinePartition, nonExistentPartition:
		for _, tp := range valid {
			c.stateLog.Info(fmt.Sprintf("Changed partition %s state from %s to %s", tp, c.partitionState(tp), target),
				zap.Stringer("partition", tp))
			c.cc.partitionStates[tp] = target
		}
	}
	return nil
}

// becameOnline records a successful move to OnlinePartition.
func (c *Controller) becameOnline(tp topicPartition) {
	c.stateLog.Info(fmt.Sprintf("Changed partition %s from %s to %s with state %s",
		tp, c.partitionState(tp), onlinePartition, c.cc.leadership[tp].leaderAndISR), zap.Stringer("partition", tp))
	c.cc.partitionStates[tp] = onlinePartition
}

// failedStateChange logs a partition that could not change state; it keeps its state.
func (c *Controller) failedStateChange(tp topicPartition, target partitionState, reason error) {
	c.stateLog.Error("Failed to change partition state",
		zap.Stringer("partition", tp), zap.Stringer("from", c.partitionState(tp)), zap.Stringer("to", target),
		zap.Error(reason))
}

// initializeLeaderAndISR brings new partitions online for the first time: the first live replica
// leads, every live replica is in the ISR, leader epoch 0. The state znode is created (fenced)
// and the ISR members get LeaderAndIsr with isNew set.
func (c *Controller) initializeLeaderAndISR(b *requestBatch, partitions []topicPartition) error {
	cc := c.cc
	for _, tp := range partitions {
		e, ok := initialLeadership(cc.replicas(tp), cc.isLive)
		if !ok {
			c.failedStateChange(tp, onlinePartition, fmt.Errorf(
				"no assigned replica is alive: assigned replicas are [%s], live brokers are [%s]",
				joinIDs(cc.replicas(tp)), joinIDs(cc.liveBrokerIDs())))
			continue
		}
		state := leaderISRAndEpoch{
			leaderAndISR:    leaderAndISR{leader: e.leader, leaderEpoch: initialLeaderEpoch, isr: e.isr, zkVersion: initialZkVersion},
			controllerEpoch: cc.epoch,
		}
		if err := c.createPartitionState(tp, state); err != nil {
			if errors.Is(err, ErrControllerMoved) {
				return err
			}
			c.failedStateChange(tp, onlinePartition, err)
			continue
		}
		cc.leadership[tp] = state
		b.addLeaderAndISR(state.isr, tp, true)
		c.becameOnline(tp)
	}
	return nil
}

// electLeaders runs the offline leader election for partitions that have a state znode:
// re-read it, pick a leader, write the new leadership (leader epoch + 1) conditional on the
// znode's zkVersion, and tell the live replicas. A write that lost a race with the partition
// leader's own ISR update (BADVERSION) is retried from a fresh read, as Kafka does.
func (c *Controller) electLeaders(b *requestBatch, partitions []topicPartition) error {
	cc := c.cc
	for remaining := partitions; len(remaining) > 0; {
		var retry []topicPartition
		for _, tp := range remaining {
			current, ok, err := c.readPartitionState(tp)
			if err == nil && !ok {
				err = errors.New("partition state znode does not exist")
			}
			if err == nil && current.controllerEpoch > cc.epoch {
				err = fmt.Errorf("leader and ISR were written by controller epoch %d, newer than this controller's: "+
					"this controller went through a soft failure and another was elected", current.controllerEpoch)
			}
			if err != nil {
				c.failedStateChange(tp, onlinePartition, err)
				continue
			}
			replicas := cc.replicas(tp)
			unclean := false
			if !hasLiveISRMember(replicas, current.isr, cc.isLive) {
				if unclean, err = c.uncleanLeaderElectionEnabled(tp.topic); err != nil {
					c.failedStateChange(tp, onlinePartition, err)
					continue
				}
			}
			e, ok := offlineLeaderElection(replicas, current.isr, cc.isLive, unclean)
			if !ok {
				c.failedStateChange(tp, onlinePartition, fmt.Errorf(
					"failed to elect leader under strategy OfflinePartitionLeaderElectionStrategy(false): "+
						"no live replica in ISR [%s] (assigned replicas [%s], unclean election %s)",
					joinIDs(current.isr), joinIDs(replicas), enabledString(unclean)))
				continue
			}
			next := leaderISRAndEpoch{leaderAndISR: current.newLeaderAndISR(e.leader, e.isr), controllerEpoch: cc.epoch}
			version, err := c.updatePartitionState(tp, next)
			switch {
			case errors.Is(err, ErrControllerMoved):
				return err
			case errors.Is(err, zk.ErrBadVersion):
				retry = append(retry, tp)
				continue
			case err != nil:
				c.failedStateChange(tp, onlinePartition, err)
				continue
			}
			next.zkVersion = version
			if e.unclean {
				c.stateLog.Warn("Unclean leader election: the new leader was not in the ISR and records may be lost",
					zap.Stringer("partition", tp), zap.Int32("leader", e.leader), zap.Int32("deposed-leader", current.leader))
			}
			cc.leadership[tp] = next
			b.addLeaderAndISR(cc.liveReplicas(tp), tp, false)
			c.becameOnline(tp)
		}
		remaining = retry
	}
	return nil
}

// triggerOnlinePartitionStateChange tries to bring every New or Offline partition online.
func (c *Controller) triggerOnlinePartitionStateChange(b *requestBatch) error {
	return c.changePartitionStates(b, c.cc.partitionsInStates(newPartition, offlinePartition), onlinePartition)
}

func enabledString(on bool) string {
	if on {
		return "enabled"
	}
	return "disabled"
}
