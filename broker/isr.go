package broker

// ISR changes made by a partition leader, through one of two writers:
//
//   - Kafka's legacy (ZooKeeper) protocol of 0.8–2.7 (ZkIsrManager, with
//     inter.broker.protocol.version below 2.7-IV2): the leader writes the
//     partition-state znode itself, conditionally on the zkVersion it learnt
//     from the last LeaderAndIsr or from its own last write, keeping the leader
//     epoch and the controller epoch of the controller that chose it; a failed
//     condition means the controller changed the state, so the leader keeps its
//     ISR and waits for the next LeaderAndIsr. Changed partitions are then
//     announced to the controller through sequential
//     /isr_change_notification/isr_change_ znodes, batched.
//   - AlterIsr (KIP-497, 2.7-IV2 and later, alterIsrManager): the leader asks
//     the controller, which writes the znode with its own controller epoch and
//     tells the brokers; nothing is announced. Changes are queued and sent
//     together, one request in flight, and adopted when answered.

import (
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
	"go.uber.org/zap"

	"github.com/zkafka/zkafka/internal/zkclient"
	"github.com/zkafka/zkafka/kafka"
	"github.com/zkafka/zkafka/zkpaths"
)

// Kafka's propagation constants (ReplicaManager.IsrChangePropagationBlackOut
// and IsrChangePropagationInterval, checked every 2.5 s).
const (
	isrChangeCheckInterval = 2500 * time.Millisecond
	isrChangeBlackOut      = 5000 * time.Millisecond
	isrChangeMaxDelay      = 60000 * time.Millisecond
)

// maybeShrinkIsr drops from the ISR of every partition this broker leads the
// followers that have not caught up within replica.lag.time.max.ms.
func (rm *ReplicaManager) maybeShrinkIsr(now time.Time) {
	for _, p := range rm.allPartitions() {
		out := p.outOfSyncReplicas(now, rm.cfg.lagTimeMax)
		if len(out) == 0 {
			continue
		}
		rm.log.Info("Shrinking ISR: followers out of sync", zap.String("topic", p.Topic), zap.Int32("partition", p.Index),
			zap.Int32s("out-of-sync", out), zap.Int64("leader-log-end-offset", p.log.LogEndOffset()))
		rm.changeIsr(p, func(isr []int32) []int32 {
			return slices.DeleteFunc(isr, func(r int32) bool { return slices.Contains(out, r) })
		})
	}
}

// maybeExpandIsr adds a follower that caught up to the ISR.
func (rm *ReplicaManager) maybeExpandIsr(p *Partition, replica int32) {
	rm.changeIsr(p, func(isr []int32) []int32 {
		if slices.Contains(isr, replica) {
			return isr
		}
		return append(isr, replica)
	})
}

// changeIsr writes the ISR that change makes of the current one to the
// partition-state znode and adopts it once written. One change is in flight
// at a time (Kafka's isrState.isInflight): while one is, no other is
// proposed, and the maximal ISR holds the high watermark.
func (rm *ReplicaManager) changeIsr(p *Partition, change func([]int32) []int32) {
	p.isrMu.Lock()
	defer p.isrMu.Unlock()
	snap, leader := p.leaderSnapshot()
	if !leader || snap.pending {
		return
	}
	newIsr := change(slices.Clone(snap.isr))
	if slices.Equal(newIsr, snap.isr) || len(newIsr) == 0 {
		return
	}
	log := rm.log.With(zap.String("topic", p.Topic), zap.Int32("partition", p.Index), zap.Int32("leader-epoch", snap.leaderEpoch))
	state := zkpaths.LeaderAndIsr{Leader: rm.brokerID, LeaderEpoch: snap.leaderEpoch, ISR: newIsr, ControllerEpoch: snap.controllerEpoch}
	p.setPendingIsr(snap.leaderEpoch, newIsr)
	// done takes only the partition's mu: a writer may call it at once, under
	// isrMu, or later from its own goroutine.
	rm.stateWriter.writePartitionState(p.Topic, p.Index, state, snap.zkVersion, func(version int32, err error) {
		if err != nil {
			p.setPendingIsr(snap.leaderEpoch, nil)
			log.Info("Cached zkVersion not equal to that in ZooKeeper or the write failed, skip updating ISR",
				zap.Int32("cached-zk-version", snap.zkVersion), zap.Int32s("isr", snap.isr), zap.Int32s("new-isr", newIsr), zap.Error(err))
			return
		}
		if p.adoptIsr(snap.leaderEpoch, newIsr, version) {
			log.Info("ISR updated", zap.Int32s("old-isr", snap.isr), zap.Int32s("new-isr", newIsr), zap.Int32("zk-version", version))
		}
	})
}

