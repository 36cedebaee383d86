package controller

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/go-zookeeper/zk"
	"github.com/twmb/franz-go/pkg/kerr"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/kafka"
)

// AlterIsr (KIP-497, inter.broker.protocol.version 2.7-IV2 and later): a partition leader asks
// the controller to change its ISR instead of writing the state znode itself. The controller
// writes the znode (conditional on the version the leader knows, with its own controller epoch
// and the /controller_epoch fence), tells every broker through UpdateMetadata, and completes
// reassignments whose new replicas have joined. /isr_change_notification stays unused, and no
// watch is kept on reassigning partitions' state znodes: the controller learns of their ISR
// changes because it makes them.

// IsrProposal is one partition's proposed ISR: the leader's leader epoch and the zkVersion of the
// state it changes (Kafka's LeaderAndIsr with zkVersion as currentIsrVersion).
type IsrProposal struct {
	LeaderEpoch int32
	ISR         []int32
	ZkVersion   int32
}

// IsrResult is one partition's answer: the leadership now stored, or Err wrapping
// kerr.UnknownTopicOrPartition, kerr.FencedLeaderEpoch, kerr.OperationNotAttempted or
// kerr.InvalidUpdateVersion.
type IsrResult struct {
	Leader      int32
	LeaderEpoch int32
	ISR         []int32
	ZkVersion   int32
	Err         error
}

// AlterIsr applies broker's ISR proposals and returns each partition's result. Errors:
// kerr.NotController, kerr.StaleBrokerEpoch (the broker is not registered, or with another
// epoch).
func (c *Controller) AlterIsr(ctx context.Context, broker int32, brokerEpoch int64, proposals map[kafka.TopicPartition]IsrProposal) (map[kafka.TopicPartition]IsrResult, error) {
	return call(ctx, c, "AlterIsrReceived", func() (map[kafka.TopicPartition]IsrResult, error) {
		return c.doAlterIsr(broker, brokerEpoch, proposals)
	})
}

func (c *Controller) doAlterIsr(broker int32, brokerEpoch int64, proposals map[kafka.TopicPartition]IsrProposal) (map[kafka.TopicPartition]IsrResult, error) {
	cc := c.cc
	lb, ok := cc.liveBrokers[broker]
	if !ok {
		c.log.Info("Ignoring AlterIsr from an unknown broker", zap.Int32("broker", broker))
		return nil, fmt.Errorf("broker %d is not registered: %w", broker, kerr.StaleBrokerEpoch)
	}
	if lb.epoch != brokerEpoch {
		c.log.Info("Ignoring AlterIsr with a stale broker epoch", zap.Int32("broker", broker), zap.Int64("broker-epoch", brokerEpoch))
		return nil, fmt.Errorf("broker %d sent epoch %d, its registration's is %d: %w", broker, brokerEpoch, lb.epoch, kerr.StaleBrokerEpoch)
	}
	results := make(map[kafka.TopicPartition]IsrResult, len(proposals))
	tps := make([]kafka.TopicPartition, 0, len(proposals))
	for tp := range proposals {
		tps = append(tps, tp)
	}
	slices.SortFunc(tps, kafka.Compare)
	// The changes are written together, in fenced transactions issued pipelined: a leader's
	// AlterIsr carries every ISR change it has pending, thousands when a broker rejoins.
	var toWrite []kafka.TopicPartition
	var states []leaderISRAndEpoch
	for _, tp := range tps {
		p := proposals[tp]
		current, ok := cc.leadership[tp]
		switch {
		case !ok:
			results[tp] = IsrResult{Err: fmt.Errorf("%s: %w", tp, kerr.UnknownTopicOrPartition)}
			continue
		case p.LeaderEpoch < current.leaderEpoch:
			results[tp] = IsrResult{Err: fmt.Errorf("%s: leader epoch %d is older than %d: %w", tp, p.LeaderEpoch, current.leaderEpoch, kerr.FencedLeaderEpoch)}
			continue
		case current.leader == broker && p.LeaderEpoch == current.leaderEpoch && slices.Equal(p.ISR, current.isr):
			// Already so: the answer is the stored state (Kafka's equalsIgnoreZk).
			results[tp] = resultOf(current)
			continue
		}
		// 2.8 takes any ISR here, so a follower still fetching in the moment between its
		// controlled shutdown and its deregistration could be added back and stay named in the ISR
		// after it is gone. Kafka 3.3 (KIP-841) refuses such a replica; so does zkafka, with the
		// error 3.3 gives AlterIsr versions that lack INELIGIBLE_REPLICA.
		if r, ok := c.ineligibleJoiner(p.ISR, current.isr); ok {
			results[tp] = IsrResult{Err: fmt.Errorf("%s: broker %d may not join the ISR (not registered or shutting down): %w", tp, r, kerr.OperationNotAttempted)}
			continue
		}
		toWrite = append(toWrite, tp)
		states = append(states, leaderISRAndEpoch{
			leaderAndISR:    leaderAndISR{leader: broker, leaderEpoch: p.LeaderEpoch, isr: slices.Clone(p.ISR), zkVersion: p.ZkVersion},
			controllerEpoch: cc.epoch,
		})
	}
	var updated []kafka.TopicPartition
	for i, w := range c.updatePartitionStates(toWrite, states) {
		tp, next := toWrite[i], states[i]
		if errors.Is(w.err, ErrControllerMoved) {
			return nil, w.err
		}
		if errors.Is(w.err, zk.ErrBadVersion) {
			c.log.Info("Failed to update ISR: bad zkVersion", zap.Stringer("partition", tp), zap.Int32s("isr", next.isr), zap.Int32("zk-version", next.zkVersion))
			results[tp] = IsrResult{Err: fmt.Errorf("%s: zkVersion %d is not the state's: %w", tp, next.zkVersion, kerr.InvalidUpdateVersion)}
			continue
		}
		if w.err != nil {
			return nil, w.err
		}
		next.zkVersion = w.zkVersion
		cc.leadership[tp] = next
		c.stateLog.Info("ISR changed by the leader's AlterIsr", zap.Stringer("partition", tp), zap.Stringer("leader-and-isr", next.leaderAndISR))
		results[tp] = resultOf(next)
		updated = append(updated, tp)
	}
	b := c.newBatch()
	b.addUpdateMetadata(cc.liveBrokerIDs(), tps)
	b.send()
	var reassigning []kafka.TopicPartition
	for _, tp := range updated {
		if cc.isReassigning(tp) {
			reassigning = append(reassigning, tp)
		}
	}
	if err := c.maybeCompleteReassignments(reassigning); err != nil {
		return nil, err
	}
	return results, nil
}

// ineligibleJoiner returns a broker the proposed ISR adds that is not registered or is shutting
// down. Members already in the ISR are not checked: removing a dead one is the broker-failure
// path's work, and a leader's shrink must not wait for it.
func (c *Controller) ineligibleJoiner(proposed, current []int32) (int32, bool) {
	for _, r := range proposed {
		if !slices.Contains(current, r) && !c.cc.isOnline(r) {
			return r, true
		}
	}
	return 0, false
}

func resultOf(l leaderISRAndEpoch) IsrResult {
	return IsrResult{Leader: l.leader, LeaderEpoch: l.leaderEpoch, ISR: slices.Clone(l.isr), ZkVersion: l.zkVersion}
}
