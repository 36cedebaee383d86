package controller

import (
	"errors"
	"fmt"
	"slices"

	"github.com/go-zookeeper/zk"
	"go.uber.org/zap"
)

// removeReplicaFromISR applies what Kafka's replica state machine does to a replica that went
// offline (OfflineReplica), minus StopReplica, which cannot reach a dead broker anyway: for each
// partition with a state znode, the replica leaves the ISR (unless it is the last member) and
// loses the leadership if it had it, with leader epoch + 1, conditional on the znode's zkVersion
// and fenced. The other replicas get LeaderAndIsr with the partition's current state. A partition
// whose only ISR member died is left with leader -1 and that member as its ISR, so it comes back
// when that broker does.
func (c *Controller) removeReplicaFromISR(b *requestBatch, replica int32, partitions []topicPartition) error {
	cc := c.cc
	for remaining := partitions; len(remaining) > 0; {
		var retry []topicPartition
		for _, tp := range remaining {
			current, ok, err := c.readPartitionState(tp)
			if err != nil {
				c.stateLog.Error("Failed to remove offline replica from ISR",
					zap.Stringer("partition", tp), zap.Int32("replica", replica), zap.Error(err))
				continue
			}
			if !ok {
				continue // never had a leader: UpdateMetadata is all there is to send
			}
			if current.controllerEpoch > cc.epoch {
				c.stateLog.Error("Failed to remove offline replica from ISR", zap.Stringer("partition", tp),
					zap.Int32("replica", replica), zap.Error(fmt.Errorf(
						"leader and ISR were written by controller epoch %d, newer than this controller's", current.controllerEpoch)))
				continue
			}
			state := current
			if next, changed := withoutReplica(current.leaderAndISR, replica); changed {
				state = leaderISRAndEpoch{leaderAndISR: next, controllerEpoch: cc.epoch}
				version, err := c.updatePartitionState(tp, state)
				switch {
				case errors.Is(err, ErrControllerMoved):
					return err
				case errors.Is(err, zk.ErrBadVersion):
					retry = append(retry, tp)
					continue
				case err != nil:
					c.stateLog.Error("Failed to remove offline replica from ISR",
						zap.Stringer("partition", tp), zap.Int32("replica", replica), zap.Error(err))
					continue
				}
				state.zkVersion = version
				c.stateLog.Info(fmt.Sprintf("Removed offline replica %d from ISR of partition %s with state %s",
					replica, tp, state.leaderAndISR), zap.Stringer("partition", tp))
			}
			cc.leadership[tp] = state
			b.addLeaderAndISR(slices.DeleteFunc(slices.Clone(cc.replicas(tp)), func(r int32) bool { return r == replica }), tp, false)
		}
		remaining = retry
	}
	return nil
}
