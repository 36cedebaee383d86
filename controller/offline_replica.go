package controller

import (
	"errors"
	"fmt"
	"slices"

	"github.com/go-zookeeper/zk"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/kafka"
)

// removeReplicaFromISR is the ZooKeeper half of a replica going offline (OfflineReplica): for
// each partition with a state znode, the replica leaves the ISR (unless it is the last member)
// and loses the leadership if it had it, with leader epoch + 1, conditional on the znode's
// zkVersion and fenced. The other replicas get LeaderAndIsr with the partition's current state,
// unless its topic is being deleted; a partition without a state znode only gets UpdateMetadata.
// A partition whose only ISR member went offline is left with leader -1 and that member as its
// ISR, so it comes back when that broker does. It decides from the cached state (see
// currentStates) and writes batched and pipelined; a write that lost a race with the leader's
// own ISR update (BADVERSION) is redone from a fresh read.
func (c *Controller) removeReplicaFromISR(b *requestBatch, replica int32, partitions []kafka.TopicPartition) error {
	cc := c.cc
	for remaining, fresh := partitions, false; len(remaining) > 0; fresh = true {
		reads := c.currentStates(remaining, fresh)
		var (
			retry   []kafka.TopicPartition
			toWrite []kafka.TopicPartition
			states  []leaderISRAndEpoch
		)
		for i, tp := range remaining {
			r := reads[i]
			switch {
			case r.err != nil:
				c.stateLog.Error("Failed to remove offline replica from ISR",
					zap.Stringer("partition", tp), zap.Int32("replica", replica), zap.Error(r.err))
				continue
			case !r.ok:
				b.addUpdateMetadata(cc.liveBrokerIDs(), []kafka.TopicPartition{tp})
				continue
			case r.state.controllerEpoch > cc.epoch:
				c.stateLog.Error("Failed to remove offline replica from ISR", zap.Stringer("partition", tp),
					zap.Int32("replica", replica), zap.Error(fmt.Errorf(
						"leader and ISR were written by controller epoch %d, newer than this controller's", r.state.controllerEpoch)))
				continue
			}
			if next, changed := withoutReplica(r.state.leaderAndISR, replica); changed {
				toWrite = append(toWrite, tp)
				states = append(states, leaderISRAndEpoch{leaderAndISR: next, controllerEpoch: cc.epoch})
				continue
			}
			if !fresh {
				// The cached ISR may lack the replica only because the leader's own change
				// has not reached the controller yet: check ZooKeeper.
				retry = append(retry, tp)
				continue
			}
			cc.leadership[tp] = r.state
			c.tellOtherReplicas(b, tp, replica)
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
				c.stateLog.Error("Failed to remove offline replica from ISR",
					zap.Stringer("partition", tp), zap.Int32("replica", replica), zap.Error(w.err))
				continue
			}
			state := states[i]
			state.zkVersion = w.zkVersion
			cc.leadership[tp] = state
			if len(toWrite) <= 100 {
				c.stateLog.Info(fmt.Sprintf("Removed replica %d from ISR of partition %s with state %s",
					replica, tp, state.leaderAndISR), zap.Stringer("partition", tp))
			}
			c.tellOtherReplicas(b, tp, replica)
		}
		if len(toWrite) > 100 {
			c.stateLog.Info("Removed replica from ISRs", zap.Int32("replica", replica), zap.Int("partitions", len(toWrite)-len(retry)))
		}
		remaining = retry
	}
	return nil
}

// tellOtherReplicas queues the partition's current leadership for its replicas other than
// replica, unless the topic is being deleted (its replicas are about to be stopped anyway).
func (c *Controller) tellOtherReplicas(b *requestBatch, tp kafka.TopicPartition, replica int32) {
	if c.cc.topicsToBeDeleted[tp.Topic] {
		b.addUpdateMetadata(c.cc.liveBrokerIDs(), []kafka.TopicPartition{tp})
		return
	}
	others := slices.DeleteFunc(slices.Clone(c.cc.replicas(tp)), func(r int32) bool { return r == replica })
	b.addLeaderAndISR(others, tp, false)
}
