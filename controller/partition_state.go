package controller

import (
	"errors"
	"fmt"
	"slices"

	"github.com/go-zookeeper/zk"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/kafka"
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
func (c *Controller) partitionState(tp kafka.TopicPartition) partitionState {
	if s, ok := c.cc.partitionStates[tp]; ok {
		return s
	}
	return nonExistentPartition
}

// electionStrategy names Kafka's leader election strategies (PartitionLeaderElectionStrategy).
type electionStrategy int8

const (
	offlineElection            electionStrategy = iota // new or offline partitions, broker failure
	reassignElection                                   // reassignment moving the leader into the target replicas
	preferredElection                                  // preferred-replica election, auto-rebalance
	controlledShutdownElection                         // moving leaders off a stopping broker
)

func (s electionStrategy) String() string {
	switch s {
	case offlineElection:
		return "OfflinePartitionLeaderElectionStrategy"
	case reassignElection:
		return "ReassignPartitionLeaderElectionStrategy"
	case preferredElection:
		return "PreferredReplicaPartitionLeaderElectionStrategy"
	case controlledShutdownElection:
		return "ControlledShutdownPartitionLeaderElectionStrategy"
	}
	return "UnknownElectionStrategy"
}

// strategy is a leader election strategy; allowUnclean forces an unclean offline election when
// no ISR member is online (ElectLeaders with UNCLEAN), whatever the topic's config says.
type strategy struct {
	kind         electionStrategy
	allowUnclean bool
}

// changePartitionStates moves partitions to target (Kafka's PartitionStateMachine
// handleStateChanges with the offline leader election strategy), queuing the requests the
// changes need in b. Partitions whose current state may not lead to target are logged and
// skipped; partitions whose change fails keep their state. Only ErrControllerMoved is returned.
func (c *Controller) changePartitionStates(b *requestBatch, partitions []kafka.TopicPartition, target partitionState) error {
	_, err := c.changePartitionStatesWith(b, partitions, target, strategy{kind: offlineElection})
	return err
}

// changePartitionStatesWith is changePartitionStates with a chosen election strategy for moves
// to OnlinePartition. It returns why each partition that did not reach target failed.
func (c *Controller) changePartitionStatesWith(b *requestBatch, partitions []kafka.TopicPartition, target partitionState, strat strategy) (map[kafka.TopicPartition]error, error) {
	failed := map[kafka.TopicPartition]error{}
	var valid []kafka.TopicPartition
	for _, tp := range partitions {
		from := c.partitionState(tp)
		if !validPartitionTransition(from, target) {
			c.stateLog.Error("Invalid partition state transition; skipped",
				zap.Stringer("partition", tp), zap.Stringer("from", from), zap.Stringer("to", target))
			failed[tp] = fmt.Errorf("partition %s cannot move from %s to %s", tp, from, target)
			continue
		}
		valid = append(valid, tp)
	}
	verbose := len(valid) <= 100
	switch target {
	case newPartition:
		for _, tp := range valid {
			if verbose {
				c.stateLog.Info(fmt.Sprintf("Changed partition %s state from %s to %s with assigned replicas %s",
					tp, c.partitionState(tp), target, joinIDs(c.cc.replicas(tp))), zap.Stringer("partition", tp))
			}
			c.cc.partitionStates[tp] = newPartition
		}
	case onlinePartition:
		var uninitialized, toElect []kafka.TopicPartition
		for _, tp := range valid {
			if c.partitionState(tp) == newPartition {
				uninitialized = append(uninitialized, tp)
			} else {
				toElect = append(toElect, tp)
			}
		}
		if err := c.initializeLeaderAndISR(b, uninitialized, failed); err != nil {
			return failed, err
		}
		if err := c.electLeaders(b, toElect, strat, failed); err != nil {
			return failed, err
		}
	case offlinePartition, nonExistentPartition:
		for _, tp := range valid {
			if verbose {
				c.stateLog.Info(fmt.Sprintf("Changed partition %s state from %s to %s", tp, c.partitionState(tp), target),
					zap.Stringer("partition", tp))
			}
			c.cc.partitionStates[tp] = target
		}
	}
	if !verbose {
		c.stateLog.Info("Changed partition states", zap.Int("partitions", len(valid)-len(failed)), zap.Stringer("to", target))
	}
	return failed, nil
}

// becameOnline records a successful move to OnlinePartition.
func (c *Controller) becameOnline(tp kafka.TopicPartition, verbose bool) {
	if verbose {
		c.stateLog.Info(fmt.Sprintf("Changed partition %s from %s to %s with state %s",
			tp, c.partitionState(tp), onlinePartition, c.cc.leadership[tp].leaderAndISR), zap.Stringer("partition", tp))
	}
	c.cc.partitionStates[tp] = onlinePartition
}

// failedStateChange logs a partition that could not change state and records why; it keeps its
// state.
func (c *Controller) failedStateChange(failed map[kafka.TopicPartition]error, tp kafka.TopicPartition, target partitionState, reason error) {
	c.stateLog.Error("Failed to change partition state",
		zap.Stringer("partition", tp), zap.Stringer("from", c.partitionState(tp)), zap.Stringer("to", target),
		zap.Error(reason))
	failed[tp] = reason
}

// initializeLeaderAndISR brings new partitions online for the first time: the first live replica
// leads, every live replica is in the ISR, leader epoch 0. The state znodes are created (fenced,
// pipelined) and the ISR members get LeaderAndIsr with isNew set.
func (c *Controller) initializeLeaderAndISR(b *requestBatch, partitions []kafka.TopicPartition, failed map[kafka.TopicPartition]error) error {
	cc := c.cc
	var (
		toCreate []kafka.TopicPartition
		states   []leaderISRAndEpoch
	)
	for _, tp := range partitions {
		e, ok := initialLeadership(cc.replicas(tp), cc.isOnline)
		if !ok {
			c.failedStateChange(failed, tp, onlinePartition, fmt.Errorf(
				"no assigned replica is alive: assigned replicas are [%s], live brokers are [%s]",
				joinIDs(cc.replicas(tp)), joinIDs(cc.onlineBrokerIDs())))
			continue
		}
		toCreate = append(toCreate, tp)
		states = append(states, leaderISRAndEpoch{
			leaderAndISR:    leaderAndISR{leader: e.leader, leaderEpoch: initialLeaderEpoch, isr: e.isr, zkVersion: initialZkVersion},
			controllerEpoch: cc.epoch,
		})
	}
	errs := c.createPartitionStates(toCreate, states)
	for i, tp := range toCreate {
		if err := errs[i]; err != nil {
			if errors.Is(err, ErrControllerMoved) {
				return err
			}
			c.failedStateChange(failed, tp, onlinePartition, err)
			continue
		}
		cc.leadership[tp] = states[i]
		b.addLeaderAndISR(states[i].isr, tp, true)
		c.becameOnline(tp, len(toCreate) <= 100)
	}
	return nil
}

// electLeaders runs a leader election for partitions that have a state znode: take the current
// leadership (cached, see currentStates), pick a leader with the strategy, write the new
// leadership (leader epoch + 1) conditional on the znode's zkVersion (batched and pipelined), and
// tell the strategy's recipients. A write that lost a race with the partition leader's own ISR
// update (BADVERSION) is retried from a fresh read, as Kafka does.
func (c *Controller) electLeaders(b *requestBatch, partitions []kafka.TopicPartition, strat strategy, failed map[kafka.TopicPartition]error) error {
	cc := c.cc
	uncleanByTopic := map[string]bool{}
	verbose := len(partitions) <= 100
	for remaining, fresh := partitions, false; len(remaining) > 0; fresh = true {
		reads := c.currentStates(remaining, fresh)
		var (
			retry      []kafka.TopicPartition
			toWrite    []kafka.TopicPartition
			states     []leaderISRAndEpoch
			recipients [][]int32
		)
		for i, tp := range remaining {
			current, ok, err := reads[i].state, reads[i].ok, reads[i].err
			if err == nil && !ok {
				err = errors.New("partition state znode does not exist")
			}
			if err == nil && current.controllerEpoch > cc.epoch {
				err = fmt.Errorf("leader and ISR were written by controller epoch %d, newer than this controller's: "+
					"this controller went through a soft failure and another was elected", current.controllerEpoch)
			}
			if err != nil {
				c.failedStateChange(failed, tp, onlinePartition, err)
				continue
			}
			e, to, err := c.electLeader(tp, current, strat, uncleanByTopic)
			if err != nil && !fresh {
				// The cached ISR may be behind the leader's own changes: decide again from
				// ZooKeeper before calling the election failed.
				retry = append(retry, tp)
				continue
			}
			if err != nil {
				c.failedStateChange(failed, tp, onlinePartition, err)
				continue
			}
			toWrite = append(toWrite, tp)
			states = append(states, leaderISRAndEpoch{leaderAndISR: current.newLeaderAndISR(e.leader, e.isr), controllerEpoch: cc.epoch})
			recipients = append(recipients, to)
			if e.unclean {
				c.stateLog.Warn("Unclean leader election: the new leader was not in the ISR and records may be lost",
					zap.Stringer("partition", tp), zap.Int32("leader", e.leader), zap.Int32("deposed-leader", current.leader))
			}
		}
		writes := c.updatePartitionStates(toWrite, states)
		for i, tp := range toWrite {
			w := writes[i]
			switch {
			case errors.Is(w.err, ErrControllerMoved):
				return w.err
			case errors.Is(w.err, zk.ErrBadVersion):
				retry = append(retry, tp)
				continue
			case w.err != nil:
				c.failedStateChange(failed, tp, onlinePartition, w.err)
				continue
			}
			next := states[i]
			next.zkVersion = w.zkVersion
			cc.leadership[tp] = next
			b.addLeaderAndISR(recipients[i], tp, false)
			c.becameOnline(tp, verbose)
		}
		remaining = retry
	}
	return nil
}

// electLeader applies a strategy to one partition's current leadership and returns the outcome and
// who must get LeaderAndIsr. uncleanByTopic caches topic configs read during one election round.
func (c *Controller) electLeader(tp kafka.TopicPartition, current leaderISRAndEpoch, strat strategy, uncleanByTopic map[string]bool) (election, []int32, error) {
	cc := c.cc
	replicas := cc.replicas(tp)
	switch strat.kind {
	case reassignElection:
		target := c.targetReplicas(tp)
		if e, ok := reassignPartitionLeader(target, current.isr, cc.isOnline); ok {
			return e, target, nil
		}
	case preferredElection:
		if e, ok := preferredReplicaLeader(replicas, current.isr, cc.isOnline); ok {
			return e, replicas, nil
		}
	case controlledShutdownElection:
		e, ok := controlledShutdownLeader(replicas, current.isr, cc.isLive, func(r int32) bool { return cc.shuttingDown[r] })
		if ok {
			return e, slices.DeleteFunc(slices.Clone(replicas), func(r int32) bool { return !cc.isLive(r) }), nil
		}
	default:
		unclean := strat.allowUnclean
		if !unclean && !hasLiveISRMember(replicas, current.isr, cc.isOnline) {
			enabled, ok := uncleanByTopic[tp.Topic]
			if !ok {
				var err error
				if enabled, err = c.uncleanLeaderElectionEnabled(tp.Topic); err != nil {
					return election{}, nil, err
				}
				uncleanByTopic[tp.Topic] = enabled
			}
			unclean = enabled
		}
		if e, ok := offlineLeaderElection(replicas, current.isr, cc.isOnline, unclean); ok {
			return e, cc.liveReplicas(tp), nil
		}
		return election{}, nil, fmt.Errorf("failed to elect leader for partition %s under strategy %s(%t): "+
			"no live replica in ISR [%s] (assigned replicas [%s], unclean election %s): %w",
			tp, strat.kind, strat.allowUnclean, joinIDs(current.isr), joinIDs(replicas), enabledString(unclean), errNoEligibleLeader)
	}
	return election{}, nil, fmt.Errorf("failed to elect leader for partition %s under strategy %s: "+
		"ISR [%s], assigned replicas [%s], live brokers [%s]: %w",
		tp, strat.kind, joinIDs(current.isr), joinIDs(replicas), joinIDs(cc.onlineBrokerIDs()), errNoEligibleLeader)
}

// targetReplicas is a partition's replica set once its reassignment (if any) completes: the
// assigned replicas minus those being removed.
func (c *Controller) targetReplicas(tp kafka.TopicPartition) []int32 {
	t, ok := c.cc.topics[tp.Topic]
	if !ok {
		return nil
	}
	removing := t.assignment.RemovingReplicas[tp.Partition]
	return slices.DeleteFunc(slices.Clone(t.assignment.Partitions[tp.Partition]), func(r int32) bool { return slices.Contains(removing, r) })
}

// triggerOnlinePartitionStateChange tries to bring every New or Offline partition online,
// except those of topics being deleted.
func (c *Controller) triggerOnlinePartitionStateChange(b *requestBatch) error {
	parts := slices.DeleteFunc(c.cc.partitionsInStates(newPartition, offlinePartition), func(tp kafka.TopicPartition) bool {
		return c.cc.topicsToBeDeleted[tp.Topic]
	})
	return c.changePartitionStates(b, parts, onlinePartition)
}

func enabledString(on bool) string {
	if on {
		return "enabled"
	}
	return "disabled"
}