// partitionStateWriter proposes a partition's new state, conditional on the
// state znode's zkVersion, and calls done exactly once with the znode's new
// version or the failure (zk.ErrBadVersion if the znode changed): before it
// returns (a ZooKeeper write, or a fake in unit tests) or later from another
// goroutine (AlterIsr, batched by alterIsrManager).
type partitionStateWriter interface {
	writePartitionState(topic string, partition int32, state zkpaths.LeaderAndIsr, zkVersion int32, done func(int32, error))
}

// zkPartitionStateWriter writes partition states to ZooKeeper and announces
// each change written through the propagator.
type zkPartitionStateWriter struct {
	zk        *zkclient.Client
	isrChange *isrChangePropagator
	now       func() time.Time
}

// writePartitionState sets the state znode at zkVersion and calls done with the new
// version. A BADVERSION is checked by re-reading: after a connection loss the
// first attempt may have succeeded, and the znode then holds exactly what was
// written (Kafka's ReplicationUtils.checkLeaderAndIsrZkData).
func (w zkPartitionStateWriter) writePartitionState(topic string, partition int32, state zkpaths.LeaderAndIsr, zkVersion int32, done func(int32, error)) {
	v, err := w.write(topic, partition, state, zkVersion)
	if err == nil {
		w.isrChange.record(kafka.TopicPartition{Topic: topic, Partition: partition}, w.now())
	}
	done(v, err)
}

func (w zkPartitionStateWriter) write(topic string, partition int32, state zkpaths.LeaderAndIsr, zkVersion int32) (int32, error) {
	path := zkpaths.PartitionStatePath(topic, partition)
	stat, err := w.zk.Set(path, state.Encode(), zkVersion)
	if err == nil {
		return stat.Version, nil
	}
	if !errors.Is(err, zk.ErrBadVersion) {
		return 0, err
	}
	data, stat, rerr := w.zk.Get(path)
	if rerr != nil {
		return 0, errors.Join(err, rerr)
	}
	stored, derr := zkpaths.DecodeLeaderAndIsr(data)
	if derr == nil && stored.Leader == state.Leader && stored.LeaderEpoch == state.LeaderEpoch &&
		stored.ControllerEpoch == state.ControllerEpoch && slices.Equal(stored.ISR, state.ISR) {
		return stat.Version, nil
	}
	return 0, err
}

// isrChangePropagator batches the partitions whose ISR this broker changed
// into /isr_change_notification/isr_change_ znodes: one is written once no
// change happened for isrChangeBlackOut, or isrChangeMaxDelay after the last.
type isrChangePropagator struct {
	zk  *zkclient.Client
	log *zap.Logger

	mu              sync.Mutex
	pending         map[kafka.TopicPartition]bool
	lastChange      time.Time
	lastPropagation time.Time
}

func newIsrChangePropagator(zkc *zkclient.Client, log *zap.Logger) *isrChangePropagator {
	return &isrChangePropagator{zk: zkc, log: log, pending: map[kafka.TopicPartition]bool{}, lastPropagation: time.Now()}
}

func (c *isrChangePropagator) record(tp kafka.TopicPartition, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pending[tp] = true
	c.lastChange = now
}

func (c *isrChangePropagator) maybePropagate(now time.Time) {
	c.mu.Lock()
	if len(c.pending) == 0 || now.Sub(c.lastChange) < isrChangeBlackOut && now.Sub(c.lastPropagation) < isrChangeMaxDelay {
		c.mu.Unlock()
		return
	}
	tps := make([]kafka.TopicPartition, 0, len(c.pending))
	for tp := range c.pending {
		tps = append(tps, tp)
	}
	c.pending = map[kafka.TopicPartition]bool{}
	c.lastPropagation = now
	c.mu.Unlock()
	slices.SortFunc(tps, kafka.Compare)
	data := zkpaths.IsrChangeNotificationData{Partitions: tps}.Encode()
	path, err := c.zk.Create(zkpaths.IsrChangePrefix, data, zk.FlagSequence, nil)
	if err != nil {
		c.log.Error("Writing an ISR change notification failed; the partitions are retried", zap.Error(err))
		c.mu.Lock()
		for _, tp := range tps {
			c.pending[tp] = true
		}
		c.mu.Unlock()
		return
	}
	c.log.Info("ISR changes propagated", zap.String("path", path), zap.Int("partitions", len(tps)))
}
